"""The hooks' defaults, in a module of their own: the click-free start-up reads them
without loading the decision's machinery."""

from __future__ import annotations

#: Blocks in a row before a stop is let through regardless.
DEFAULT_MAX_BLOCKS = 3
#: Budget for one verification, under the 600 s the installed hook is given
#: (`assay.hooks.settings.HOOK_TIMEOUT_S`): the hook must answer (and block) before its
#: caller kills it, which would let the stop through.
DEFAULT_DEADLINE_S = 540.0

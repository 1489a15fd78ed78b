"""A tool that cannot start because it imports the project under verification.

pytest imports iniconfig, pluggy and packaging; mypy imports typing_extensions. Verifying
one of those projects with its own editable install, a module of it that fails to load
(a syntax error, a name or index error at import) breaks the tool before it can say its
version: the probe's traceback ends in the project's own file. That is the project failing
(every test run the maintainers make fails the same way), not a missing toolchain, and it
is judged so: FAILED, at that file and line.

A module that is not found (`ModuleNotFoundError`, `ImportError`) is left to the probe's
own failure: a missing dependency is one explanation, and the environment is not the
project's code. So is a traceback that ends in an environment (`.venv`, `.tox`,
`node_modules`): the installed tool itself is broken.
"""

from __future__ import annotations

import os
from pathlib import Path

from assay.evidence import Diagnostic
from assay.probe import ProbeFailure
from assay.source_layout import CACHE_DIRS, ENV_DIRS

__all__ = ["breaking_module"]

#: Import failures that may be the environment's (a dependency never installed).
_NOT_FOUND = frozenset({"ModuleNotFoundError", "ImportError"})


def breaking_module(failure: ProbeFailure, root: Path) -> Diagnostic | None:
    """The error in the project's own code (a file of `root`, outside its environments)
    that stopped the tool's version command, or None when it was something else."""
    result = getattr(failure, "result", None)
    if result is None or result.exit_code in (None, 0) or result.timed_out:
        return None
    from assay.parsers.crash import crash_diagnostics

    crash = next(iter(crash_diagnostics(result.stderr.text, str(root), failure.tool)), None)
    if crash is None or crash.file is None or crash.code in _NOT_FOUND:
        return None
    path = crash.file
    if os.path.isabs(path) or path.startswith("../") or not path.endswith(".py"):
        return None  # not inside the workspace, or not a Python module
    first = path.split("/", 1)[0]
    if first in ENV_DIRS or first in CACHE_DIRS or "site-packages" in path.split("/"):
        return None
    return crash

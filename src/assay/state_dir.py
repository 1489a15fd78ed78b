"""Where assay keeps what outlives a run: the verdict cache and the probe record.

One per-user directory, shared by both, so that neither has to import the other to
find it. Scratch space for a single run is elsewhere (`assay.scratch`).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing's: the warm server's client must not load typing
if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["CACHE_DIR_VAR", "cache_dir_name", "default_cache_dir"]

#: Environment variable naming the directory (overrides the XDG default).
CACHE_DIR_VAR = "ASSAY_CACHE_DIR"


def default_cache_dir() -> Path:
    """`$ASSAY_CACHE_DIR`, else `$XDG_CACHE_HOME/assay`, else `~/.cache/assay`."""
    from pathlib import Path

    return Path(cache_dir_name())


def cache_dir_name() -> str:
    """`default_cache_dir()` as a string, for callers that must not load pathlib (the
    warm server's client runs before anything else is imported)."""
    explicit = os.environ.get(CACHE_DIR_VAR)
    if explicit:
        return explicit
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = xdg if xdg else os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "assay")

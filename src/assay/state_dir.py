"""Where assay keeps what outlives a run: the verdict cache and the probe record.

One per-user directory, shared by both, so that neither has to import the other to
find it. Scratch space for a single run is elsewhere (`assay.scratch`).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CACHE_DIR_VAR", "default_cache_dir"]

#: Environment variable naming the directory (overrides the XDG default).
CACHE_DIR_VAR = "ASSAY_CACHE_DIR"


def default_cache_dir() -> Path:
    """`$ASSAY_CACHE_DIR`, else `$XDG_CACHE_HOME/assay`, else `~/.cache/assay`."""
    explicit = os.environ.get(CACHE_DIR_VAR)
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "assay"

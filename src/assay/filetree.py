"""Listing the files of a directory tree: relative paths, links not followed."""

from __future__ import annotations

import os
from collections.abc import Iterable

#: Directories that are never part of the code: VCS state, installed dependencies, caches.
DEFAULT_SKIP_DIRS: frozenset[str] = frozenset(
    {
        ".git",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
    }
)


def walk_files(
    root: str | os.PathLike[str], skip_dirs: Iterable[str] = DEFAULT_SKIP_DIRS
) -> list[str]:
    """Sorted `/`-separated paths of every non-directory entry under `root` (symlinks
    included as entries, never followed), skipping directories named in `skip_dirs`."""
    skip = frozenset(skip_dirs)
    found: list[str] = []
    stack = [""]
    while stack:
        rel = stack.pop()
        with os.scandir(os.path.join(root, rel) if rel else root) as entries:
            for entry in entries:
                child = f"{rel}/{entry.name}" if rel else entry.name
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in skip:
                        stack.append(child)
                else:
                    found.append(child)
    found.sort()
    return found

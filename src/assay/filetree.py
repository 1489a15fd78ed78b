"""Listing the files of a directory tree: relative paths, links not followed."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator

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


def walk(
    top: str | os.PathLike[str], onerror: Callable[[OSError], None] | None = None
) -> Iterator[tuple[str, list[str], list[str]]]:
    """`os.walk(top)`, top-down, without recursion: a hostile tree thousands of folders
    deep ends 3.11's recursive `os.walk` in a RecursionError. As there, a link to a
    directory is named among the directories and not walked into, and the caller may
    prune the directory names it is given."""
    stack = [os.fspath(top)]
    while stack:
        here = stack.pop()
        dirs: list[str] = []
        files: list[str] = []
        links: set[str] = set()
        try:
            with os.scandir(here) as entries:
                for entry in entries:
                    try:
                        is_dir = entry.is_dir()
                    except OSError:
                        is_dir = False
                    (dirs if is_dir else files).append(entry.name)
                    if is_dir and entry.is_symlink():
                        links.add(entry.name)
        except OSError as exc:
            if onerror is not None:
                onerror(exc)
            continue
        yield here, dirs, files
        stack.extend(os.path.join(here, d) for d in reversed(dirs) if d not in links)

"""What a workspace holds of its source tree: one walk, and one rule for every entry.

The rule, applied by `scan_source`:

- cache directories (`CACHE_DIRS`) are left out wherever they are, and a link or file of
  their names too: tools rebuild them, and what the tree put there decides what runs;
- environment directories (`ENV_DIRS`) at the project root, or directly inside a package
  root (a directory holding one of `PACKAGE_MANIFESTS`), are not copied but linked: the
  workspace holds a symlink to the source's directory, which a backend that can (bubblewrap)
  shows read-only. Checks still run `.venv/bin/pytest` or `node_modules/.bin/tsc` by the
  path they were planned with;
- build output (`BUILD_OUTPUT_DIRS`) at those same places is left out: a build writes there,
  so it cannot be shared, and it rebuilds what it needs;
- `.git` at the root is linked when the backend makes links read-only, copied otherwise;
- everything else is copied. Symlinks are copied as symlinks, never followed, and a symlink
  is never treated as an environment or `.git`.

The workspace (`assay.sandbox.provision`) and the verdict cache's key
(`cache.workspace_digest`) both take their listing from here, so they can never disagree
about what is in a workspace; and a cache hit keys the tree without loading what makes one.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

#: Caches tools rebuild on demand: left out at any depth.
CACHE_DIRS: frozenset[str] = frozenset(
    {"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
)
#: Installed environments: linked to the source's, at the project root and at package roots.
ENV_DIRS: frozenset[str] = frozenset({".venv", "venv", "node_modules", ".tox", ".nox"})
#: Caches tools write inside an environment directory (vite's results and pre-bundles, the
#: `find-cache-dir` convention of babel-loader, ava and nyc): a backend that shows the
#: environment read-only gives each run these empty and writable instead, so a runner that
#: cannot write its cache does not fail a passing suite.
ENV_WRITABLE_CACHES: dict[str, frozenset[str]] = {
    "node_modules": frozenset({".cache", ".vite", ".vite-temp", ".vitest"}),
}
#: Build output a check writes into: left out at the project root and at package roots.
BUILD_OUTPUT_DIRS: frozenset[str] = frozenset({"target"})
#: Files that make the directory holding them a package root (a member of a monorepo).
PACKAGE_MANIFESTS: frozenset[str] = frozenset(
    {"pyproject.toml", "setup.py", "setup.cfg", "package.json", "Cargo.toml"}
)
#: The repository's own state, looked for at the project root only.
GIT_DIR = ".git"
#: What a git hook installer writes in a `.git` a backend shows read-only: the hooks, and
#: in info/ its own state (lefthook's checksum, run from npm's `prepare` by `npm ci`). A
#: clone's are writable, so a backend gives each run these private and writable instead,
#: info/ keeping the host's entries read-only (git reads info/exclude).
GIT_WRITABLE_DIRS: frozenset[str] = frozenset({"hooks", "info"})
GIT_KEPT_DIRS: frozenset[str] = frozenset({"info"})


def in_build_output(rel: str, files: Collection[str]) -> bool:
    """Whether `rel`, one of `files` (a tree's `/`-separated paths), lies in build output
    `scan_source` leaves out: a `target` directory at the root or beside a package
    manifest (what a workspace never holds, and a build makes anew)."""
    parts = rel.split("/")
    for at, name in enumerate(parts[:-1]):
        if name in BUILD_OUTPUT_DIRS:
            parent = "/".join(parts[:at])
            if not parent or any(f"{parent}/{m}" in files for m in PACKAGE_MANIFESTS):
                return True
    return False


@dataclass(frozen=True, slots=True)
class SourceLayout:
    """One walk of a source tree, sorted by the module's rule (`/`-separated relative paths)."""

    dirs: tuple[str, ...]
    """Directories to create, each after its parent."""
    files: tuple[str, ...]
    """Files and symlinks to copy."""
    linked: tuple[str, ...]
    """Entries the workspace links to instead of copying."""
    skipped: tuple[str, ...]
    """Directories left out."""
    size: int
    """Bytes a copy of `files` takes: a sparse file's holes are none (copied as holes)."""
    stats: Mapping[str, os.stat_result] = field(compare=False, repr=False)
    """Each of `files`' own stat (a link's, not its target's), as the walk saw it."""


#: What changes whenever a file's content does: the change time cannot be set by anyone
#: but the kernel, and a file replaced is a new inode (`file_identity`).
FileIdentity = tuple[int, int, int, int, int, int]


def file_identity(info: os.stat_result) -> FileIdentity:
    """A file's device, inode, mode, size, modification and change time."""
    return (
        info.st_dev,
        info.st_ino,
        info.st_mode,
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
    )


def scan_source(source: str | os.PathLike[str], *, link_git: bool) -> SourceLayout:
    """Walk `source` once and sort every entry: copy, descend, link or leave out."""
    root = Path(source)
    dirs: list[str] = []
    files: list[str] = []
    linked: list[str] = []
    skipped: list[str] = []
    stats: dict[str, os.stat_result] = {}
    size = 0
    # A file with several names in the tree takes its bytes once in the copy too
    # (`provision.copy_layout` links its other names to the first one copied).
    counted: set[tuple[int, int]] = set()
    stack = [""]
    while stack:
        rel = stack.pop()
        with os.scandir(root / rel if rel else root) as listing:
            entries = list(listing)
        at_root = rel == ""
        package_root = at_root or any(
            e.name in PACKAGE_MANIFESTS and not e.is_dir(follow_symlinks=False) for e in entries
        )
        for entry in entries:
            name = entry.name
            child = f"{rel}/{name}" if rel else name
            if at_root and link_git and name == GIT_DIR and not entry.is_symlink():
                linked.append(child)  # the repository's `.git`, a directory or a worktree's file
            elif name in CACHE_DIRS:
                # Whatever it is: a `__pycache__` link into the tree's own files would have
                # the interpreter believe a `.pyc` of the tree's over its source.
                skipped.append(child)
            elif not entry.is_dir(follow_symlinks=False):
                # A file, or a link: copied as a link whatever it points to.
                info = entry.stat(follow_symlinks=False)
                files.append(child)
                stats[child] = info
                if info.st_nlink > 1 and stat.S_ISREG(info.st_mode):
                    if (info.st_dev, info.st_ino) in counted:
                        continue
                    counted.add((info.st_dev, info.st_ino))
                size += min(info.st_size, info.st_blocks * 512)
            elif package_root and name in BUILD_OUTPUT_DIRS:
                skipped.append(child)
            elif package_root and name in ENV_DIRS:
                linked.append(child)
            else:
                dirs.append(child)
                stack.append(child)
    return SourceLayout(
        tuple(dirs), tuple(files), tuple(sorted(linked)), tuple(sorted(skipped)), size, stats
    )

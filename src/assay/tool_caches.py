"""Warm tool caches kept by assay outside the workspace, one per repository.

Each workspace is a fresh copy with a fresh HOME, so a tool's own cache would start cold on
every run. A `ToolCache` names a directory of its own under assay's state directory for
each repository path and tool installation (`probe_record.fingerprint` of the binary the
checks run), which the sandbox may write and the tool is pointed at through a variable (one
the check sets itself still wins). It is never made for a run judged against a base
(`--base`, `--protect`): a change must not be able to influence what it is judged with.
Why each tool's cache cannot decide a verdict wrongly is said where it is declared
(`assay.mypy_cache`, `assay.go_cache`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from assay.evidence import Check
from assay.filetree import walk
from assay.state_dir import default_cache_dir


@dataclass(frozen=True, slots=True)
class ToolCache:
    """How one tool's warm caches are kept."""

    tool: str
    """The checks' tool (`Check.tool`) that uses it."""
    variable: str
    """The environment variable the tool reads its cache directory from."""
    subdir: str
    """Where under assay's state directory the caches live."""
    kept: int
    """Caches kept; the least recently used are removed past it."""
    max_bytes: int | None = None
    """A cache past this size is emptied (the tool starts cold once); None: unbounded."""
    per_check: bool = False
    """Give each check a directory of its own under the cache: for a tool whose cache is
    not safe to write from two processes at once (mypy's), as checks run side by side."""

    def checks(self, checks: Sequence[Check]) -> list[Check]:
        """The checks that run this tool."""
        return [check for check in checks if check.tool == self.tool]

    def directory_for(
        self,
        root: Path,
        checks: Sequence[Check],
        *,
        sandbox: str,
        judged_against_base: bool,
        state_dir: str | os.PathLike[str] | None = None,
    ) -> Path | None:
        """The warm cache directory for this tool's checks of the repository at `root`
        (made now), or None: no such check, a run judged against a base, or `none` (which
        runs with the caller's own, already warm caches)."""
        mine = self.checks(checks)
        if not mine or judged_against_base or sandbox == "none":
            return None
        from assay.check_execution import locate
        from assay.probe_record import fingerprint

        installs = []
        for check in mine:
            binary = locate(check, root=root)
            installs.append([binary, fingerprint(binary) if binary else None])
        material = json.dumps([str(root.resolve()), installs], sort_keys=True, default=str)
        name = hashlib.sha256(material.encode()).hexdigest()[:32]
        top = Path(state_dir) if state_dir is not None else default_cache_dir()
        directory = top / self.subdir / name
        try:
            if self.max_bytes is not None and _size(directory) > self.max_bytes:
                shutil.rmtree(directory)
            directory.mkdir(parents=True, exist_ok=True)
            os.utime(directory)  # most recently used
            _forget_old(directory.parent, self.kept)
        except OSError:
            return None  # the tool starts cold, as it would without
        return directory

    def told(self, checks: Sequence[Check], directory: Path | None) -> list[Check]:
        """`checks`, each of this tool's told to keep its cache in `directory` (unless its
        own variables say where)."""
        if directory is None:
            return list(checks)
        return [
            replace(check, env={self.variable: str(self._place(directory, check)), **check.env})
            if check.tool == self.tool
            else check
            for check in checks
        ]

    def _place(self, directory: Path, check: Check) -> Path:
        """Where `check` keeps its cache: `directory`, or (`per_check`) a directory under
        it named by what the check runs and where, the same on every run."""
        if not self.per_check:
            return directory
        material = json.dumps([check.cwd, list(check.argv)])
        return directory / hashlib.sha256(material.encode()).hexdigest()[:16]


def hand_over(directory: Path, uid: int | None) -> None:
    """As root, give the sandbox's uid (another one on every run) the cache and everything
    an earlier run wrote in it; links are changed themselves, never followed."""
    if uid is None:
        return
    os.lchown(directory, uid, uid)
    for top, dirs, files in walk(directory):
        for name in (*dirs, *files):
            with contextlib.suppress(FileNotFoundError):
                os.lchown(os.path.join(top, name), uid, uid)


def _size(directory: Path) -> int:
    """The bytes the files under `directory` hold (0 when there is none yet); links are
    not followed."""
    total = 0
    for top, _dirs, files in walk(directory):
        for name in files:
            total += os.lstat(os.path.join(top, name)).st_size
    return total


def _forget_old(caches: Path, kept: int) -> None:
    """Remove the least recently used caches past `kept`."""
    with os.scandir(caches) as listing:
        entries = [e for e in listing if e.is_dir(follow_symlinks=False)]
    entries.sort(key=lambda e: e.stat(follow_symlinks=False).st_mtime, reverse=True)
    for old in entries[kept:]:
        shutil.rmtree(old.path, ignore_errors=True)

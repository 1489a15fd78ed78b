"""Stopping a run that fills the filesystem it writes to.

A workspace in RAM under a capped cgroup counts what the checks write against the run's
memory. Elsewhere (a tree too large for /dev/shm, no cgroup to cap memory in,
`ASSAY_WORKSPACE_DIR` on a disk) only RLIMIT_FSIZE bounds what a check writes, and that
per file: a test writing 4 GiB files in a loop fills the host's disk long before its
deadline. So a run (every check of one workspace) may take at most half of the bytes, and
half of the inodes, that were free on each filesystem it writes to when its first check
started, as a workspace's copy may (`provision._check_room`); past that the check is
stopped (`process.run_process`'s `watch`), and inconclusive, saying why.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import NamedTuple

#: The share of a filesystem's free space at a run's start that the run may fill.
SHARE = 0.5


class _AtStart(NamedTuple):
    """What a filesystem the run writes to had free when its first command started."""

    path: str
    free: int
    inodes: int
    """0: a filesystem that does not count them."""


#: Per workspace (its path), each filesystem's free room when its first command started:
#: the share is the run's as a whole, not each command's (`forget` when the workspace goes).
_RUN_STARTS: dict[str, dict[int, _AtStart]] = {}
_RUN_STARTS_LOCK = threading.Lock()


def disk_watch(*paths: str | os.PathLike[str]) -> Callable[[], str | None] | None:
    """A `watch` for a run writing under `paths`: why to stop it, once any of their
    filesystems has lost more than `SHARE` of the bytes or of the inodes it had free when
    the first command of the run (its workspace, `paths[0]`) started; None when none of
    them can be measured.

    The room is the run's: each command measured from its own start would let every
    check of a verification take half of what the one before left (three checks, 7/8
    of the disk). And inodes count as bytes do: a check making empty files takes no
    byte, yet leaves the host's filesystem unable to make another file."""
    if not paths:
        return None
    with _RUN_STARTS_LOCK:
        starts = _RUN_STARTS.setdefault(os.fspath(paths[0]), {})
        for path in paths:
            try:
                device = os.stat(path).st_dev
                if device not in starts:
                    starts[device] = _AtStart(os.fspath(path), *_free(path))
            except OSError:
                continue
        if not starts:
            return None
        watched = tuple(starts.values())

    def watch() -> str | None:
        for start in watched:
            try:
                free, inodes = _free(start.path)
            except OSError:
                continue
            if free < start.free * (1 - SHARE):
                return (
                    f"the filesystem of {start.path} went from {_size(start.free)} to "
                    f"{_size(free)} free as it ran: it wrote more than half of what was free "
                    "there, and was stopped before the host's disk filled"
                )
            if inodes < start.inodes * (1 - SHARE):
                return (
                    f"the filesystem of {start.path} went from {start.inodes} to {inodes} "
                    "free inodes as it ran: it made more than half of the files there was "
                    "room for, and was stopped before the host's filesystem ran out of them"
                )
        return None

    return watch


def forget(workspace: str | os.PathLike[str]) -> None:
    """Drop the floors of the run in `workspace` (it is gone)."""
    with _RUN_STARTS_LOCK:
        _RUN_STARTS.pop(os.fspath(workspace), None)


def _free(path: str | os.PathLike[str]) -> tuple[int, int]:
    """Bytes and inodes an unprivileged writer may still take: root's reserve is not the
    run's (0 inodes: a filesystem that does not count them)."""
    info = os.statvfs(path)
    return info.f_bavail * info.f_frsize, info.f_favail if info.f_files else 0


def _size(n: int) -> str:
    return f"{n / 1024**3:.1f} GiB" if n >= 1024**3 else f"{n / 1024**2:.0f} MiB"

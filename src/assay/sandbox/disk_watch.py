"""Stopping a run that fills the filesystem it writes to.

A workspace in RAM under a capped cgroup counts what the checks write against the run's
memory. Elsewhere (a tree too large for /dev/shm, no cgroup to cap memory in,
`ASSAY_WORKSPACE_DIR` on a disk) only RLIMIT_FSIZE bounds what a check writes, and that
per file: a test writing 4 GiB files in a loop fills the host's disk long before its
deadline. So a run may fill at most half of what was free on each filesystem it writes to
when it started, as a workspace's copy may (`provision._check_room`); past that it is
stopped (`process.run_process`'s `watch`), and its check is inconclusive, saying why.
"""

from __future__ import annotations

import os
from collections.abc import Callable

#: The share of a filesystem's free space at a run's start that the run may fill.
SHARE = 0.5


def disk_watch(*paths: str | os.PathLike[str]) -> Callable[[], str | None] | None:
    """A `watch` for a run writing under `paths`: why to stop it, once any of their
    filesystems has lost more than `SHARE` of what it had free now; None when none of them
    can be measured."""
    floors: dict[int, tuple[str, int, int]] = {}
    for path in paths:
        try:
            device = os.stat(path).st_dev
            free = _free(path)
        except OSError:
            continue
        floors.setdefault(device, (os.fspath(path), free, int(free * (1 - SHARE))))
    if not floors:
        return None
    watched = tuple(floors.values())

    def watch() -> str | None:
        for path, at_start, floor in watched:
            try:
                free = _free(path)
            except OSError:
                continue
            if free < floor:
                return (
                    f"the filesystem of {path} went from {_size(at_start)} to {_size(free)} "
                    "free as it ran: it wrote more than half of what was free there, and was "
                    "stopped before the host's disk filled"
                )
        return None

    return watch


def _free(path: str | os.PathLike[str]) -> int:
    """Bytes an unprivileged writer may still take: root's reserve is not the run's."""
    info = os.statvfs(path)
    return info.f_bavail * info.f_frsize


def _size(n: int) -> str:
    return f"{n / 1024**3:.1f} GiB" if n >= 1024**3 else f"{n / 1024**2:.0f} MiB"

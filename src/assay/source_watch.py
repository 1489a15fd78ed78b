"""Whether a package's source files changed since a moment: the warm server asks before
each request, so that no run is answered by code that is no longer installed.

A stamp of every source file (path, size, modification time) answers it, but stating
the package's three hundred files takes 1.5 ms, on the path of every warm run. An
inotify watch on each of the package's directories answers with one poll instead: the
stamp is taken again only once an event has come (which may be one that changes nothing
the stamp covers). A directory made since (a new subpackage, or one put in the place of
another) is watched from the next event on: every directory is watched again before that
stamp is taken. Where inotify cannot be had (no libc through ctypes, the watch limit
reached), every question takes the stamp, as without it.
"""

from __future__ import annotations

import os
import select
from collections.abc import Iterator

__all__ = ["SourceWatch"]

#: inotify(7): a file written, its attributes or times set, an entry made, removed or
#: renamed in the directory, the directory itself removed or renamed.
_EVENTS = 0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800
_SKIPPED = "__pycache__"


class SourceWatch:
    """The `.py` files under `top` as they are now, and whether they changed since."""

    def __init__(self, top: str) -> None:
        self.top = top
        self._fd = _watch(top)  # before the stamp: a change between the two is seen
        self.stamp = stamp(top)
        self._changed = False

    def changed(self) -> bool:
        """Whether a source file was added, removed or changed since this watch began."""
        if self._changed:
            return True
        if self._fd is not None:
            if not select.select([self._fd], [], [], 0)[0]:
                return False
            _drain(self._fd)  # before the stamp: a change while it is taken comes again
            # A directory made since was not watched: files written there later would
            # bring no event. Watched now, before the stamp, every later change comes.
            if not _add_watches(self._fd, self.top):
                self.close()
        self._changed = stamp(self.top) != self.stamp
        return self._changed

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def stamp(top: str) -> tuple[tuple[str, int, int], ...]:
    """Each source file under `top`, with its size and modification time."""
    return tuple(sorted(_stamps(top)))


def _stamps(top: str) -> Iterator[tuple[str, int, int]]:
    for directory, subdirs, files in os.walk(top):
        subdirs[:] = [name for name in subdirs if name != _SKIPPED]
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                try:
                    info = os.stat(path)
                except OSError:
                    continue
                yield path, info.st_size, info.st_mtime_ns


def _watch(top: str) -> int | None:
    """An inotify descriptor watching every directory under `top`; None when any of them
    cannot be watched (a change there would go unseen)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, AttributeError):
        return None
    if fd < 0:
        return None
    if not _add_watches(int(fd), top):
        os.close(fd)
        return None
    return int(fd)


def _add_watches(fd: int, top: str) -> bool:
    """Watch every directory under `top` on `fd` (one watched already keeps its watch);
    False when any of them cannot be watched."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return False
    for directory, subdirs, _files in os.walk(top):
        subdirs[:] = [name for name in subdirs if name != _SKIPPED]
        if libc.inotify_add_watch(fd, os.fsencode(directory), _EVENTS) < 0:
            return False
    return True


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 65536):
            pass
    except BlockingIOError:
        pass

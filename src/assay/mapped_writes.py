"""Whether a file's stat vouches for its bytes against writes through a shared mapping.

A write through a `MAP_SHARED` mapping moves the file's change time only when it faults
on a page that was clean: once written, the page stays writable until it is written back
(up to half a minute later), and every write to it meanwhile leaves the stat as it was.
So a stat taken after the file's dirty pages are written back vouches for the bytes read
after it: writing a page back makes it read-only again, and the next write through any
mapping moves the change time. `sync_file_range` does only that (6 us a clean file here);
`fsync` also flushes the disk's cache, 1-3 ms a file. tmpfs and its kin write nothing
back, and map a page writable at its first read through a shared mapping: a write then,
even through a mapping made after the stat, moves neither time, and no stat there
vouches for what a file holds.
"""

from __future__ import annotations

import os
from collections.abc import Callable

#: Filesystems whose pages are never written back (nor made read-only again by a sync).
_NEVER_WRITTEN_BACK = frozenset({"tmpfs", "ramfs", "hugetlbfs", "devtmpfs"})


class SyncedStats:
    """Makes open files' stats vouch for their bytes, knowing each device's filesystem."""

    def __init__(self) -> None:
        self._types: dict[int, str] | None = None
        self._write_back: Callable[[int], None] | None = None

    def vouch(self, fd: int) -> bool:
        """Sync the open regular file `fd`; whether its stat from now on moves with every
        write to it, shared mappings' included."""
        if self._write_back is None:
            self._write_back = _page_writer()
        try:
            self._write_back(fd)
            device = os.fstat(fd).st_dev
        except OSError:
            return False
        return self._filesystem(device) not in _NEVER_WRITTEN_BACK

    def stats_can_vouch(self, fd: int) -> bool:
        """Whether any stat on the filesystem of open `fd` can vouch for a file's bytes:
        not on tmpfs and its kin, where a page read through a shared mapping is mapped
        writable at once, and written through it, then unmapped, moves neither time."""
        try:
            device = os.fstat(fd).st_dev
        except OSError:
            return False
        return self._filesystem(device) not in _NEVER_WRITTEN_BACK

    def _filesystem(self, device: int) -> str:
        if self._types is None:
            self._types = _mounted_types()
        return self._types.get(device, "")


#: `sync_file_range`'s flags: wait for pages in flight, write the dirty ones, wait for them.
_WRITE_AND_WAIT = 1 | 2 | 4


def _page_writer() -> Callable[[int], None]:
    """A function that writes an open file's dirty pages back: `sync_file_range` from the
    C library, else `os.fsync`."""
    try:
        import ctypes

        call = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (ImportError, OSError, AttributeError):
        return os.fsync
    call.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]

    def write_back(fd: int) -> None:
        if call(fd, 0, 0, _WRITE_AND_WAIT) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, os.strerror(errno))

    return write_back


def _mounted_types() -> dict[int, str]:
    """Each mounted device's filesystem type, from `/proc/self/mountinfo`."""
    types: dict[int, str] = {}
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as mounts:
            for line in mounts:
                fields, _, rest = line.partition(" - ")
                words = fields.split()
                if len(words) < 3 or not rest:
                    continue
                major, _, minor = words[2].partition(":")
                if major.isdigit() and minor.isdigit():
                    types[os.makedev(int(major), int(minor))] = rest.split()[0]
    except OSError:
        pass
    return types

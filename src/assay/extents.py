"""Where a sparse file holds data: what copying or hashing it reads, its holes left out."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator


def data_extents(fd: int, size: int) -> Iterator[tuple[int, int]]:
    """Each (start, end) of data in the first `size` bytes of the open file `fd`, in order;
    between them, and after the last, holes (zeros that take no space)."""
    offset = 0
    while offset < size:
        try:
            start = os.lseek(fd, offset, os.SEEK_DATA)
        except OSError as exc:
            if exc.errno == errno.ENXIO:
                return  # nothing but a hole to the end
            raise
        end = min(os.lseek(fd, start, os.SEEK_HOLE), size)
        yield start, end
        offset = end

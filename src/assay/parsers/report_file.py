"""Reading a report file that the code under test could have replaced.

Reports are written inside the sandbox into a directory mounted writable there, and
read here on the host, with the host's rights. Whatever is at the report's path when
the run ends was chosen by the code under test: a link to a file only the host may read
(whose text would then land in the evidence), /dev/zero (a read that never ends), a FIFO
(a read that never starts), a sparse file of many gigabytes. So a report is opened without
following a link and without blocking, accepted only if the open file is a regular file
with no other names, and read only up to a fixed bound.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

#: The largest report read. Real reports of large suites are a few MiB; anything bigger
#: is refused whole, never parsed in part (a cut report could drop its failures).
REPORT_MAX_BYTES = 64 * 1024 * 1024

# O_NOCTTY: a terminal device at the path must not become assay's controlling terminal.
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
_CHUNK = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Refused:
    """Something was at the report's path but it was not read, and why."""

    reason: str


def read_report(path: Path, *, limit: int = REPORT_MAX_BYTES) -> bytes | Refused | None:
    """The bytes of the report at `path`; None when there is none; `Refused` when what is
    there is not a plain file of at most `limit` bytes (or cannot be read)."""
    name = path.name
    try:
        # Looked at first so that a device is never opened at all (opening one can act);
        # what decides is the check on the open file below.
        if (refused := _unless_regular(os.lstat(path).st_mode, name)) is not None:
            return refused
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # replaced by a link after the look: O_NOFOLLOW met it
            return Refused(f"report {name} is a symbolic link; refused")
        return Refused(f"report {name} could not be opened ({exc.strerror}); refused")
    try:
        return _read_open(fd, name, limit)
    except OSError as exc:
        return Refused(f"report {name} could not be read ({exc.strerror}); refused")
    finally:
        os.close(fd)


def _read_open(fd: int, name: str, limit: int) -> bytes | Refused:
    # The checks are made on the file that was opened, not on the path, so nothing
    # swapped in between the check and the read can get past them.
    info = os.fstat(fd)
    if (refused := _unless_regular(info.st_mode, name)) is not None:
        return refused
    if info.st_nlink != 1:
        # A hard link made by the code under test names a file it did not write.
        return Refused(f"report {name} has {info.st_nlink} hard links; refused")
    if info.st_size > limit:
        return Refused(f"report {name} is larger than {_size(limit)}; refused")
    data = bytearray()
    while len(data) <= limit:  # one byte past the bound tells a file that is still growing
        chunk = os.read(fd, min(_CHUNK, limit + 1 - len(data)))
        if not chunk:
            return bytes(data)
        data += chunk
    return Refused(f"report {name} is larger than {_size(limit)}; refused")


def _unless_regular(mode: int, name: str) -> Refused | None:
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return Refused(f"report {name} is a symbolic link; refused")
    return Refused(f"report {name} is {_kind(mode)}, not a regular file; refused")


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def _size(limit: int) -> str:
    mib = limit / (1024 * 1024)
    return f"{mib:g} MiB" if mib >= 1 else f"{limit} bytes"

"""Reading, on the host, a file that code we do not trust chose.

A workspace is written by the code under test; the repository under verification was
written by whoever sent it. Whatever sits at a path there was chosen by them: a link to
a file only the host may read (whose text would then land in a report), /dev/zero (a
read that never ends), a FIFO (a read that never starts), a sparse file of many
gigabytes, a directory swapped for a link so that `dir/file` leads out of the tree.

So a file here is reached from a directory the caller trusts one component at a time,
following no link on the way; looked at before it is opened, so that a device is never
opened at all; opened without blocking; accepted only if the open file is a regular file
(with no other names, unless the caller says hard links are fine); and read only within
a bound, or streamed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: The default bound on a file read whole.
DEFAULT_MAX_BYTES = 64 * 1024 * 1024

# O_NOCTTY: a terminal device at the path must not become assay's controlling terminal.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
# O_PATH: a directory written under another uid need not be readable to be passed through.
_DIR_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_CLOEXEC
_CHUNK = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Refused:
    """Something was at the path but it was not read, and why."""

    reason: str


@dataclass(frozen=True, slots=True)
class Link:
    """A symbolic link was at the path; its target, which was not followed."""

    target: str


@dataclass(frozen=True, slots=True)
class OpenFile:
    """A regular file, open for reading; checked on the open descriptor itself."""

    fd: int
    size: int
    """Its size when it was opened."""
    mode: int
    what: str
    """How refusals name it (`report r.xml`, `tests/test_a.py`)."""


Found = OpenFile | Link | Refused | None
"""What is at a path: a file to read, a link, something refused, or nothing (None)."""


@contextlib.contextmanager
def open_untrusted(
    root: str | os.PathLike[str], rel: str, *, what: str | None = None, single_link: bool = True
) -> Iterator[Found]:
    """What is at `rel` (a `/`-separated path) beneath `root`, reached following no link.

    `root` itself is the caller's and is trusted. A link in `rel`'s last component is
    given as a `Link`; a link in any earlier one, a `..`, a special file, a file with
    other names (unless not `single_link`) or one that cannot be opened is `Refused`.
    An `OpenFile` is closed when the block ends.
    """
    found = _open(Path(root), rel, what or rel, single_link)
    try:
        yield found
    finally:
        if isinstance(found, OpenFile):
            os.close(found.fd)


def read_untrusted(
    root: str | os.PathLike[str],
    rel: str,
    *,
    limit: int = DEFAULT_MAX_BYTES,
    what: str | None = None,
    single_link: bool = True,
) -> bytes | Refused | None:
    """The bytes of the regular file at `rel` beneath `root`; None when there is nothing
    there; `Refused` when what is there is not a plain file of at most `limit` bytes
    (a link, even one that stays inside the tree, is refused: see `open_untrusted`)."""
    name = what or rel
    with open_untrusted(root, rel, what=name, single_link=single_link) as found:
        if isinstance(found, Link):
            return Refused(f"{name} is a symbolic link; refused")
        if isinstance(found, OpenFile):
            return read_open(found, limit=limit)
        return found


@contextlib.contextmanager
def directory_untrusted(root: str | os.PathLike[str], rel: str) -> Iterator[int | None]:
    """A descriptor (`O_PATH`) for the directory at `rel` beneath `root` ("" for `root`
    itself), reached following no link, for reading several files in it
    (`read_untrusted_at`); None when it cannot be reached so."""
    directory = _descend(root, rel.split("/") if rel else [], rel or ".")
    try:
        yield directory if isinstance(directory, int) else None
    finally:
        if isinstance(directory, int):
            os.close(directory)


def read_untrusted_at(directory: int, name: str, *, limit: int) -> bytes | Refused | None:
    """`read_untrusted` for the file `name` in a directory reached by
    `directory_untrusted`; a file with other names is read too."""
    found = _open_in(directory, name, name, single_link=False)
    if not isinstance(found, OpenFile):
        return Refused(f"{name} is a symbolic link; refused") if isinstance(found, Link) else found
    try:
        return read_open(found, limit=limit)
    finally:
        os.close(found.fd)


#: The most names listed from one directory: a report directory holds one file per suite.
LIST_MAX_NAMES = 10_000


def list_untrusted(
    root: str | os.PathLike[str], rel: str, *, limit: int = LIST_MAX_NAMES
) -> list[str] | Refused | None:
    """The names in the directory at `rel` beneath `root`, reached following no link;
    None when there is none; `Refused` when it is reached through a link or holds more
    than `limit` names (a directory of millions would otherwise be read whole)."""
    directory = _descend(root, rel.split("/"), rel)
    if not isinstance(directory, int):
        return directory
    try:
        try:
            # O_PATH descriptors cannot be read: reopen the directory itself for listing.
            readable = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=directory)
        except OSError as exc:
            return Refused(f"{rel} could not be listed ({exc.strerror}); refused")
        names: list[str] = []
        try:
            with os.scandir(readable) as entries:  # scandir lists a duplicate of the descriptor
                for entry in entries:
                    if len(names) >= limit:
                        return Refused(f"{rel} holds more than {limit} names; refused")
                    names.append(entry.name)
        finally:
            os.close(readable)
        return sorted(names)
    finally:
        os.close(directory)


#: The most entries a walk visits: an installed environment holds tens of thousands.
WALK_MAX_ENTRIES = 1_000_000


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry met by `walk_untrusted`."""

    path: str
    """`/`-separated, relative to the walk's root (so it starts with the walked directory)."""
    kind: str
    """`file`, `dir`, `link` or `other` (a FIFO, socket or device), as the entry itself
    says: a link is never followed to see what it points to."""


def walk_untrusted(
    root: str | os.PathLike[str], rel: str, *, limit: int = WALK_MAX_ENTRIES
) -> list[Entry] | Refused | None:
    """Every entry beneath the directory at `rel` beneath `root`, each directory entered
    following no link (a link is an entry, never a way in); None when there is no
    directory; `Refused` when one is reached through a link, cannot be listed, or the
    tree holds more than `limit` entries."""
    found: list[Entry] = []
    pending = [rel]
    while pending:
        directory = pending.pop()
        fd = _descend(root, directory.split("/"), directory)
        if fd is None and directory == rel:
            return None
        if not isinstance(fd, int):
            return fd or Refused(f"{directory} changed while being walked; refused")
        try:
            readable = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=fd)
        except OSError as exc:
            return Refused(f"{directory} could not be listed ({exc.strerror}); refused")
        finally:
            os.close(fd)
        try:
            with os.scandir(readable) as entries:
                for entry in entries:
                    if len(found) >= limit:
                        return Refused(f"{rel} holds more than {limit} entries; refused")
                    kind = _entry_kind(entry)
                    found.append(Entry(f"{directory}/{entry.name}", kind))
                    if kind == "dir":
                        pending.append(f"{directory}/{entry.name}")
        except OSError as exc:
            return Refused(f"{directory} could not be listed ({exc.strerror}); refused")
        finally:
            os.close(readable)
    found.sort(key=lambda e: e.path)
    return found


def _entry_kind(entry: os.DirEntry[str]) -> str:
    if entry.is_symlink():
        return "link"
    if entry.is_dir(follow_symlinks=False):
        return "dir"
    if entry.is_file(follow_symlinks=False):
        return "file"
    return "other"


def read_open(found: OpenFile, *, limit: int) -> bytes | Refused:
    """All of an open file if it holds at most `limit` bytes, else `Refused`: a file cut
    at the bound could read as something it is not (a report that lost its failures)."""
    if found.size > limit:
        return _too_large(found, limit)
    data = bytearray()
    try:
        while len(data) <= limit:  # one byte past the bound tells a file that is still growing
            chunk = os.pread(found.fd, min(_CHUNK, limit + 1 - len(data)), len(data))
            if not chunk:
                return bytes(data)
            data += chunk
    except OSError as exc:
        return Refused(f"{found.what} could not be read ({exc.strerror}); refused")
    return _too_large(found, limit)


def chunks(found: OpenFile) -> Iterator[bytes]:
    """An open file's bytes, in bounded pieces, however large it is (for hashing)."""
    offset = 0
    while chunk := os.pread(found.fd, _CHUNK, offset):
        offset += len(chunk)
        yield chunk


def same_content(a: OpenFile, b: OpenFile) -> bool:
    """Whether two open files hold the same bytes, compared piece by piece; a file that
    fails to read is not the same as anything."""
    if a.size != b.size:
        return False
    offset = 0
    try:
        while True:
            left, right = os.pread(a.fd, _CHUNK, offset), os.pread(b.fd, _CHUNK, offset)
            if left != right:
                return False
            if not left:
                return True
            offset += len(left)
    except OSError:
        return False


def same_entry(root_a: str | os.PathLike[str], root_b: str | os.PathLike[str], rel: str) -> bool:
    """Whether `rel` is the same in both trees: nothing in either, links to the same
    target, or regular files with the same bytes. Anything refused in either is not."""
    with open_untrusted(root_a, rel) as a, open_untrusted(root_b, rel) as b:
        if a is None or isinstance(a, Link):
            return a == b
        if isinstance(a, OpenFile) and isinstance(b, OpenFile):
            return same_content(a, b)
        return False


# --------------------------------------------------------------------------- opening


def _open(root: Path, rel: str, what: str, single_link: bool) -> Found:
    parts = rel.split("/")
    directory = _descend(root, parts[:-1], what, check=parts)
    if not isinstance(directory, int):
        return directory
    try:
        return _open_in(directory, parts[-1], what, single_link)
    finally:
        os.close(directory)


def _descend(
    root: str | os.PathLike[str], parts: list[str], what: str, *, check: list[str] | None = None
) -> int | Refused | None:
    """A descriptor for the directory `parts` beneath `root`, entered one part at a time
    following no link (the caller closes it); None when nothing is there. `check`: the
    whole path, when `parts` is only its directories, so that it is judged as a whole."""
    if any(part in ("", ".", "..") for part in (check if check is not None else parts)):
        return Refused(f"{what} is not a plain path inside the tree; refused")
    try:
        directory = os.open(root, _DIR_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return Refused(f"{what} could not be opened ({exc.strerror}); refused")
    for depth, part in enumerate(parts):
        entered = _enter(directory, part, "/".join(parts[: depth + 1]), what)
        os.close(directory)
        if not isinstance(entered, int):
            return entered
        directory = entered
    return directory


def _enter(directory: int, part: str, prefix: str, what: str) -> int | Refused | None:
    """A descriptor for the subdirectory `part`, unless it is a link (or not a directory)."""
    try:
        return os.open(part, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=directory)
    except FileNotFoundError:
        return None
    except OSError as exc:
        failure = exc
    try:
        mode = os.lstat(part, dir_fd=directory).st_mode
    except FileNotFoundError:
        return None
    except OSError:
        mode = 0
    if stat.S_ISLNK(mode):
        return Refused(f"{what} is reached through a symbolic link ({prefix}); refused")
    if mode and not stat.S_ISDIR(mode):
        return None  # a file where a directory was: nothing is at the path
    return Refused(f"{what} could not be opened ({failure.strerror}); refused")


def _open_in(directory: int, name: str, what: str, single_link: bool) -> Found:
    try:
        # Looked at first so that a device is never opened at all (opening one can act);
        # what decides is the check on the open file below.
        mode = os.lstat(name, dir_fd=directory).st_mode
        if stat.S_ISLNK(mode):
            return _link(directory, name, what)
        if (refused := _unless_regular(mode, what)) is not None:
            return refused
        fd = os.open(name, _FILE_FLAGS, dir_fd=directory)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # replaced by a link after the look: O_NOFOLLOW met it
            return Refused(f"{what} is a symbolic link; refused")
        return Refused(f"{what} could not be opened ({exc.strerror}); refused")
    # The checks are made on the file that was opened, not on the path, so nothing
    # swapped in between the look and the open can get past them.
    info = os.fstat(fd)
    refused = _unless_regular(info.st_mode, what)
    if refused is None and single_link and info.st_nlink != 1:
        # A hard link made by the code under test names a file it did not write.
        refused = Refused(f"{what} has {info.st_nlink} hard links; refused")
    if refused is not None:
        os.close(fd)
        return refused
    return OpenFile(fd=fd, size=info.st_size, mode=info.st_mode, what=what)


def _link(directory: int, name: str, what: str) -> Link | Refused | None:
    try:
        return Link(os.readlink(name, dir_fd=directory))
    except FileNotFoundError:
        return None
    except OSError as exc:  # no longer a link: it changed while being looked at
        return Refused(f"{what} changed while being read ({exc.strerror}); refused")


def _unless_regular(mode: int, what: str) -> Refused | None:
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return Refused(f"{what} is a symbolic link; refused")
    return Refused(f"{what} is {file_kind(mode)}, not a regular file; refused")


def file_kind(mode: int) -> str:
    """What a file of `mode` that is no regular file is, in words (`a FIFO`, `a device`)."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def _too_large(found: OpenFile, limit: int) -> Refused:
    return Refused(f"{found.what} is larger than {_size(limit)}; refused")


def _size(limit: int) -> str:
    mib = limit / (1024 * 1024)
    return f"{mib:g} MiB" if mib >= 1 else f"{limit} bytes"

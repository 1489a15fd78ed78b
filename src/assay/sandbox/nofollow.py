"""Paths the host opens to show in a sandbox, reached following no link a run could have
planted.

A run in place can write its project's directory, and a directory there may be another
run's toolchain (a `node_modules/.bin` above the subdirectory that run works in). Swapped
for a link and back while that run's root is built, a path resolved by its name (realpath,
`open`) would lead the host to choose, scan or mount the link's target. Here each name is
opened on its own (`O_PATH|O_NOFOLLOW`) from the directory before it, and a link is
followed only where the project cannot have made it (`Trust`): every other link is
refused, never resolved. The descriptor returned is what was reached: what is scanned and
mounted is that, not whatever the path names later.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass

from assay.errors import AssayError

#: How many links one path may go through, as the kernel allows.
_MAX_LINKS = 40
_FLAGS = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC


class PlantedLink(AssayError, OSError):
    """A link where the project could have made it: it is not followed (an `OSError`, as
    every other reason a path cannot be reached is)."""


@dataclass(frozen=True, slots=True)
class Trust:
    """Where a link is followed: in `places` (the system's directories, a home's toolchain
    directories: nothing a run can write); directly in `/` (merged-/usr's `/bin`, a
    `/home` that leads elsewhere: no project is `/`); and, for a caller other than root,
    in a directory of root's that no group or other may write (a run acts as the caller,
    or, under root, as a sandbox uid of its own, which may own its workspace). Never in
    `writable` (what a sandbox may write: a tool cache inside a toolchain home too)."""

    places: tuple[str, ...]
    writable: tuple[str, ...] = ()

    def follows(self, link: str, holder: os.stat_result) -> bool:
        if any(_within(link, p) for p in self.writable):
            return False
        if os.path.dirname(link) == "/" or any(_within(link, p) for p in self.places):
            return True
        return holder.st_uid == 0 != os.geteuid() and not holder.st_mode & 0o022


def open_path(path: str, trust: Trust) -> tuple[str, int]:
    """An `O_PATH` descriptor of what the absolute `path` names, and that path with each
    link followed resolved. Raises `PlantedLink` for a link `trust` does not follow, and
    `OSError` for a path that names nothing."""
    if not os.path.isabs(path):
        raise OSError(errno.EINVAL, "not an absolute path", path)
    names = _names(path)
    where, fd = "/", os.open("/", _FLAGS)
    links = 0
    try:
        while names:
            name = names.pop()
            if name == "..":
                parent = os.open("..", _FLAGS, dir_fd=fd)
                os.close(fd)
                where, fd = os.path.dirname(where), parent
                continue
            found = os.open(name, _FLAGS, dir_fd=fd)
            here = os.path.join(where, name)
            if not stat.S_ISLNK(os.fstat(found).st_mode):
                os.close(fd)
                where, fd = here, found
                continue
            try:
                if not trust.follows(here, os.fstat(fd)):
                    raise PlantedLink(errno.ELOOP, "a link where the project could make one", here)
                target = os.readlink(name, dir_fd=fd)
            finally:
                os.close(found)
            links += 1
            if links > _MAX_LINKS:
                raise OSError(errno.ELOOP, "too many links", path)
            names += _names(target)
            if target.startswith("/"):
                os.close(fd)
                where, fd = "/", os.open("/", _FLAGS)
    except BaseException:
        os.close(fd)
        raise
    return where, fd


def open_directory(path: str, trust: Trust) -> tuple[str, int]:
    """`open_path` of a directory; raises `NotADirectoryError` for anything else."""
    where, fd = open_path(path, trust)
    if not stat.S_ISDIR(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotADirectoryError(errno.ENOTDIR, "not a directory", path)
    return where, fd


def resolved(path: str, trust: Trust) -> str | None:
    """`path` resolved as `open_path` resolves it; None where it is refused or names nothing."""
    try:
        where, fd = open_path(path, trust)
    except OSError:
        return None
    os.close(fd)
    return where


def _names(path: str) -> list[str]:
    """The names of `path`, last first (popped from the end), without empty ones or `.`."""
    return [name for name in reversed(path.split("/")) if name not in ("", ".")]


def _within(path: str, place: str) -> bool:
    return place == "/" or path == place or path.startswith(place.rstrip("/") + "/")


def trusted(places: Sequence[str], writable: Sequence[str] = ()) -> Trust:
    """A `Trust` that follows links in `places`, never in `writable` (each normalised)."""
    return Trust(_absolute(places), _absolute(writable))


def _absolute(paths: Sequence[str]) -> tuple[str, ...]:
    return tuple(os.path.normpath(p) for p in paths if os.path.isabs(p))

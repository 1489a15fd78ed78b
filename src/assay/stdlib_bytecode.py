"""The standard library's own byte-code, for runs that keep byte-code apart.

Under `--protect` runners start with `PYTHONPYCACHEPREFIX` set to a directory of the
session's (`assay.environment_proof.launch_env`), so that no `.pyc` the tree or its
environment holds is read. Python then reads byte-code only under that prefix, the
interpreter's own too: every module of the standard library a run imports was compiled
afresh, in every session (a pytest run of one test took 0.62 s instead of 0.14 s, half of
it the standard library).

The standard library of an interpreter outside the tree is the host's toolchain, shown
read-only in the sandbox, and its `__pycache__` was written when it was installed. So the
prefix is seeded with a link, at the place Python looks under the prefix, to each of its
files. Python checks each against its source (modification time and size) as it would
beside the source. Only the standard library is seeded: an environment's
`site-packages` is written by install steps the change controls, and its byte-code is
compiled afresh as before. The prefix is the session's own: a run that replaces a link
there changes nothing for another session.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = ["seed_standard_libraries"]

#: Directories of a standard library no test run imports from (and the installed
#: packages, which are not the standard library's).
_SKIPPED = frozenset(
    {"site-packages", "dist-packages", "test", "idlelib", "tkinter", "turtledemo", "lib2to3"}
)


def standard_libraries(interpreters: Iterable[str], untrusted: Sequence[Path]) -> list[str]:
    """The standard library directories of `interpreters` (paths of binaries; a
    virtualenv's leads to the interpreter it was made from), those under none of
    `untrusted` (the tree and the workspace)."""
    found: dict[str, None] = {}
    for binary in interpreters:
        real = os.path.realpath(binary)
        prefix = os.path.dirname(os.path.dirname(real))
        for stdlib in sorted(glob.glob(os.path.join(glob.escape(prefix), "lib", "python3.*"))):
            if _under(stdlib, untrusted) or not os.path.isfile(os.path.join(stdlib, "os.py")):
                continue
            found.setdefault(stdlib)
    return list(found)


def seed_standard_libraries(
    pycache: Path, interpreters: Iterable[str], untrusted: Sequence[Path], uid: int | None
) -> int:
    """Link, under `pycache` (a `PYTHONPYCACHEPREFIX`, made if missing), every byte-code
    file of the standard libraries of `interpreters` (`standard_libraries`) where Python
    looks for it; each directory made is `uid`'s (the sandbox's, when it has one of its
    own), so that runs may still write there. Returns the number of files linked."""
    _make_dirs(pycache.parent, pycache, uid)
    linked = 0
    for stdlib in standard_libraries(interpreters, untrusted):
        for directory, cached in _byte_code_dirs(stdlib):
            target = pycache / directory.lstrip(os.sep)
            _make_dirs(pycache, target, uid)
            for entry in os.scandir(cached):
                if entry.name.endswith(".pyc") and entry.is_file(follow_symlinks=False):
                    try:
                        os.symlink(entry.path, target / entry.name)
                    except FileExistsError:
                        continue
                    linked += 1
    return linked


def _byte_code_dirs(stdlib: str) -> Iterable[tuple[str, str]]:
    """Each directory of `stdlib` with byte-code, and its `__pycache__`."""
    for directory, subdirs, _ in os.walk(stdlib):
        if directory == stdlib:
            subdirs[:] = [d for d in subdirs if d not in _SKIPPED]
        if "__pycache__" in subdirs:
            subdirs.remove("__pycache__")
            yield directory, os.path.join(directory, "__pycache__")


def _make_dirs(top: Path, path: Path, uid: int | None) -> None:
    """`path` and every directory between it and `top`, each made `uid`'s."""
    missing = []
    at = path
    while at != top and not at.exists():
        missing.append(at)
        at = at.parent
    for directory in reversed(missing):
        directory.mkdir()
        if uid is not None:
            os.chown(directory, uid, uid)


def _under(path: str, places: Sequence[Path]) -> bool:
    real = os.path.realpath(path)
    return any(real == str(p) or real.startswith(str(p) + os.sep) for p in places)

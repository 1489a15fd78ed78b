"""Workspaces the change cannot forge: the change's code, with protected files from the base.

Every protected file of the base is written back (through no link the change may
have planted), and every protected file the change added is removed (a new
conftest.py, a new test standing in for a deleted one), so the change is judged
by the base's tests and the base's test configuration.

The change's files are read as files we do not trust (`assay.untrusted_files`):
whatever cannot be read safely (a FIFO, a device, a path through a link) is never
"already the same", so it is written back.

Where checks run as a uid of their own (bubblewrap as root), the protected files are
also locked against it (`lock_protected`): the code under test, its install steps and
its build can read the base's tests but not rewrite, remove or replace them.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from assay.filetree import walk_files
from assay.protect import ProtectedSet, is_build_record, is_bytecode, is_runner_loaded
from assay.sandbox.base import Sandbox, Workspace, sandbox_uid
from assay.tamper import sections_differ
from assay.untrusted_files import same_entry

#: Only VCS state is skipped here: a conftest.py hidden under node_modules still counts.
_RESTORE_SKIP_DIRS = frozenset({".git"})

#: What restoring again, once the change's code has run in the workspace, leaves alone:
#: environments its install steps made (proven apart, never restored: deleting the tests
#: that installed packages ship would break them) and build output (compiled copies of
#: the tests, which pytest does not collect by default). A conftest.py planted anywhere
#: else is removed.
INSTALLED_OR_BUILT = frozenset(
    {
        ".venv",
        "venv",
        "node_modules",
        ".tox",
        ".nox",
        ".assay-deps",
        "dist",
        "build",
        # assay's own build directories (CMake's CTestTestfile.cmake and Makefiles, the
        # autotools tree copied and configured there, meson's): written by the build.
        ".assay-cmake-build",
        ".assay-autotools-build",
        ".assay-meson-build",
    }
)


@dataclass(frozen=True, slots=True)
class RestoreResult:
    """What restoring protected files changed in a workspace."""

    restored: tuple[str, ...]
    """Paths written back from the base (they were deleted, modified or replaced)."""
    removed: tuple[str, ...]
    """Protected paths the change added, removed again."""

    def to_dict(self) -> dict[str, list[str]]:
        return {"restored": list(self.restored), "removed": list(self.removed)}


def restore_protected(
    workspace: str | os.PathLike[str],
    base: str | os.PathLike[str],
    protected: ProtectedSet,
    *,
    skip_dirs: frozenset[str] = _RESTORE_SKIP_DIRS,
) -> RestoreResult:
    """Make every protected path in `workspace` what it is in `base` (directories named
    in `skip_dirs` left out)."""
    root, base_root = Path(workspace), Path(base)
    base_files = set(walk_files(base_root, _RESTORE_SKIP_DIRS))
    work_files = set(walk_files(root, skip_dirs))
    restored, removed = [], []
    for rel in sorted(work_files - base_files):
        if protected.matches(rel) or protected.section_keys(rel):
            _remove(root / rel)
            removed.append(rel)
    for rel in sorted(base_files):
        keys = protected.section_keys(rel)
        if not protected.matches(rel) and not (
            keys and sections_differ(base_root, root, rel, keys)
        ):
            continue
        if rel in work_files and same_entry(base_root, root, rel):
            continue
        copy_in(base_root / rel, root, rel)
        restored.append(rel)
    return RestoreResult(restored=tuple(restored), removed=tuple(removed))


def restore_again(
    workspace: str | os.PathLike[str], base: str | os.PathLike[str], protected: ProtectedSet
) -> RestoreResult:
    """`restore_protected` once something of the change has run in `workspace` (its
    install steps, a build, a tool's probe): installed environments and build output are
    left alone (`INSTALLED_OR_BUILT`), and byte-code of protected files is removed but
    not reported (Python caches it there by itself; a planted one is gone all the same),
    nor what a build records of the tests each run (`is_build_record`), unless it is a
    module a runner could have imported (`is_runner_loaded`)."""
    done = restore_protected(
        workspace, base, protected, skip_dirs=_RESTORE_SKIP_DIRS | INSTALLED_OR_BUILT
    )
    reported = tuple(
        p for p in done.removed if is_runner_loaded(p) or not (is_bytecode(p) or is_build_record(p))
    )
    return RestoreResult(done.restored, reported)


#: A directory above a locked file: root's, writable by the sandbox's group, sticky.
_LOCKED_DIR_MODE = 0o1770
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_OPEN_DIR = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC


def lock_protected(
    workspace: str | os.PathLike[str], protected: ProtectedSet, uid: int
) -> tuple[str, ...]:
    """Make the protected files of `workspace` unwritable by `uid` (and its group, the same
    number, as sandboxes use it); returns the files locked.

    Each is owned by root and read-only; each directory above it, up to the workspace,
    is owned by root and group `uid`, mode 1770: `uid` may still add files there (byte-code,
    a test's scratch files) and remove its own, but the sticky bit keeps it from removing,
    renaming or replacing anything of root's, so neither a protected file nor a directory
    above one can be swapped. Files in installed environments and build output are left as
    they are, and so are section-protected files (the change's own sections are in them)."""
    root = Path(workspace)
    locked: list[str] = []
    above: set[str] = {""}
    for rel in walk_files(root, _RESTORE_SKIP_DIRS | INSTALLED_OR_BUILT):
        if not protected.matches(rel) or not _lock_file(root / rel):
            continue
        locked.append(rel)
        parts = rel.split("/")[:-1]
        above.update("/".join(parts[: depth + 1]) for depth in range(len(parts)))
    for rel in sorted(above):
        fd = os.open(root / rel if rel else root, _OPEN_DIR)
        try:
            os.fchown(fd, 0, uid)
            os.fchmod(fd, _LOCKED_DIR_MODE)
        finally:
            os.close(fd)
    return tuple(locked)


def _lock_file(path: Path) -> bool:
    """Root's and read-only, if `path` is a regular file (a link or a FIFO is no test)."""
    try:
        fd = os.open(path, _OPEN_FILE)
    except OSError:
        return False  # a link: restoring replaced every protected one already
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return False
        os.fchown(fd, 0, 0)
        os.fchmod(fd, stat.S_IMODE(info.st_mode) & ~0o7222)
    finally:
        os.close(fd)
    return True


def provision_protected(
    sandbox: Sandbox,
    change: str | os.PathLike[str],
    base: str | os.PathLike[str],
    protected: ProtectedSet,
) -> tuple[Workspace, RestoreResult]:
    """A fresh workspace of `sandbox` made from `change`, protected files restored from `base`.

    The caller cleans the workspace up (`sandbox.cleanup`), whatever happens next.
    """
    workspace = sandbox.provision(change)
    try:
        result = restore_protected(workspace.path, base, protected)
        sandbox.reclaim(workspace)
        uid = sandbox_uid(sandbox)
        if uid is not None:
            lock_protected(workspace.path, protected, uid)
    except BaseException as error:
        sandbox.cleanup_after(workspace, error)
        raise
    return workspace, result


def copy_in(source: Path, root: Path, rel: str) -> None:
    """Copy `source` to `root/rel`, replacing any link or file in the way, never following one."""
    parent = root
    for part in rel.split("/")[:-1]:
        parent = parent / part
        if parent.is_symlink() or (os.path.lexists(parent) and not parent.is_dir()):
            _remove(parent)  # a link in place of a directory could lead out of the workspace
        if not os.path.lexists(parent):
            parent.mkdir()
    target = parent / rel.split("/")[-1]
    if os.path.lexists(target):
        _remove(target)
    shutil.copy2(source, target, follow_symlinks=False)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()

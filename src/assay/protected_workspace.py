"""Workspaces the change cannot forge: the change's code, with protected files from the base.

Every protected file of the base is written back (through no link the change may
have planted), and every protected file the change added is removed (a new
conftest.py, a new test standing in for a deleted one), so the change is judged
by the base's tests and the base's test configuration.

The change's files are read as files we do not trust (`assay.untrusted_files`):
whatever cannot be read safely (a FIFO, a device, a path through a link) is never
"already the same", so it is written back.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from assay.filetree import walk_files
from assay.protect import ProtectedSet
from assay.sandbox.base import Sandbox, Workspace
from assay.tamper import sections_differ
from assay.untrusted_files import same_entry

#: Only VCS state is skipped here: a conftest.py hidden under node_modules still counts.
_RESTORE_SKIP_DIRS = frozenset({".git"})


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
    workspace: str | os.PathLike[str], base: str | os.PathLike[str], protected: ProtectedSet
) -> RestoreResult:
    """Make every protected path in `workspace` what it is in `base`."""
    root, base_root = Path(workspace), Path(base)
    base_files = set(walk_files(base_root, _RESTORE_SKIP_DIRS))
    work_files = set(walk_files(root, _RESTORE_SKIP_DIRS))
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
        _copy_in(base_root / rel, root, rel)
        restored.append(rel)
    return RestoreResult(restored=tuple(restored), removed=tuple(removed))


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
    except BaseException as error:
        sandbox.cleanup_after(workspace, error)
        raise
    return workspace, result


def _copy_in(source: Path, root: Path, rel: str) -> None:
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

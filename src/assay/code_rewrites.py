"""The change's own files that its code rewrote while a stage of checks ran (`--protect`).

The checks judge the workspace, a copy of the change's tree: what they run is the change's
code only while those files are the tree's. `calc/muls.py`, imported by the first test
file, wrote a right `calc/adder.py` over the tree's wrong one before the next test file
imported it, and a wrong `add` was VERIFIED on code the change does not hold.

So every code file's stat is taken before a stage; one whose stat moved by the stage's end
was written by what ran in the stage: it is put back from the tree and counted against the
verdict (`RunRecord.rewritten`). So is a Python
module added that the tree does not hold, removed again: `calc/adder.py` importing
`calc/_fast.py` when it is there, which `calc/muls.py` wrote, passed as well. Protected files
are `protected_workspace`'s to restore; installed environments, build output (cargo's and
Maven's `target/`) and tools' caches (`.pytest_cache`, `.mypy_cache`) are not the tree's
code, and the checks rewrite them as they run. A build stage is not watched: what a build writes over the tree (`tsc`
over a committed `lib/`) is its output, which later checks are meant to read.

Code reads more than modules: a data file beside the tree's code (below a directory other
than the root that holds some) is watched too. `calc/adder.py` read its offset from
`calc/offset.json`, which `calc/muls.py` wrote right as the first test file imported it,
and a wrong `add` was VERIFIED. So is any file added there (an `add` that read
`calc/override.json` when it was there), and a code file of any language added at the
root: `lib/adder.js` used `lib/fast.js` when it was there, which `lib/muls.js` wrote. What
a run writes at the root that is no code (`coverage.xml`, a JUnit report) and what it adds
in directories of its own (`coverage/lcov-report/sorter.js`) is output.

Code can put any directory on its import path: a Python module added in a hidden
directory, or in build output (`calc/.fast/fastadd.py`, `target/fastadd.py`, which
`calc/adder.py` put on `sys.path` and imported), counts as well; only installed
environments are not looked in, and native build output (`target/debug/libcalc.so`) is the
build's. So does a package added in a `node_modules` (`lib/node_modules/fastadd/index.js`,
which `require('fastadd')` in `lib/adder.js` found): what is installed there is in place
before the stage, and a run adds nothing to it but its tools' hidden caches.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from assay.code_signals import language_of
from assay.filetree import walk_files
from assay.protect import ProtectedSet
from assay.protected_workspace import INSTALLED_OR_BUILT, copy_in
from assay.untrusted_files import same_entry

__all__ = ["Stamp", "put_back_rewrites", "stamp"]

#: Each file of a workspace: its size, modification time, inode and change time (which no
#: code can set back: a file rewritten and put back as it was, times and all, still moved).
Stamp = dict[str, tuple[int, int, int, int]]

_SKIPPED = frozenset({".git", "target"}) | INSTALLED_OR_BUILT
#: Where a Python module added is not the change's: installed environments.
_ENVIRONMENTS = frozenset({".git", ".venv", "venv", ".tox", ".nox", ".assay-deps"})
#: Where node looks for the packages `require` names.
_PACKAGES = "node_modules"
#: Presence only: a file outside where the tree's code lies is looked for among those added.
_PRESENT = (0, 0, 0, 0)
#: What Python imports a module from: an extension module (`adder.so`, found before
#: `adder.py`) or byte-code too, not only source.
_IMPORTABLE = (".py", ".pyc", ".so", ".pyd")
_NATIVE = (".so", ".pyd")


def stamp(workspace: Path) -> Stamp:
    """The stat of every code file of `workspace` outside installed environments, build
    output and hidden directories, and of every other file below a directory (not the
    root) that holds code."""
    files = walk_files(workspace, _ENVIRONMENTS)
    code_dirs = _code_dirs(rel for rel in files if _watched(rel) and _is_code(rel))
    found: Stamp = {}
    for rel in files:
        if not _watched(rel):
            if _python_module(rel) or _package_code(rel):
                found[rel] = _PRESENT
            continue
        if not (_is_code(rel) or _below(rel, code_dirs)):
            continue
        try:
            info = os.lstat(workspace / rel)
        except OSError:
            continue
        found[rel] = (info.st_size, info.st_mtime_ns, info.st_ino, info.st_ctime_ns)
    return found


def _watched(rel: str) -> bool:
    """Whether `rel` lies outside build output, caches and hidden directories, where what
    the tree holds is its code and data."""
    return not any(part in _SKIPPED or part.startswith(".") for part in rel.split("/")[:-1])


def _python_module(rel: str) -> bool:
    """Whether `rel`, outside where the tree's code lies, is a module Python can import
    from a path code put on `sys.path` (not a native build's library)."""
    if rel.endswith(_NATIVE):
        return False
    return rel.endswith(_IMPORTABLE)


def _package_code(rel: str) -> bool:
    """Whether `rel` is a code file of a package in a `node_modules`, outside its tools'
    hidden caches (`node_modules/.cache`, `.vite`)."""
    parts = rel.split("/")[:-1]
    if _PACKAGES not in parts or any(part.startswith(".") for part in parts):
        return False
    return _is_code(rel)


def _is_code(rel: str) -> bool:
    return bool(language_of(rel)) or rel.endswith(_IMPORTABLE)


def _code_dirs(code: Iterable[str]) -> frozenset[str]:
    """The directories (not the root) that hold one of the files `code`."""
    return frozenset(rel.rpartition("/")[0] for rel in code if "/" in rel)


def _below(rel: str, dirs: frozenset[str]) -> bool:
    """Whether `rel` lies in one of `dirs` or below one."""
    parts = rel.split("/")[:-1]
    return any("/".join(parts[:n]) in dirs for n in range(1, len(parts) + 1))


def put_back_rewrites(
    workspace: Path, tree: Path, before: Stamp, protected: ProtectedSet
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The files of `tree` (the change) that were `before` in `workspace` and have since
    been rewritten or removed there, each put back as the tree has it; and the Python
    modules (source, byte-code or extension) added there since that the tree does not
    hold, each removed (code imports a
    module it finds; what else a run adds, a coverage report's `.js` included, is output)."""
    now = stamp(workspace)
    rewritten: list[str] = []
    for rel, was in sorted(before.items()):
        if now.get(rel) == was or protected.matches(rel) or not _watched(rel):
            continue
        if not os.path.lexists(tree / rel):
            continue  # not the tree's: made by an install step
        if not same_entry(tree, workspace, rel):
            copy_in(tree / rel, workspace, rel)
        # Counted even when its bytes are the tree's again: code that wrote a right copy
        # and put the wrong one back at exit had the tests import the right one.
        rewritten.append(rel)
    # Where the tree's code lies, any file added is one its code can load or read by a
    # relative path; elsewhere only modules, which an import finds on its own.
    code_dirs = _code_dirs(rel for rel in before if _is_code(rel) and os.path.lexists(tree / rel))
    added = [
        rel
        for rel in sorted(now.keys() - before.keys())
        if (
            _python_module(rel)
            or _package_code(rel)
            or (_watched(rel) and rel.endswith(_NATIVE))
            or (_watched(rel) and _below(rel, code_dirs))
            or ("/" not in rel and _is_code(rel))
        )
        and not protected.matches(rel)
        and not os.path.lexists(tree / rel)
    ]
    for rel in added:
        (workspace / rel).unlink()
    return tuple(rewritten), tuple(added)

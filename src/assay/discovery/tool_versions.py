"""Which release of a Python tool a planned command would run, read from its install record.

The tool a check runs (`ProjectEnv.python_tool`) is the project's virtualenv's, another of
its environments' (tox's), else the one on PATH. Its version is the name of the
`NAME-VERSION.dist-info` directory beside it in `lib/pythonX.Y/site-packages`: read as a
directory listing, nothing of the tree is run (an environment in the tree is listed
following no link).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from assay.discovery.model import ProjectEnv
from assay.untrusted_files import list_untrusted

__all__ = ["tool_version"]

_LIB_PYTHON = re.compile(r"python3\.\d+t?")


def tool_version(env: ProjectEnv, root: Path, package: str, executable: str) -> str | None:
    """The version of `package` that `env` would run `executable` from, or None when it
    cannot be told (no such tool, no install record, two of them)."""
    if env.in_tree_python and executable in env.venv_tools:
        prefix = str(Path(env.python).parent.parent)
        return _in_tree(root, prefix, package)
    if executable in env.tool_paths:
        return _in_tree(root, str(Path(env.tool_paths[executable]).parent.parent), package)
    found = shutil.which(executable)
    if found is None:
        return None
    if not Path(found).is_absolute() or _under(Path(found), root):
        return None  # a PATH entry into the tree is the tree's: not read so
    lib = Path(os.path.realpath(found)).parent.parent / "lib"
    versions = {
        v
        for name in _listing(lib)
        if _LIB_PYTHON.fullmatch(name)
        for v in _versions(_listing(lib / name / "site-packages"), package)
    }
    return versions.pop() if len(versions) == 1 else None


def _in_tree(root: Path, prefix: str, package: str) -> str | None:
    if prefix.startswith(("/", "..")) or ".." in Path(prefix).parts:
        return None
    libs = list_untrusted(root, f"{prefix}/lib")
    versions: set[str] = set()
    for lib in libs if isinstance(libs, list) else ():
        if _LIB_PYTHON.fullmatch(lib):
            names = list_untrusted(root, f"{prefix}/lib/{lib}/site-packages")
            versions |= _versions(names if isinstance(names, list) else [], package)
    return versions.pop() if len(versions) == 1 else None


def _versions(names: list[str], package: str) -> set[str]:
    from assay.base_requirements import normalise

    stem = normalise(package)
    found = set()
    for name in names:
        base = name.removesuffix(".dist-info")
        if base != name and "-" in base:
            project, _, version = base.partition("-")
            if normalise(project) == stem:
                found.add(version)
    return found


def _listing(directory: Path) -> list[str]:
    try:
        return os.listdir(directory)
    except OSError:
        return []


def _under(path: Path, root: Path) -> bool:
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(root))
    except ValueError:
        return False
    return True

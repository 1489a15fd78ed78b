"""The version file a Python build backend writes into the tree: left out of lint walks.

setuptools-scm (`write_to`, `version_file`) and hatch-vcs (`version-file`) write the
project's version into a module at build time, from a template of their own release. The file is no author's code: a repository ignores it (`.gitignore`), so
the maintainers' ruff never walks it, and an sdist ships the one its build wrote. Linted,
it fails a clean tree for a template's style (filelock 3.16.1 and platformdirs 4.3.6: a
public module without a docstring; iniconfig 2.3.1: an unsorted `__all__`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from assay.tools.python_requirements import read_pyproject

#: Where each backend's configuration names the file: (table path, key).
_VERSION_FILE_KEYS = (
    (("tool", "setuptools_scm"), "write_to"),
    (("tool", "setuptools_scm"), "version_file"),
    (("tool", "hatch", "build", "hooks", "vcs"), "version-file"),
    (("tool", "hatch", "build", "hooks", "vcs"), "version_file"),
)


def generated_version_files(root: Path) -> list[str]:
    """The version files the build backend of the project at `root` writes, as paths
    relative to `root` (only ones that stay inside it)."""
    pyproject = read_pyproject(root)
    found: list[str] = []
    for table_path, key in _VERSION_FILE_KEYS:
        value = _table(pyproject, table_path).get(key)
        if isinstance(value, str) and _is_relative_inside(value):
            found.append(str(PurePosixPath(value)))
    return list(dict.fromkeys(found))


def _table(data: Mapping[str, Any], path: tuple[str, ...]) -> Mapping[str, Any]:
    for name in path:
        nested = data.get(name)
        if not isinstance(nested, Mapping):
            return {}
        data = nested
    return data


def _is_relative_inside(value: str) -> bool:
    path = PurePosixPath(value)
    return bool(value) and not path.is_absolute() and ".." not in path.parts and "\\" not in value

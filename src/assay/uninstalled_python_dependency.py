"""A type check that failed only for want of modules the project declares: not installed.

mypy and pyright report an import they cannot resolve as an error. Where the module is one
the project lists among its dependencies, the error says nothing of the code: the
environment lacks what the maintainers install (packaging 26.4's mypy checks for Python 3.10,
so it follows `import tomli`, a dependency declared `tomli; python_version < '3.11'` that a
3.11 environment never installs). The check could not be made (`toolchain_missing`,
UNVERIFIED), as when a node check cannot load a declared package.

Only modules pyproject.toml declares count (its dependencies, extras, dependency groups and
Poetry's tables), by the name they are imported under; a module nothing declares (a change
that imports a new one, or misspells one) stays a failure, as does any other finding beside
them. pyproject.toml is read as untrusted (no links, bounded).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from assay.evidence import Diagnostic
from assay.tools.python_requirements import read_pyproject, requirement_name

__all__ = ["uninstalled_python_dependency"]

#: mypy's and pyright's words for an import they found no module for (the name captured).
_UNRESOLVED = (
    re.compile(r'^Cannot find implementation or library stub for module named "([\w.]+)"'),
    re.compile(r'^Import "([\w.]+)" could not be resolved$'),
)


def uninstalled_python_dependency(diagnostics: Sequence[Diagnostic], cwd: str) -> str | None:
    """The first module the errors in `diagnostics` could not import, when every error is
    such an import of a module the pyproject.toml at `cwd` declares; else None."""
    errors = [d for d in diagnostics if d.severity == "error"]
    modules = [_unresolved(d.message) for d in errors]
    if not modules or None in modules:
        return None
    declared = _declared(read_pyproject(Path(cwd)))
    names = sorted({m for m in modules if m is not None})
    if not all(_distribution(name) in declared for name in names):
        return None
    return names[0]


def _unresolved(message: str) -> str | None:
    for pattern in _UNRESOLVED:
        match = pattern.match(message)
        if match:
            return match.group(1)
    return None


def _distribution(module: str) -> str:
    """The project name a module is most often published under: its top-level package,
    normalised (`tomli`, `typing_extensions` -> `typing-extensions`)."""
    return requirement_name(module.split(".")[0])


def _declared(pyproject: Mapping[str, Any]) -> set[str]:
    """The normalised names of every requirement pyproject.toml lists."""
    return {name for name in map(requirement_name, _requirements(pyproject)) if name}


def _requirements(pyproject: Mapping[str, Any]) -> Iterator[str]:
    project = pyproject.get("project")
    if isinstance(project, dict):
        yield from _strings(project.get("dependencies"))
        extras = project.get("optional-dependencies")
        for listed in extras.values() if isinstance(extras, dict) else ():
            yield from _strings(listed)
    groups = pyproject.get("dependency-groups")
    for listed in groups.values() if isinstance(groups, dict) else ():
        yield from _strings(listed)
    tool = pyproject.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    if isinstance(poetry, dict):
        tables = [poetry.get("dependencies"), poetry.get("dev-dependencies")]
        poetry_groups = poetry.get("group")
        for group in poetry_groups.values() if isinstance(poetry_groups, dict) else ():
            tables.append(group.get("dependencies") if isinstance(group, dict) else None)
        for table in tables:
            yield from (n for n in (table if isinstance(table, dict) else ()) if isinstance(n, str))


def _strings(listed: object) -> Iterable[str]:
    return (s for s in (listed if isinstance(listed, list) else ()) if isinstance(s, str))

"""A type check or a test run that failed only for want of modules the project declares:
not installed.

mypy and pyright report an import they cannot resolve as an error; a test runner cannot
import a test module that imports it (iso8601's tests need hypothesis, which only its
Poetry dev group declares), and no test runs. Where the module is one
the project lists among its dependencies, the error says nothing of the code: the
environment lacks what the maintainers install (packaging 26.4's mypy checks for Python 3.10,
so it follows `import tomli`, a dependency declared `tomli; python_version < '3.11'` that a
3.11 environment never installs). The check could not be made (`toolchain_missing`,
UNVERIFIED), as when a node check cannot load a declared package.

Only modules the project's manifests at the root declare count (pyproject.toml's
dependencies, extras, dependency groups and Poetry's tables, setup.py's, tox's deps, nox's
installs, requirement files: as `base_requirements.declared_in_tree` reads them; pyproject-
hooks' tests import testpath, which only its dev-requirements.txt declares), by the name they
are imported under, and not the project's own package; a module nothing declares (a change
that imports a new one, or misspells one) stays a failure, as does any other finding beside
them. The manifests are read as untrusted (no links, bounded).

pytest's own configuration may name a module too: a `filterwarnings` entry whose category is
a dependency's (humanize 4.11.0's `ignore:...:coverage.exceptions.CoverageWarning`, after an
`error` entry). Without that module installed pytest stops at start-up and runs no test. That
module is the configuration's, not the code's, and it need not be declared by its own name
(coverage comes with pytest-cov): one not found, and not in the tree, is not installed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from assay.base_requirements import declared_in_tree, normalise
from assay.evidence import Diagnostic

__all__ = [
    "uninstalled_filter_module",
    "uninstalled_python_dependency",
    "uninstalled_test_import",
]

#: mypy's and pyright's words for an import they found no module for (the name captured).
_UNRESOLVED = (
    re.compile(r'^Cannot find implementation or library stub for module named "([\w.]+)"'),
    re.compile(r'^Import "([\w.]+)" could not be resolved$'),
)


def uninstalled_python_dependency(diagnostics: Sequence[Diagnostic], cwd: str) -> str | None:
    """The first module the errors in `diagnostics` could not import, when every error is
    such an import of a module the manifests at `cwd` declare; else None."""
    errors = [d for d in diagnostics if d.severity == "error"]
    modules = [_unresolved(d.message) for d in errors]
    if not modules or None in modules:
        return None
    declared = _declared(cwd)
    names = sorted({m for m in modules if m is not None})
    if not all(normalise(name.split(".")[0]) in declared for name in names):
        return None
    return names[0]


#: What Python says when an import finds no module (the name captured).
_NOT_FOUND = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")


def uninstalled_test_import(output: str, cwd: str) -> str | None:
    """The first module a test run's output says could not be imported, when every such
    module is one the manifests at `cwd` declare; else None. The caller makes sure no
    test ran and none failed: only collection broke."""
    names = sorted(set(_NOT_FOUND.findall(output)))
    if not names:
        return None
    declared = _declared(cwd)
    if not all(normalise(name.split(".")[0]) in declared for name in names):
        return None
    return names[0]


#: pytest's words for a `filterwarnings` category whose module it could not import.
_FILTER_MODULE = re.compile(r"Failed to import filter module '([\w.]+)'")


def uninstalled_filter_module(output: str, cwd: str) -> str | None:
    """The first module pytest's warning filters name that `output` says could not be
    imported because no such module was found, when none of them is in the tree at `cwd`
    (a module of the project's that a change broke stays its failure); else None."""
    names = sorted(set(_FILTER_MODULE.findall(output)))
    not_found = {name.split(".")[0] for name in _NOT_FOUND.findall(output)}
    if not names or not all(name.split(".")[0] in not_found for name in names):
        return None
    if any(_in_tree(cwd, name.split(".")[0]) for name in names):
        return None
    return names[0]


def _in_tree(cwd: str, name: str) -> bool:
    """A package or module of that name at the root or under `src/` (or anything else there
    by that name: the tree's, not an installed one)."""
    places = (os.path.join(cwd, *parts) for parts in ((name,), ("src", name)))
    return any(os.path.lexists(p) or os.path.lexists(p + ".py") for p in places)


def _unresolved(message: str) -> str | None:
    for pattern in _UNRESOLVED:
        match = pattern.match(message)
        if match:
            return match.group(1)
    return None


def _declared(cwd: str) -> frozenset[str]:
    """The normalised names of the distributions the manifests at `cwd` require, the
    project's own left out: a top-level module is most often published under its name
    (`tomli`; `typing_extensions` as `typing-extensions`)."""
    declared = declared_in_tree(Path(cwd))
    return declared.names - declared.projects

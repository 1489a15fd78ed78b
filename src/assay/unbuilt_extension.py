"""Tests skipped because the project's own extension module is not built: they did not run.

pyrsistent's sdist builds `pvectorc` from `pvectorcmodule.c` (setup.py's `Extension`), and
its vector tests `pytest.importorskip('pvectorc')`. Verified in an environment where the
tree was never built, 101 tests skipped and the run passed: a wrong value in the C source
was VERIFIED, where the maintainers' build (`pip install -e .`, tox) fails it. A pass that
left out the tests of code the project compiles is no pass: the check could not be made
there, as when the project's own package is not installed (`assay.own_package`).

Only a module setup.py declares as an `Extension` counts: a skip for an optional
dependency (`importorskip('numpy')`) is the project's choice, not a missing build."""

from __future__ import annotations

import re
from collections.abc import Iterable

from assay.evidence import TestCase

#: pytest's reason for a test `pytest.importorskip` skipped (the module's name captured).
_IMPORT_SKIP = re.compile(r"could not import '([A-Za-z_][\w.]*)'")

#: An extension module setup.py declares: `Extension('pkg._speedups', ...)`, by position
#: or as `name=`.
_EXTENSION = re.compile(r"\bExtension\(\s*(?:name\s*=\s*)?[rbuRBU]?(['\"])([A-Za-z_][\w.]*)\1")


def declared_extensions(setup_py: str) -> frozenset[str]:
    """The dotted names of the extension modules `setup_py`'s text declares."""
    return frozenset(match[2] for match in _EXTENSION.finditer(setup_py))


def unbuilt_extension_skips(cases: Iterable[TestCase], cwd: str) -> tuple[str, int] | None:
    """The project's own extension module the skipped tests among `cases` could not import,
    and how many such tests were skipped; None when none was skipped for that."""
    wanted: dict[str, int] = {}
    for case in cases:
        if case.outcome == "skipped" and case.message:
            match = _IMPORT_SKIP.search(case.message)
            if match is not None:
                wanted[match[1]] = wanted.get(match[1], 0) + 1
    if not wanted:
        return None
    ours = declared_extensions(_setup_py(cwd)) & wanted.keys()
    if not ours:
        return None
    name = min(ours)
    return name, wanted[name]


def _setup_py(cwd: str) -> str:
    from assay.discovery.files import RepoFiles, UnreadableFile

    try:
        return RepoFiles(cwd).read_text("setup.py") or ""
    except UnreadableFile:
        return ""

"""What a tox environment or nox session answers, from its name alone.

Shared by the reading of tox and nox configuration (which environments' commands are
checks) and the recognising of `tox -e NAME` / `nox -s NAME` lines (CI steps, docs):
a line that names only environments that are not the tests is not a test check.

Pure.
"""

from __future__ import annotations

import re

from assay.tools.spec import SCRIPT_KINDS
from assay.verdict import Kind

#: Environment names and the kind their commands answer.
_ENV_KINDS: dict[str, Kind] = {
    **SCRIPT_KINDS,
    "": Kind.TEST,  # the bare [testenv], and tox 4's env_run_base
    "py": Kind.TEST,
    "unit": Kind.TEST,
    "type": Kind.TYPECHECK,
    "typing": Kind.TYPECHECK,
    "pyright": Kind.TYPECHECK,
    "flake8": Kind.LINT,
    "style": Kind.LINT,
    "ruff": Kind.LINT,
    "pre-commit": Kind.LINT,
}

#: Environments that run no tests and answer no kind assay checks: coverage combining and
#: reporting, documentation, formatting, packaging and release chores.
NOT_CHECKS = frozenset(
    {
        "coverage",
        "cov",
        "combine",
        "report",
        "docs",
        "doc",
        "readme",
        "spell",
        "changelog",
        "fix",
        "format",
        "pkg_meta",
        "pkg-meta",
        "dev",
        "devenv",
        "clean",
        "release",
        "publish",
        "upload",
        "bump",
    }
)

# py311, py3, pypy3.10, 3.14, 3.14t: an interpreter's name is a test environment's.
_INTERPRETER = re.compile(r"py\d*|py3\d*|pypy3?[\d.]*|\d+\.\d+t?")


def env_kind(name: str) -> Kind | None:
    """The kind a tox env or nox session named `name` answers, if its name (or, for
    `py311-lint`, one of its factors) says."""
    # tox joins factors with `-`; a nox session is a Python function, named with `_`
    # (stamina's `mypy_pkg`, `pre_commit`).
    name = name.lower().replace("_", "-")
    parts = (name, *name.split("-"))
    named = [_ENV_KINDS[part] for part in parts if part in _ENV_KINDS]
    # A factor that names a check decides over the interpreter beside it: `py312-mypy`
    # type-checks, with Python 3.12.
    decided = next((kind for kind in named if kind is not Kind.TEST), None)
    if decided is not None:
        return decided
    if named or any(_INTERPRETER.fullmatch(p) or p.startswith("test") for p in parts):
        return Kind.TEST
    return None


def runs_no_tests(name: str) -> bool:
    """Whether the environment `name` is known not to run the tests."""
    kind = env_kind(name)
    if kind is not None:
        return kind is not Kind.TEST
    return name.lower() in NOT_CHECKS

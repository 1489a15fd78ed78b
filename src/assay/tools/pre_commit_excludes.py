"""What a project's pre-commit hooks leave out of its linters' walks, left out of theirs here.

A project that lints through pre-commit says there which files its linter never sees: a
hook's `exclude` (and the configuration's own), a regular expression matched against each
file's path. exceptiongroup 1.3.2 excludes `tests/test_catch_py311.py` from its ruff hook:
the file uses `except*`, newer than the Python its configuration targets, and its tests
collect it only on 3.11 and later. assay runs ruff from the project's configuration, so
without the hook's word ruff reports 27 findings on a tree its maintainers find clean.

ruff and flake8 take glob patterns, not expressions, so only an expression that is a path
or a choice of paths (`^(docs/|tests/data/.*)$`, verbose or not) is taken, each as the
path it names; any other alternative is left out, so that less is ever excluded than the
project excludes, never more. ruff's hooks that lint (`ruff`, `ruff-check`) and flake8's
are read; a formatter's hook says nothing of what is linted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from assay.evidence import Check
from assay.installed_env_exclusion import exclude_from_lint_walks, runs_tool
from assay.tools.python_requirements import pre_commit_tools, read_pre_commit_config

__all__ = ["hook_exclusions", "with_hook_exclusions"]

#: The hooks that lint, by the package whose repository holds them.
LINT_HOOKS = {"ruff": frozenset({"ruff", "ruff-check"}), "flake8": frozenset({"flake8"})}

#: A path as an expression writes it: word characters, `/`, `-`, and dots (escaped or not:
#: an unescaped dot matches itself too).
_PATH = re.compile(r"(?:[\w/-]|\\?\.)+")


def with_hook_exclusions(checks: Sequence[Check], root: Path) -> list[Check]:
    """`checks`, each ruff and flake8 lint told to leave out what the project's pre-commit
    hook for it excludes."""
    excluded = hook_exclusions(read_pre_commit_config(root))
    prepared = []
    for check in checks:
        linter = _linter(check.argv)
        paths = excluded.get(linter, ()) if linter is not None else ()
        if paths:
            [check] = exclude_from_lint_walks([check], root, paths)
        prepared.append(check)
    return prepared


def hook_exclusions(config: Mapping[Any, Any]) -> dict[str, tuple[str, ...]]:
    """`linter -> paths` its pre-commit hooks exclude, with the configuration's own `exclude`."""
    everywhere = _paths(config.get("exclude"))
    found: dict[str, dict[str, None]] = {}
    for package, repo in pre_commit_tools(config):
        hooks = repo.get("hooks")
        for hook in hooks if isinstance(hooks, list) else ():
            if isinstance(hook, dict) and hook.get("id") in LINT_HOOKS.get(package, ()):
                paths = found.setdefault(package, dict.fromkeys(everywhere))
                paths.update(dict.fromkeys(_paths(hook.get("exclude"))))
    return {package: tuple(paths) for package, paths in found.items() if paths}


def _linter(argv: Sequence[str]) -> str | None:
    if runs_tool(argv, "flake8"):
        return "flake8"
    if runs_tool(argv, "ruff") and "format" not in argv:
        return "ruff"
    return None


def _paths(expression: object) -> list[str]:
    """The paths an `exclude` expression names (see the module docstring)."""
    if not isinstance(expression, str) or len(expression) > 10_000:
        return []
    text = expression.strip()
    if text.startswith("(?x)"):  # verbose: whitespace and comments are not the expression's
        text = re.sub(r"\s+|#[^\n]*", "", text[4:])
    text = text.removeprefix("^").removesuffix("$")
    if text.startswith("(") and text.endswith(")") and text.count("(") == 1:
        text = text[1:-1].removeprefix("?:")
    paths = []
    for alternative in text.split("|"):
        alternative = alternative.removeprefix("^").removesuffix("$").removesuffix(".*")
        if _PATH.fullmatch(alternative):
            path = alternative.replace("\\.", ".").strip("/")
            if path and not path.startswith(".."):
                paths.append(path)
    return paths

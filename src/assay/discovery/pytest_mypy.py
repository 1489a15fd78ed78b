"""A pytest command that only type-checks: pytest-mypy's `pytest --mypy -m mypy PATHS`,
which makes one mypy run over the Python files under PATHS and selects only its items.

tinydb's CI type-checks so (`pytest --mypy -m mypy tinydb tests`). Read as a test
command it was ranked among the test runs and dropped, and only the configured `mypy
tinydb` ran: a type error in its tests was VERIFIED. It is a type check: mypy over the
same paths, with the options pytest-mypy passes on.
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.discovery.pytest_reach import PYTEST_VALUED

#: pytest-mypy's options that carry over to mypy's command line, with mypy's words.
_CARRIED = {"--mypy-ignore-missing-imports": ("--ignore-missing-imports",)}
_CARRIED_VALUED = {"--mypy-config-file": "--config-file"}


def mypy_only_args(pytest_args: Sequence[str]) -> tuple[str, ...] | None:
    """mypy's arguments for the pytest arguments `pytest_args` when they select pytest-mypy's
    items alone (`--mypy` with the marker expression `mypy`) over paths it names; None for
    any other run (one that runs tests too is a test run; pytest-mypy then reports the type
    errors as failed tests)."""
    if "--mypy" not in pytest_args or not _marks_only_mypy(pytest_args):
        return None
    options: list[str] = []
    paths: list[str] = []
    words = iter(pytest_args)
    for word in words:
        name, equals, value = word.partition("=")
        if name in _CARRIED_VALUED:
            value = value if equals else next(words, "")
            options += [_CARRIED_VALUED[name], value]
        elif word in _CARRIED:
            options += _CARRIED[word]
        elif word in PYTEST_VALUED:
            next(words, None)
        elif not word.startswith("-"):
            paths.append(word.partition("::")[0])
    return (*options, *paths) if paths else None


def _marks_only_mypy(args: Sequence[str]) -> bool:
    """Whether `args` select tests by the marker expression `mypy` and nothing else."""
    for at, word in enumerate(args):
        if word == "-m":
            return tuple(args[at + 1 : at + 2]) == ("mypy",)
        if word.startswith("-m") and not word.startswith("--"):
            return word[2:].lstrip("=") == "mypy"
    return False

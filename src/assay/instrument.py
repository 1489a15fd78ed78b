"""Asking each tool for machine-readable output: the flags and report paths `run_check` adds.

Pure: from a check, the probed checker and a report directory to the argv and
environment to run. Reports go to the report directory, which lies outside the
workspace, so code under test cannot write its own verdict where assay reads it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from assay.evidence import Check, CheckerId
from assay.parsers import report_path

#: mypy gained `--output=json` in 1.11; older versions are parsed as text.
MYPY_JSON_SINCE = (1, 11)


@dataclass(frozen=True, slots=True)
class Instrumented:
    """What will actually run for a check."""

    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)


def instrument(check: Check, checker: CheckerId | None, report_dir: Path) -> Instrumented:
    """The argv and env overlay that make `check.tool` write output assay can parse."""
    rule = _RULES.get(check.tool or "")
    argv, env = tuple(check.argv), dict(check.env)
    if rule is None:
        return Instrumented(argv, env)
    return rule(check, checker, report_dir, argv, env)


def _has(argv: tuple[str, ...], *prefixes: str) -> bool:
    return any(arg == p or arg.startswith(p + "=") for arg in argv for p in prefixes)


def _after_subcommand(argv: tuple[str, ...], subcommand: str, *flags: str) -> tuple[str, ...]:
    """`flags` inserted right after `subcommand` (before package lists and `--`)."""
    if subcommand not in argv:
        return argv
    at = argv.index(subcommand) + 1
    return (*argv[:at], *flags, *argv[at:])


_Rule = Callable[[Check, CheckerId | None, Path, tuple[str, ...], dict[str, str]], Instrumented]


def _pytest(
    check: Check,
    checker: CheckerId | None,
    reports: Path,
    argv: tuple[str, ...],
    env: dict[str, str],
) -> Instrumented:
    # Appended last so that it wins over a --junitxml the project configured.
    return Instrumented((*argv, f"--junitxml={report_path(reports, check, 'xml')}"), env)


def _go(
    check: Check,
    checker: CheckerId | None,
    reports: Path,
    argv: tuple[str, ...],
    env: dict[str, str],
) -> Instrumented:
    if argv[1:2] == ("test",) and not _has(argv, "-json"):
        argv = _after_subcommand(argv, "test", "-json")
    return Instrumented(argv, env)


def _ruff(
    check: Check,
    checker: CheckerId | None,
    reports: Path,
    argv: tuple[str, ...],
    env: dict[str, str],
) -> Instrumented:
    if "format" not in argv and not _has(argv, "--output-format"):
        argv = (*argv, "--output-format=json")
    return Instrumented(argv, env)


def _eslint(
    check: Check,
    checker: CheckerId | None,
    reports: Path,
    argv: tuple[str, ...],
    env: dict[str, str],
) -> Instrumented:
    if not _has(argv, "-f", "--format"):
        argv = (*argv, "-f", "json")
    return Instrumented(argv, env)


def _mypy(
    check: Check,
    checker: CheckerId | None,
    reports: Path,
    argv: tuple[str, ...],
    env: dict[str, str],
) -> Instrumented:
    if _version_at_least(checker, MYPY_JSON_SINCE) and not _has(argv, "--output", "-O"):
        argv = (*argv, "--output=json")
    return Instrumented(argv, env)


def _cargo(
    check: Check,
    checker: CheckerId | None,
    reports: Path,
    argv: tuple[str, ...],
    env: dict[str, str],
) -> Instrumented:
    subcommand = argv[1] if len(argv) > 1 else ""
    if subcommand in ("build", "check", "test", "clippy") and not _has(argv, "--message-format"):
        argv = _after_subcommand(argv, subcommand, "--message-format=json")
    return Instrumented(argv, env)


def _tsc(
    check: Check,
    checker: CheckerId | None,
    reports: Path,
    argv: tuple[str, ...],
    env: dict[str, str],
) -> Instrumented:
    # One line per diagnostic, no colour: the form the text parser reads.
    if not _has(argv, "--pretty"):
        argv = (*argv, "--pretty", "false")
    return Instrumented(argv, env)


def _pyright(
    check: Check,
    checker: CheckerId | None,
    reports: Path,
    argv: tuple[str, ...],
    env: dict[str, str],
) -> Instrumented:
    if "--outputjson" not in argv:
        argv = (*argv, "--outputjson")
    return Instrumented(argv, env)


def _jest(
    check: Check,
    checker: CheckerId | None,
    reports: Path,
    argv: tuple[str, ...],
    env: dict[str, str],
) -> Instrumented:
    return Instrumented(
        (*argv, "--json", f"--outputFile={report_path(reports, check, 'json')}"), env
    )


def _vitest(
    check: Check,
    checker: CheckerId | None,
    reports: Path,
    argv: tuple[str, ...],
    env: dict[str, str],
) -> Instrumented:
    return Instrumented(
        (*argv, "--reporter=json", f"--outputFile={report_path(reports, check, 'json')}"), env
    )


def _node_test(
    check: Check,
    checker: CheckerId | None,
    reports: Path,
    argv: tuple[str, ...],
    env: dict[str, str],
) -> Instrumented:
    # Node picks the spec reporter on a terminal and TAP otherwise; ask for TAP explicitly.
    if not _has(argv, "--test-reporter"):
        argv = (argv[0], "--test-reporter=tap", *argv[1:])
    return Instrumented(argv, env)


def _compileall(
    check: Check,
    checker: CheckerId | None,
    reports: Path,
    argv: tuple[str, ...],
    env: dict[str, str],
) -> Instrumented:
    # Byte-code goes next to the reports, not into the workspace's __pycache__ directories.
    env.setdefault("PYTHONPYCACHEPREFIX", str(reports / "pycache"))
    return Instrumented(argv, env)


_RULES: Mapping[str, _Rule] = {
    "pytest": _pytest,
    "go": _go,
    "ruff": _ruff,
    "eslint": _eslint,
    "mypy": _mypy,
    "cargo": _cargo,
    "tsc": _tsc,
    "pyright": _pyright,
    "jest": _jest,
    "vitest": _vitest,
    "node-test": _node_test,
    "compileall": _compileall,
}

_NUMBERS = re.compile(r"\d+")


def _version_at_least(checker: CheckerId | None, wanted: tuple[int, ...]) -> bool:
    if checker is None:
        return False
    numbers = tuple(int(n) for n in _NUMBERS.findall(checker.version)[: len(wanted)])
    return numbers >= wanted

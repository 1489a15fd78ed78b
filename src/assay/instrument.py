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
    reports: tuple[Path, ...] = ()
    """Report files the tool was asked to write: whatever is there before it runs is stale."""


@dataclass(frozen=True, slots=True)
class _Request:
    """One check to instrument, as every rule sees it."""

    check: Check
    checker: CheckerId | None
    report_dir: Path

    @property
    def argv(self) -> tuple[str, ...]:
        return tuple(self.check.argv)

    def has(self, *flags: str) -> bool:
        """Whether the argv already sets any of `flags` (as `-f x` or `--flag=x`)."""
        return any(arg == f or arg.startswith(f + "=") for arg in self.argv for f in flags)

    def report(self, suffix: str) -> Path:
        return report_path(self.report_dir, self.check, suffix)

    def runs(self, argv: tuple[str, ...], *reports: Path) -> Instrumented:
        """`argv` with the check's own environment, writing `reports`."""
        return Instrumented(argv, dict(self.check.env), reports)


def instrument(check: Check, checker: CheckerId | None, report_dir: Path) -> Instrumented:
    """The argv and env overlay that make `check.tool` write output assay can parse."""
    rule = _RULES.get(check.tool or "")
    request = _Request(check, checker, report_dir)
    return request.runs(request.argv) if rule is None else rule(request)


def _after_subcommand(argv: tuple[str, ...], subcommand: str, *flags: str) -> tuple[str, ...]:
    """`flags` inserted right after `subcommand` (before package lists and `--`)."""
    if subcommand not in argv:
        return argv
    at = argv.index(subcommand) + 1
    return (*argv[:at], *flags, *argv[at:])


def _pytest(request: _Request) -> Instrumented:
    report = request.report("xml")
    # Appended last so that it wins over a --junitxml the project configured.
    argv = (*request.argv, f"--junitxml={report}")
    return request.runs(argv, report)


def _go(request: _Request) -> Instrumented:
    argv = request.argv
    if argv[1:2] == ("test",) and not request.has("-json"):
        argv = _after_subcommand(argv, "test", "-json")
    return request.runs(argv)


def _ruff(request: _Request) -> Instrumented:
    argv = request.argv
    if "format" not in argv and not request.has("--output-format"):
        argv = (*argv, "--output-format=json")
    return request.runs(argv)


def _eslint(request: _Request) -> Instrumented:
    argv = request.argv
    if not request.has("-f", "--format"):
        argv = (*argv, "-f", "json")
    return request.runs(argv)


def _mypy(request: _Request) -> Instrumented:
    argv = request.argv
    if _version_at_least(request.checker, MYPY_JSON_SINCE) and not request.has("--output", "-O"):
        argv = (*argv, "--output=json")
    return request.runs(argv)


def _cargo(request: _Request) -> Instrumented:
    argv = request.argv
    subcommand = argv[1] if len(argv) > 1 else ""
    if subcommand in ("build", "check", "test", "clippy") and not request.has("--message-format"):
        argv = _after_subcommand(argv, subcommand, "--message-format=json")
    return request.runs(argv)


def _tsc(request: _Request) -> Instrumented:
    argv = request.argv
    # One line per diagnostic, no colour: the form the text parser reads.
    if not request.has("--pretty"):
        argv = (*argv, "--pretty", "false")
    return request.runs(argv)


def _pyright(request: _Request) -> Instrumented:
    argv = request.argv
    if "--outputjson" not in argv:
        argv = (*argv, "--outputjson")
    return request.runs(argv)


def _jest(request: _Request) -> Instrumented:
    report = request.report("json")
    argv = (*request.argv, "--json", f"--outputFile={report}")
    return request.runs(argv, report)


def _vitest(request: _Request) -> Instrumented:
    report = request.report("json")
    argv = (*request.argv, "--reporter=json", f"--outputFile={report}")
    return request.runs(argv, report)


def _node_test(request: _Request) -> Instrumented:
    argv = request.argv
    # Node picks the spec reporter on a terminal and TAP otherwise; ask for TAP explicitly.
    if not request.has("--test-reporter"):
        argv = (argv[0], "--test-reporter=tap", *argv[1:])
    return request.runs(argv)


def _compileall(request: _Request) -> Instrumented:
    # Byte-code goes next to the reports, not into the workspace's __pycache__ directories.
    env = {"PYTHONPYCACHEPREFIX": str(request.report_dir / "pycache"), **request.check.env}
    return Instrumented(request.argv, env)


_RULES: Mapping[str, Callable[[_Request], Instrumented]] = {
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

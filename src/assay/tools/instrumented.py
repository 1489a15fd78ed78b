"""What runs for one check once its tool is asked for machine-readable output: the
request a tool's instrumentation rule reads, and what it answers.

Apart from the declarations (`assay.tools.spec`): every command is instrumented, and
one no tool declares needs these two values and nothing of the declarations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from assay.evidence import Check, CheckerId


@dataclass(frozen=True, slots=True)
class Instrumented:
    """What will actually run for a check."""

    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    reports: tuple[Path, ...] = ()
    """Report files the tool was asked to write: whatever is there before it runs is stale."""
    wrapper: tuple[str, ...] = ()
    """A command that runs `argv` (`sh -c SCRIPT`, the program as `$0`): the check still
    runs the very binary that was found, and its outcome is the wrapper's."""
    prepare: Preparation | None = None
    """A command to run first, in the same sandbox and directory."""


@dataclass(frozen=True, slots=True)
class Preparation:
    """A command run before a check (a compile-only warm-up), whose outcome is not the
    check's: what it readies is there for the check or it is not, and the check's own run
    says what came of that."""

    wrapper: tuple[str, ...]
    """Runs `argv` with the binary that was found as `$0`, as `Instrumented.wrapper`."""
    argv: tuple[str, ...]
    env: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Request:
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
        from assay.parsers import report_path

        return report_path(self.report_dir, self.check, suffix)

    def runs(self, argv: tuple[str, ...], *reports: Path) -> Instrumented:
        """`argv` with the check's own environment, writing `reports`."""
        return Instrumented(argv, dict(self.check.env), reports)

    def wrapped(self, wrapper: tuple[str, ...]) -> Instrumented:
        """The check's argv as it is, run by `wrapper`."""
        return Instrumented(self.argv, dict(self.check.env), wrapper=wrapper)


#: Asks a tool for machine-readable output: the argv, env and report files to run.
Rule = Callable[[Request], Instrumented]


def probed_program_in_script(request: Request) -> Instrumented:
    """A planned `sh -c SCRIPT PROGRAM ARGS...` check (a build that configures, then
    builds) run with the probed binary as the script's `$0`, so the check runs the tool
    its checker names; any other argv runs as it is."""
    argv = request.argv
    path = request.checker.path if request.checker else None
    if argv[:2] == ("sh", "-c") and len(argv) >= 4 and path:
        argv = (*argv[:3], path, *argv[4:])
    return request.runs(argv)

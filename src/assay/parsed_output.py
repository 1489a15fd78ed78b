"""What a parser read from a tool's output: the vocabulary `classify` and the parsers share.

It sits beside `assay.evidence`, below both: the parsers (`assay.parsers`) produce it and
`classify` reads it, so neither has to import the other.
"""

from __future__ import annotations

from dataclasses import dataclass

from assay.evidence import Diagnostic, TestCase, TestCounts

__all__ = ["ParsedOutput", "Reading"]


@dataclass(frozen=True, slots=True)
class Reading:
    """What one output channel of a test runner said about a run, for `assay.channels`
    to hold against the run's other channels and its exit code.

    A runner's channels (its printed summary, its structured report, its per-test listing)
    are written separately; code under test that forges one rarely gets every other one
    to agree. Counts are counted the same way across one run's readings (by the parser
    that made them), so they can be compared as they are."""

    channel: str
    """How a reader names it: "pytest's summary line", "the JUnit report"."""
    appeared: bool = True
    """False: the runner writes this channel on every run that finishes, and it never
    appeared."""
    ran: int | None = None
    """Tests this channel says ran; None when it gives no count."""
    failed: int | None = None
    """Tests this channel says failed or errored; None when it gives no count."""


@dataclass(frozen=True, slots=True)
class ParsedOutput:
    """What could be read from a tool's output."""

    diagnostics: tuple[Diagnostic, ...] = ()
    tests: TestCounts | None = None
    """None when no test count could be read at all."""
    test_cases: tuple[TestCase, ...] = ()
    failure_recognized: bool = False
    """The output shows why it failed (failed tests, errors): a non-zero exit is a real `fail`."""
    no_tests_reported: bool = False
    """The runner said it found no tests (pytest's exit 5, "no test files")."""
    report_found: bool = False
    """A structured report (JUnit XML, go test -json, jest JSON) was read."""
    report_refused: str | None = None
    """Why the report file that was there was not read (a link, a FIFO, too large): it
    counts as no report, and the reason is worth telling."""
    missing_command: str | None = None
    """A command the tool's recipe or script runs was not found (make's `Error 127`): the
    check could not be made, which is a missing toolchain, not a failing one."""
    readings: tuple[Reading, ...] = ()
    """Each channel of a test run, as it said (see `Reading`); empty: nothing to compare."""
    hung_tests: tuple[str, ...] = ()
    """Tests the runner itself stopped at its own per-test timeout (ctest's `***Timeout`):
    hangs, which say nothing about the code either way, so they are not failures. For a run
    assay stopped at its deadline, those its report shows started and never ended."""
    installed_copies: tuple[tuple[str, str], ...] = ()
    """The project's own packages the tests imported from an installed copy, each with the
    file it came from (`assay.own_package.installed_copies`): the tree went untested."""
    tool_crashed: str | None = None
    """The tool's own words for crashing in its own code before it finished (mypy's
    `INTERNAL ERROR`): its run says nothing of the code either way."""
    printed: str | None = None
    """What the tool wrote as a person reads it, where its output is machine-readable
    (`go test -json`'s output events, decoded): a failure's reason is cut from this."""

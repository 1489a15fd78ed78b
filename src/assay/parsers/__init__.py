"""Reading what tools said: diagnostics and test results, from structured reports
where a tool writes one and from text where it does not.

`parse_output` is the one entry point `classify` uses; it dispatches on the
check's logical tool and never raises (a parser that fails yields nothing parsed,
which can only make a verdict less favourable, never a pass).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from assay.evidence import Check, Diagnostic, TestCase, TestCounts
from assay.process import ProcessResult


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


def parse_output(check: Check, result: ProcessResult, report_dir: Path | None = None) -> ParsedOutput:
    """Parse `result` as the output of `check.tool`; unknown tools get the generic text reader."""
    from assay.parsers import generic

    try:
        return generic.parse(check, result, report_dir)
    except Exception:  # a parser bug must not decide a verdict
        return ParsedOutput()

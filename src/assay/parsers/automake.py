"""`make check` under Automake's test harness: a line per test, and a summary per directory.

    PASS: test_add
    FAIL: test_mul
    ============================================================================
    Testsuite summary for calc 1.0
    ============================================================================
    # TOTAL: 2
    # PASS:  1
    # SKIP:  0
    # XFAIL: 0
    # FAIL:  1
    # XPASS: 0
    # ERROR: 0

A recursive `make check` prints one summary per directory with tests; they are added up.
The older serial harness (`serial-tests`) closes with a banner instead: "All 2 tests
passed", "1 of 2 tests failed". XFAIL (failed, as the project marked it would) passes;
XPASS (passed although marked to fail) and ERROR (a hard error) fail.

The parallel harness sends each test's own output to its `.log` file, so the lines read
here are the harness's. `test-suite.log` is written inside the build tree, which the host
does not read: the printed summary is the channel.
"""

from __future__ import annotations

import re
from pathlib import Path

from assay.evidence import Check, Diagnostic, TestCase, TestCounts
from assay.parsed_output import Reading
from assay.parsers import ParsedOutput
from assay.parsers._text import combined, count_cases
from assay.parsers.crash import crash_diagnostics, missing_command
from assay.process import ProcessResult

# `PASS: test_add`, `FAIL: t/basic.sh 3 - adds` (a TAP test's result carries its number).
_PER_TEST = re.compile(r"^(PASS|FAIL|XFAIL|XPASS|SKIP|ERROR): (\S.*?)\s*$", re.MULTILINE)
_SUMMARY_LINE = re.compile(r"^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR): +(\d+)\s*$")
# make finding no Makefile, or no build directory, to read: configure never ran (the build
# could not be made).
_UNCONFIGURED = re.compile(
    r"^g?make: \*\*\* (?:No rule to make target 'check'"
    r"|No targets specified and no makefile found|[^:\n]+: No such file or directory\.  Stop\.)",
    re.MULTILINE,
)
_ALL_PASSED = re.compile(r"^=*\s*All (\d+) tests? passed", re.MULTILINE)
_SOME_FAILED = re.compile(r"^=*\s*(\d+) of (\d+) tests? (?:failed|did not pass)", re.MULTILINE)

_OUTCOMES = {
    "PASS": "passed",
    "XFAIL": "xfailed",  # failed as the project declared it would: not a failure
    "SKIP": "skipped",
    "FAIL": "failed",
    "XPASS": "failed",  # passed although declared to fail: the declaration is now wrong
    "ERROR": "error",
}


def parse(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    text = combined(result)
    cases = tuple(TestCase(name=m[2], outcome=_OUTCOMES[m[1]]) for m in _PER_TEST.finditer(text))
    summary = _summaries(text)
    tests = _counts(cases, summary) if cases or summary else _banner(text)
    missing = None
    crashes: tuple[Diagnostic, ...] = ()
    if result.exit_code not in (0, None):
        missing = missing_command(text, result.exit_code)
        if missing is None and tests is None and _UNCONFIGURED.search(text):
            # Not the code's failure: the build that configures the tree could not run.
            missing = "make check (no Makefile: configure never ran)"
        if tests is None or not tests.any_failed:
            # `make check` builds the test programs first: a compile error stops it there.
            crashes = crash_diagnostics(text, result.cwd, check.tool)
    readings: tuple[Reading, ...] = ()
    if summary and cases:
        # The per-test lines and the summaries are printed by different parts of the harness.
        readings = (
            Reading("Automake's per-test lines", failed=_bad(cases)),
            Reading("Automake's test-suite summary", failed=_summary_failed(summary)),
        )
    return ParsedOutput(
        diagnostics=crashes,
        tests=tests,
        test_cases=cases,
        failure_recognized=(tests is not None and tests.any_failed) or bool(crashes),
        missing_command=missing,
        readings=readings,
    )


def _summaries(text: str) -> dict[str, int]:
    """Every `# KEY: n` line of every "Testsuite summary" block, added up."""
    totals: dict[str, int] = {}
    for line in text.splitlines():
        match = _SUMMARY_LINE.match(line)
        if match:
            totals[match[1]] = totals.get(match[1], 0) + int(match[2])
    return totals


def _bad(cases: tuple[TestCase, ...]) -> int:
    return sum(c.outcome in ("failed", "error") for c in cases)


def _summary_failed(summary: dict[str, int]) -> int:
    return summary.get("FAIL", 0) + summary.get("XPASS", 0) + summary.get("ERROR", 0)


def _counts(cases: tuple[TestCase, ...], summary: dict[str, int]) -> TestCounts:
    """Counts from the summaries when there are any (output kept within a bound may have
    lost per-test lines, never the closing summary), else from the per-test lines; the
    worse of the two for failures."""
    listed = count_cases(cases, "text")
    if not summary:
        return listed
    failed = max(summary.get("FAIL", 0) + summary.get("XPASS", 0), listed.failed)
    errors = max(summary.get("ERROR", 0), listed.errors)
    skipped = summary.get("SKIP", 0) + summary.get("XFAIL", 0)
    return TestCounts(
        passed=summary.get("PASS", 0), failed=failed, errors=errors, skipped=skipped, source="text"
    )


def _banner(text: str) -> TestCounts | None:
    """The serial harness's closing banner, when no per-test line was read."""
    failed = _SOME_FAILED.findall(text)
    if failed:
        bad, total = int(failed[-1][0]), int(failed[-1][1])
        return TestCounts(passed=total - bad, failed=bad, source="text")
    passed = _ALL_PASSED.findall(text)
    if passed:
        return TestCounts(passed=int(passed[-1]), source="text")
    return None

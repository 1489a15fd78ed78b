"""`meson test` results: the JSON log it writes (a line per test) and the summary it prints.

    1/2 add        OK              0.01s
    2/2 mul        FAIL            0.01s   exit status 1

    Ok:                 1
    Expected Fail:      0
    Fail:               1
    Unexpected Pass:    0
    Skipped:            0
    Timeout:            0

meson writes its log under the build directory unless told a base of its own
(`--logbase`): assay gives it one in the report directory, read like every report the code
under test could have replaced (`report_file`). A test meson stopped at its own per-test
timeout (TIMEOUT) hung: it is named (`ParsedOutput.hung_tests`) and is no failure.
EXPECTEDFAIL passes; UNEXPECTEDPASS and ERROR fail. INTERRUPT is a test meson stopped
before it ended, once `--maxfail` was reached (or the run was stopped): not run to its end,
it is counted as skipped, and taken out of the summary's `Fail`, which counts it (inih with
a wrong value: "3 of 3 tests failed", one failure and one test cut short).
"""

from __future__ import annotations

import re
from pathlib import Path

from assay.evidence import Check, TestCase, TestCounts
from assay.parsed_output import Reading
from assay.parsers import ParsedOutput, report_path
from assay.parsers._text import combined, count_cases, json_lines
from assay.parsers.report_file import Refused, read_report
from assay.process import ProcessResult

#: The report's suffix: meson appends `.json` to the base it is given.
LOG_SUFFIX = "testlog"

_SUMMARY_LINE = re.compile(
    r"^(Ok|Expected Fail|Fail|Unexpected Pass|Skipped|Timeout):\s+(\d+)\s*$", re.MULTILINE
)
# ` 2/2 mul        FAIL            0.01s   exit status 1`; a suite may prefix the name.
_PER_TEST = re.compile(
    r"^\s*\d+/\d+ (.+?)\s+(OK|FAIL|SKIP|EXPECTEDFAIL|UNEXPECTEDPASS|TIMEOUT|ERROR|INTERRUPT)"
    r"\s+[\d.]+s\b",
    re.MULTILINE,
)
_NO_TESTS = re.compile(r"^No tests defined\.", re.MULTILINE)
HUNG_MESSAGE = "stopped at meson's per-test timeout: it hung"
_INTERRUPTED_MESSAGE = (
    "stopped by meson before it ended (--maxfail was reached, or the run stopped)"
)
_MESSAGES = {"TIMEOUT": HUNG_MESSAGE, "INTERRUPT": _INTERRUPTED_MESSAGE}

_OUTCOMES = {
    "OK": "passed",
    "EXPECTEDFAIL": "xfailed",
    "SKIP": "skipped",
    "FAIL": "failed",
    "UNEXPECTEDPASS": "failed",
    "ERROR": "error",
    "INTERRUPT": "skipped",
    "TIMEOUT": "error",
}


def parse(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    text = combined(result)
    refused: str | None = None
    cases: tuple[TestCase, ...] = ()
    source = "text"
    if report_dir is not None:
        data = read_report(report_path(report_dir, check, f"{LOG_SUFFIX}.json"))
        if isinstance(data, Refused):
            refused = data.reason
        elif isinstance(data, bytes):
            cases = _logged_cases(data.decode("utf-8", "replace"))
            source = "meson-json" if cases else source
    if not cases:
        # "Summary of Failures" prints each failing test's line again: once per name.
        printed = {m[1]: _case(m[1], m[2]) for m in _PER_TEST.finditer(text)}
        cases = tuple(printed.values())
    hung = tuple(c.name for c in cases if c.message == HUNG_MESSAGE)
    summary = _summary(text)
    tests = _counts(cases, source, summary) if cases or summary else None
    readings: tuple[Reading, ...] = ()
    if source == "meson-json" and summary:
        # Both channels count a timeout as bad: compared on that, as meson counts it.
        readings = (
            Reading(
                "meson's JSON log", failed=sum(c.outcome in ("failed", "error") for c in cases)
            ),
            Reading("meson's summary", failed=_summary_bad(summary) - _interrupted(cases)),
        )
    return ParsedOutput(
        tests=tests,
        test_cases=cases,
        failure_recognized=tests is not None and tests.any_failed,
        no_tests_reported=bool(_NO_TESTS.search(text)),
        report_found=source == "meson-json",
        report_refused=refused,
        readings=readings,
        hung_tests=hung,
    )


def _logged_cases(text: str) -> tuple[TestCase, ...]:
    cases = []
    for entry in json_lines(text):
        name, status = entry.get("name"), entry.get("result")
        if isinstance(name, str) and isinstance(status, str) and status in _OUTCOMES:
            duration = entry.get("duration")
            seconds = float(duration) if isinstance(duration, (int, float)) else None
            cases.append(_case(name, status, seconds))
    return tuple(cases)


def _case(name: str, status: str, duration_s: float | None = None) -> TestCase:
    message = _MESSAGES.get(status)
    return TestCase(name=name, outcome=_OUTCOMES[status], duration_s=duration_s, message=message)


def _summary(text: str) -> dict[str, int]:
    """The last summary's counts by label (one summary per run)."""
    found: dict[str, int] = {}
    for label, number in _SUMMARY_LINE.findall(text):
        found[label] = int(number)
    return found


def _interrupted(cases: tuple[TestCase, ...]) -> int:
    """How many tests meson stopped before they ended: its summary counts them as failed."""
    return sum(1 for c in cases if c.message == _INTERRUPTED_MESSAGE)


def _summary_bad(summary: dict[str, int]) -> int:
    return sum(summary.get(k, 0) for k in ("Fail", "Unexpected Pass", "Timeout"))


def _counts(cases: tuple[TestCase, ...], source: str, summary: dict[str, int]) -> TestCounts:
    """Counts from the cases, hung tests left out (a timeout is a hang, not a failure);
    failures raised to what the summary says (a log rewritten at exit cannot take back the
    printed line)."""
    listed = count_cases((c for c in cases if c.message != HUNG_MESSAGE), source)
    said = summary.get("Fail", 0) + summary.get("Unexpected Pass", 0) - _interrupted(cases)
    failed = max(listed.failed, said)
    # Output kept within a bound may have lost per-test lines: the printed total stands.
    passed = max(listed.passed, summary.get("Ok", 0)) if source == "text" else listed.passed
    return TestCounts(
        passed=passed, failed=failed, errors=listed.errors, skipped=listed.skipped, source=source
    )

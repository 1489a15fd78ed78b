"""CTest results: its JUnit report (CTest 3.21 and later, when it was asked for), else the
per-test lines it prints; its closing summary and its list of failed tests in both cases.

    2/4 Test #2: mul ..............................***Failed    0.00 sec
    75% tests passed, 1 tests failed out of 4
    The following tests FAILED:
              2 - mul (Failed)

A test ctest stopped at its own per-test timeout (`***Timeout`, `(Timeout)` in the list)
hung: that is no answer about the code, so it is not counted as a failure; the parser
names it (`ParsedOutput.hung_tests`) and `classify` makes the run a timeout, unless a
real failure beside it already makes the run fail. ctest's JUnit report cannot tell a
timeout from a failure, so the printed list says which tests hung.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from assay.evidence import Check, TestCase, TestCounts
from assay.parsed_output import Reading
from assay.parsers import ParsedOutput, report_path
from assay.parsers._text import combined, strip_ansi
from assay.parsers.pytest import read_junit
from assay.parsers.report_file import Refused, read_report
from assay.process import ProcessResult

_SUMMARY = re.compile(r"^\s*\d+% tests passed, (\d+) tests? failed out of (\d+)\s*$", re.MULTILINE)
_FAILED_HEADER = "The following tests FAILED:"
# `  2 - mul (Failed)`, with the test's labels after it in newer releases.
_LISTED = re.compile(r"^\s*\d+ - (.+?) \(([^()]*)\)(?:\s+\S.*)?\s*$")
_PER_TEST = re.compile(
    r"^\s*\d+/\d+ Test +#\d+: (.+?) \.*\s*(?:\*\*\*)?(\S.*?)\s+[\d.]+ sec\s*$", re.MULTILINE
)
_NO_TESTS = re.compile(r"^\s*No tests were found", re.MULTILINE)
_TIMEOUT = "Timeout"
HUNG_MESSAGE = "stopped at ctest's per-test timeout: it hung"


def parse(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    text = strip_ansi(combined(result))
    listed = _listed_failures(text)
    hung = tuple(name for name, status in listed if status == _TIMEOUT)
    summary = _summary(text)
    refused: str | None = None
    cases: tuple[TestCase, ...] = ()
    source = "text"
    if report_dir is not None:
        data = read_report(report_path(report_dir, check, "xml"))
        if isinstance(data, Refused):
            refused = data.reason
        junit = read_junit(data) if isinstance(data, bytes) else None
        if junit is not None:
            cases, source = tuple(_ctest_name(c) for c in junit[1]), "junit"
    if not cases:
        cases = _printed_cases(text)
    cases = tuple(_as_hung(c) if c.name in hung else c for c in cases)
    cases = _with_printed_output(cases, text)
    tests = _counts(cases, source, summary, len(hung))
    readings: tuple[Reading, ...] = ()
    if source == "junit" and summary is not None:
        # Both channels count a hung test as failed; compared on failures only (a skipped
        # test is in the summary's total, not among the report's executed tests).
        reported = sum(c.outcome in ("failed", "error") for c in cases)
        readings = (
            Reading("the JUnit report", failed=reported),
            Reading("ctest's summary line", failed=summary[0]),
        )
    return ParsedOutput(
        tests=tests,
        test_cases=cases,
        failure_recognized=tests is not None and tests.any_failed,
        no_tests_reported=bool(_NO_TESTS.search(text)),
        report_found=source == "junit",
        report_refused=refused,
        readings=readings,
        hung_tests=hung,
    )


def _summary(text: str) -> tuple[int, int] | None:
    """(failed, total) from the last "N% tests passed, F tests failed out of T" line."""
    found = _SUMMARY.findall(text)
    return (int(found[-1][0]), int(found[-1][1])) if found else None


def _listed_failures(text: str) -> list[tuple[str, str]]:
    """(name, status) of each test under the last "The following tests FAILED:"."""
    at = text.rfind(_FAILED_HEADER)
    if at < 0:
        return []
    listed = []
    for line in text[at + len(_FAILED_HEADER) :].splitlines()[1:]:
        match = _LISTED.match(line)
        if match is None:
            break
        listed.append((match[1], match[2]))
    return listed


def _printed_cases(text: str) -> tuple[TestCase, ...]:
    """A case per `i/n Test #k: name ....   Passed` line."""
    return tuple(TestCase(name=m[1], outcome=_outcome(m[2])) for m in _PER_TEST.finditer(text))


#: The most of a failed test's output kept as its message: its last lines.
_MESSAGE_CHARS = 500


def _with_printed_output(cases: tuple[TestCase, ...], text: str) -> tuple[TestCase, ...]:
    """Each failed case with no message given what it printed, which `--output-on-failure`
    puts under its result line: cxxopts' options test was FAILED with nothing of the
    Catch2 assertion that failed in it."""
    printed: dict[str, str] = {}
    results = list(_PER_TEST.finditer(text))
    for at, result in enumerate(results):
        end = results[at + 1].start() if at + 1 < len(results) else len(text)
        closing = _SUMMARY.search(text, result.end(), end)
        body = text[result.end() : closing.start() if closing else end].split("\n")
        lines = [line for line in body if line.strip() and not _NOT_OUTPUT.match(line)]
        printed[result[1]] = "\n".join(lines)[-_MESSAGE_CHARS:]
    return tuple(
        replace(case, message=printed[case.name])
        if case.outcome in ("failed", "error") and not case.message and printed.get(case.name)
        else case
        for case in cases
    )


#: ctest's own line between one result and the next: the next test's start.
_NOT_OUTPUT = re.compile(r"^\s*Start +\d+: ")


def _outcome(status: str) -> str:
    if status == "Passed":
        return "passed"
    if "Skipped" in status or "Disabled" in status:
        return "skipped"
    return "failed"


def _ctest_name(case: TestCase) -> TestCase:
    """The test's own name: ctest writes it as both the case's name and its class, which
    the JUnit reader joins (`mul::mul`)."""
    half = (len(case.name) - 2) // 2
    name = case.name[:half]
    if case.name != f"{name}::{name}":
        return case
    return TestCase(name, case.outcome, case.file, case.duration_s, case.message)


def _as_hung(case: TestCase) -> TestCase:
    return TestCase(
        name=case.name,
        outcome="error",
        file=case.file,
        duration_s=case.duration_s,
        message=HUNG_MESSAGE,
    )


def _counts(
    cases: tuple[TestCase, ...], source: str, summary: tuple[int, int] | None, hung: int
) -> TestCounts | None:
    """Counts from the cases, hung tests left out; failures raised to what the summary
    line says beyond the hung ones (a report rewritten at exit cannot take back the line)."""
    if not cases and summary is None:
        return None
    passed = sum(c.outcome == "passed" for c in cases)
    failed = sum(c.outcome == "failed" for c in cases)
    errors = sum(c.outcome == "error" and c.message != HUNG_MESSAGE for c in cases)
    skipped = sum(c.outcome == "skipped" for c in cases)
    if summary is not None:
        failed = max(failed + errors, summary[0] - hung) - errors
        if source == "text":
            # Output kept within a bound may have lost per-test lines: the total stands.
            passed = max(passed, summary[1] - summary[0] - skipped)
    return TestCounts(passed=passed, failed=failed, errors=errors, skipped=skipped, source=source)

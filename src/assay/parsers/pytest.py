"""pytest results: the JUnit XML report (authoritative when it was asked for), else the summary line.

A test pytest-timeout stopped hung: that says nothing about the code, so it is named
(`ParsedOutput.hung_tests`) and not counted as a failure, and `classify` makes the run a
timeout unless a real failure beside it makes the run fail. Its default method fails the
test with "Failed: Timeout (>10.0s) from pytest-timeout."; its thread method prints a
`+++ Timeout +++` banner and ends pytest at once, leaving no report.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from xml.etree.ElementTree import Element

import defusedxml.ElementTree as SafeET

from assay.evidence import Check, Diagnostic, TestCase, TestCounts
from assay.formats.failures import COLLECTION_FAILURE, INTERNAL_ERROR
from assay.parsed_output import Reading
from assay.parsers import ParsedOutput, report_path
from assay.parsers._text import combined, count_cases, relative
from assay.parsers.doctest_failure import doctest_message
from assay.parsers.report_file import Refused, read_report
from assay.process import ProcessResult

#: pytest's exit code for "no tests were collected".
PYTEST_NO_TESTS_EXIT = 5

# "==== 1 failed, 2 passed, 1 warning in 0.12s ====" or, with -q, "1 failed, 2 passed in 0.12s".
# pytest 9 also counts subtests ("1 passed, 3 subtests passed in 0.1s"): a count may take two words.
_SUMMARY = re.compile(r"^=*\s*(?P<body>\d+ \w+(?: \w+)?(?:, \d+ \w+(?: \w+)?)*) in [\d.]+s\b")
_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)\b")
_NO_TESTS = re.compile(r"^=*\s*no tests ran\b")
#: pytest-timeout's failure of a test it stopped (its signal method).
_TIMED_OUT = re.compile(r"^Failed: Timeout \(>[\d.]+s\) from pytest-timeout\b")
#: The banner pytest-timeout's thread method prints before it ends the whole run.
_THREAD_TIMEOUT_BANNER = re.compile(r"^\+{5,} Timeout \+{5,}$", re.MULTILINE)
#: What stands for the test a run-ending timeout stopped: the banner does not name it.
STOPPED_BY_PYTEST_TIMEOUT = "the test running when pytest-timeout ended the run"


#: pytest's report of a conftest it could not import (it then ends with exit 4, no report).
_CONFTEST_FAILED = re.compile(r"^ImportError while loading conftest '[^']+'\.$", re.MULTILINE)
#: A frame of pytest's short traceback (`pkg/__init__.py:1: in <module>`), and its error line.
_SHORT_FRAME = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+): in \S")
_SHORT_ERROR = re.compile(r"^E\s+(?P<error>[A-Za-z_][\w.]*): ?(?P<message>.*)$")
#: A syntax error's own place, inside the error lines (`E     File "/x/a.py", line 1`).
_ERROR_PLACE = re.compile(r'^E\s+File "(?P<file>[^"]+)", line (?P<line>\d+)')
#: Errors of an import that found no module: a dependency not installed is no fault of the
#: code, so such a conftest failure is left unrecognised.
_NOT_FOUND_ERRORS = frozenset({"ModuleNotFoundError", "ImportError"})


def parse(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    no_tests = result.exit_code == PYTEST_NO_TESTS_EXIT
    text_tests = _summary_counts(combined(result))
    broken = (
        None if result.exit_code in (0, None) else _broken_conftest(combined(result), result.cwd)
    )
    if broken is not None:
        # No test ran: the code a conftest imports failed to load (a name or syntax error).
        return ParsedOutput(diagnostics=(broken,), failure_recognized=True)
    if report_dir is not None:
        # The report was asked for, so it is the only source of counts: summary text can be
        # printed by anything (a conftest that prints "5 passed" and exits), the report is
        # written by pytest's own reporter after tests really ran.
        data = read_report(report_path(report_dir, check, "xml"))
        junit = read_junit(data) if isinstance(data, bytes) else None
        if junit is None or not isinstance(data, bytes):
            ended_by_timeout = _THREAD_TIMEOUT_BANNER.search(combined(result)) is not None
            stopped: tuple[str, ...] = (STOPPED_BY_PYTEST_TIMEOUT,) if ended_by_timeout else ()
            if result.timed_out:
                stopped = _with_stuck_place(
                    _running_at_deadline(report_dir, check), report_dir, check, result.cwd
                )
            return ParsedOutput(
                failure_recognized=text_tests is not None and text_tests.any_failed,
                no_tests_reported=no_tests,
                report_refused=data.reason if isinstance(data, Refused) else None,
                hung_tests=stopped,
            )
        tests = _not_kinder_than_the_summary(junit[0], _listed_failures(data), combined(result))
        cases = _with_optional_imports(junit[1], result.cwd)
        hung = tuple(c for c in cases if c.message and _TIMED_OUT.match(c.message))
        tests = _without_hung(tests, hung)
        return ParsedOutput(
            tests=tests,
            test_cases=cases,
            failure_recognized=tests.any_failed,
            no_tests_reported=no_tests or tests.executed == 0,
            report_found=True,
            readings=_readings(junit[0], text_tests, _has_subtests(combined(result))),
            hung_tests=tuple(c.name for c in hung),
            installed_copies=_installed_copies(report_dir, check, result.cwd),
        )
    return ParsedOutput(
        tests=text_tests,
        failure_recognized=text_tests is not None and text_tests.any_failed,
        no_tests_reported=no_tests,
    )


def _with_optional_imports(cases: tuple[TestCase, ...], cwd: str | None) -> tuple[TestCase, ...]:
    """`cases`, each module that could not be collected on a NameError for a name it imports
    only where an optional module is installed saying so (`with_optional_import`)."""
    from assay.optional_import import with_optional_import

    return tuple(
        dataclasses.replace(
            case,
            message=with_optional_import(case.message, cwd, case.name.replace(".", "/") + ".py"),
        )
        if case.outcome == "error" and case.message and case.message.startswith(COLLECTION_FAILURE)
        else case
        for case in cases
    )


#: The longest test id named as the one running when the run was stopped.
_NODE_ID_MAX = 300


def _beside_report(report_dir: Path, check: Check, suffix: str) -> bytes | None:
    """What assay's pytest plugin wrote beside the check's JUnit report (`<xml><suffix>`),
    read as any report is; None when there is none, or it was refused."""
    path = report_path(report_dir, check, "xml")
    data = read_report(path.with_name(path.name + suffix))
    return data if isinstance(data, bytes) else None


def _installed_copies(report_dir: Path, check: Check, cwd: str) -> tuple[tuple[str, str], ...]:
    """The project's own packages the session imported from an installed copy, as its
    record says (`assay.tools.python.IMPORTED_SUFFIX`); () without a record."""
    from assay.own_package import installed_copies
    from assay.tools.python import IMPORTED_SUFFIX

    data = _beside_report(report_dir, check, IMPORTED_SUFFIX)
    if data is None or not cwd:
        return ()
    return tuple(installed_copies(data.decode("utf-8", "replace"), cwd))


def _running_at_deadline(report_dir: Path, check: Check) -> tuple[str, ...]:
    """The test that had started last when assay stopped the run, as pytest's start
    recorded it (`assay.tools.python.STARTED_SUFFIX`); () when nothing was recorded.
    Before any test started, the collector whose collection had begun and not ended (a
    test module whose import hung: simplejson's `test_raw_json.py` calls `dumps` as it is
    imported), as "the collection of NODE"."""
    from assay.tools.python import COLLECTED, COLLECTING, STARTED_SUFFIX

    data = _beside_report(report_dir, check, STARTED_SUFFIX)
    if data is None:
        return ()
    lines = [line.strip() for line in data.decode("utf-8", "replace").splitlines()]
    tests = [line for line in lines if line and not line.startswith("\x00")]
    if tests:
        return (tests[-1][:_NODE_ID_MAX],)
    collecting = COLLECTING.strip()
    collected = COLLECTED.strip()
    open_collectors: list[str] = []
    for line in lines:
        marker, _, node = line.partition(" ")
        if marker == collecting:
            open_collectors.append(node)
        elif marker == collected and node in open_collectors:
            open_collectors.remove(node)
    named = [node for node in open_collectors if node]
    if named:
        return (f"the collection of {named[-1][:_NODE_ID_MAX]} (before any test started)",)
    return ()


def _with_stuck_place(
    running: tuple[str, ...], report_dir: Path, check: Check, cwd: str
) -> tuple[str, ...]:
    """`running` (the test a run stopped at the deadline had started), with the line of the
    project's code it was stuck on as faulthandler's dump says (`stuck_at`): "t.py::test_x
    (stuck at pkg/mod.py:3 in spin)". Named only beside a test: a dump alone says nothing
    of which test it was."""
    from assay.parsers.python_stacks import stuck_at
    from assay.tools.python import STACKS_SUFFIX

    if not running:
        return running
    data = _beside_report(report_dir, check, STACKS_SUFFIX)
    place = stuck_at(data.decode("utf-8", "replace"), cwd) if data else None
    if place is None:
        return running
    return (f"{running[0]} (stuck at {place})", *running[1:])


def _broken_conftest(text: str, cwd: str | None) -> Diagnostic | None:
    """The error that kept a conftest from loading, at its innermost frame, when it is one
    of the code's own (not a module that was not found)."""
    found = _CONFTEST_FAILED.search(text)
    if found is None:
        return None
    where: re.Match[str] | None = None
    for line in text[found.end() :].splitlines()[:200]:
        if frame := _SHORT_FRAME.match(line) or _ERROR_PLACE.match(line):
            where = frame
        elif error := _SHORT_ERROR.match(line):
            if error["error"].rpartition(".")[2] in _NOT_FOUND_ERRORS:
                return None
            return Diagnostic(
                message=f"{error['error']}: {error['message']}".rstrip(": "),
                file=relative(where["file"], cwd or "") if where else None,
                line=int(where["line"]) if where else None,
                tool="pytest",
            )
    return None


def _without_hung(tests: TestCounts, hung: tuple[TestCase, ...]) -> TestCounts:
    """`tests` with the hung ones counted neither as failed nor as passed. The summary line
    counts them among its failures too, so they come off whichever count stood."""
    if not hung:
        return tests
    return TestCounts(
        passed=tests.passed,
        failed=tests.failed - sum(c.outcome == "failed" for c in hung),
        errors=tests.errors - sum(c.outcome == "error" for c in hung),
        skipped=tests.skipped,
        source=tests.source,
    )


def _readings(
    report: TestCounts, summary: TestCounts | None, subtests: bool = False
) -> tuple[Reading, ...]:
    """The JUnit report and the summary line pytest prints at the end of every run that
    finishes (at any verbosity assay runs it with): they must tell the same run.

    With subtests (`subtests`: the summary counts some), a test that passed while some of
    its subtests skipped is written to the report as skipped (one `<skipped>` per subtest),
    and the summary counts it passed: up to the report's skipped tests may have run."""
    ran = report.executed
    if subtests and summary is not None and ran < summary.executed <= ran + report.skipped:
        ran = summary.executed
    printed = (
        Reading(_SUMMARY_CHANNEL, ran=summary.executed, failed=summary.failed + summary.errors)
        if summary is not None
        else Reading(_SUMMARY_CHANNEL, appeared=False)
    )
    return (
        Reading("the JUnit report", ran=ran, failed=report.failed + report.errors),
        printed,
    )


_SUMMARY_CHANNEL = "pytest's summary line"


def _not_kinder_than_the_summary(
    report: TestCounts, listed: tuple[int, int], text: str
) -> TestCounts:
    """The report's counts, with failures raised to the most any pytest summary line showed
    beyond the failures the report lists.

    Code imported by the tests can rewrite the report at exit (an atexit hook, then
    `os._exit(0)`), but it cannot take back the summary pytest already printed. The
    summary counts each failing subtest, the report lists each under its test: a test
    with two failing subtests is one failed test carrying two failures, and a summary
    with two failures says no more than that report does."""
    failed, errors = report.failed, report.errors
    listed_failures, listed_errors = listed
    for line in text.splitlines()[-200:]:
        match = _SUMMARY.match(line.strip())
        if match is None:
            continue
        for number, word in _COUNT.findall(match["body"]):
            if _TEXT_KEYS[word] == "failed" and int(number) > listed_failures:
                failed = max(failed, int(number))
            elif _TEXT_KEYS[word] == "errors" and int(number) > listed_errors:
                errors = max(errors, int(number))
    if (failed, errors) == (report.failed, report.errors):
        return report
    return TestCounts(
        passed=report.passed,
        failed=failed,
        errors=errors,
        skipped=report.skipped,
        source=report.source,
    )


def _has_subtests(text: str) -> bool:
    """Whether pytest's last summary line counts subtests ("3 passed, 2 subtests passed")."""
    for line in reversed(text.splitlines()[-200:]):
        match = _SUMMARY.match(line.strip())
        if match is not None:
            return _SUBTEST_COUNT.search(match["body"]) is not None
    return False


_SUBTEST_COUNT = re.compile(r"\d+ subtests? \w+")


def _summary_counts(text: str) -> TestCounts | None:
    for line in reversed(text.splitlines()[-200:]):
        stripped = line.strip()
        if _NO_TESTS.match(stripped):
            return TestCounts(source="text")
        match = _SUMMARY.match(stripped)
        if match is None:
            continue
        counts = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
        for number, word in _COUNT.findall(match["body"]):
            key = _TEXT_KEYS[word]
            counts[key] += int(number)
        return TestCounts(**counts, source="text")
    return None


_TEXT_KEYS = {
    "passed": "passed",
    "xpassed": "passed",
    "failed": "failed",
    "error": "errors",
    "errors": "errors",
    "skipped": "skipped",
    # An expected failure ran and failed as expected: not a failure, not a pass; count as skipped.
    "xfailed": "skipped",
}


def read_junit(data: bytes) -> tuple[TestCounts, tuple[TestCase, ...]] | None:
    """Counts and cases from a JUnit XML document, or None when it is not one.

    Counted from the `<testcase>` elements, not the suite attributes, so the numbers
    are the tests listed. Parsed with defusedxml: the file may be written by code under test.
    """
    root = junit_root(data)
    if root is None:
        return None
    cases = tuple(_case(element) for element in root.iter("testcase"))
    return count_cases(cases, "junit"), cases


def junit_root(data: bytes) -> Element | None:
    try:
        root: Element | None = SafeET.fromstring(data)
    except Exception:  # malformed, or hostile (entities, DTDs): no report
        return None
    return root


def _listed_failures(data: bytes) -> tuple[int, int]:
    """The `<failure>` and `<error>` elements under the report's test cases: one per
    failing subtest, where its test case counts once."""
    root = junit_root(data)
    if root is None:
        return 0, 0
    children = [child.tag for case in root.iter("testcase") for child in case]
    return children.count("failure"), children.count("error")


def _error_message(error: Element) -> str:
    """An `<error>`'s message; for a module pytest could not collect, with the error that
    stopped it, from its traceback's `E   ` lines (`collection failure: ModuleNotFoundError:
    No module named 'x'`)."""
    message = error.get("message") or ""
    text = error.text or ""
    if message == INTERNAL_ERROR:
        return _internal_error(text)
    if message != COLLECTION_FAILURE:
        return message or text[:500]
    said = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
    last = (
        said[-1]
        if said
        else next((x.strip() for x in reversed(text.splitlines()) if x.strip()), "")
    )
    return f"{message}: {last[:300]}" if last else message


#: A frame of a Python traceback: '  File "/w/src/pluggy/_callers.py", line 103, in _multicall'.
_TRACEBACK_FRAME = re.compile(r'^\s*File "(?P<file>[^"\n]{1,1024})", line (?P<line>\d{1,7}), in ')


def _internal_error(text: str) -> str:
    """pytest's own crash as `internal error: AttributeError: ... (raised below
    /w/src/pluggy/_callers.py:103)`: the error, and the innermost frame outside pytest and
    installed code, which pluggy 1.5.0's broken `get_result` was (the note had said "1 of
    1 tests failed: pytest::internal", no word of what broke)."""
    lines = [line.removeprefix("INTERNALERROR>").rstrip() for line in text.splitlines()]
    error = next((line.strip() for line in reversed(lines) if line.strip()), "")
    frames = [m for line in lines if (m := _TRACEBACK_FRAME.match(line))]
    own = [
        f"{m['file']}:{m['line']}"
        for m in frames
        if not {"_pytest", "site-packages", "dist-packages"} & set(m["file"].split("/"))
    ]
    place = f" (raised below {own[-1]})" if own else ""
    return f"{INTERNAL_ERROR}: {error[:300]}{place}" if error else INTERNAL_ERROR


def _case(element: Element) -> TestCase:
    classname = element.get("classname") or ""
    name = element.get("name") or "?"
    outcome, message = "passed", None
    for child in element:
        tag = child.tag
        if tag == "failure":
            said = child.get("message") or (child.text or "")[:500]
            outcome, message = "failed", doctest_message(said)
        elif tag == "error":
            outcome, message = "error", _error_message(child)
        elif tag == "skipped" and outcome == "passed":
            expected_failure = child.get("type") == "pytest.xfail"  # as pytest's junitxml marks it
            outcome = "xfailed" if expected_failure else "skipped"
            message = child.get("message")
    try:
        duration = float(element.get("time") or "")
    except ValueError:
        duration = None
    return TestCase(
        name=f"{classname}::{name}" if classname else name,
        outcome=outcome,
        file=element.get("file"),
        duration_s=duration,
        message=None if message is None else _ESCAPED_COLOURS.sub("", message),
    )


#: Colour codes as pytest's JUnit report writes them: ESC is no XML character, so it is
#: written `#x1B` (humanize forces `--color=yes`: `#x1B[0m#x1B[91m- 10,000,000`).
_ESCAPED_COLOURS = re.compile(r"#x1B\[[0-9;]*m")

"""Python's checkers: compileall, mypy (JSON lines or text), pyright, ruff JSON and ruff's
formatter; unittest's summary."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from assay.evidence import Check, Diagnostic, TestCase, TestCounts
from assay.parsed_output import Reading
from assay.parsers import ParsedOutput
from assay.parsers._text import (
    combined,
    json_array_items,
    json_document,
    json_lines,
    relative,
    strip_ansi,
    to_int,
)
from assay.parsers.python_stacks import stuck_at
from assay.process import ProcessResult

# compileall:  *** Error compiling './a.py'...  /  File "./a.py", line 2  /  SyntaxError: invalid syntax
_COMPILE_FILE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)')
_COMPILE_ERROR = re.compile(r"^(?P<code>\w*(?:Error|Exception)): (?P<msg>.*)$")
_COMPILE_START = "*** Error compiling"

# mypy text:  a.py:3:5: error: Incompatible types ...  [assignment]
_MYPY_TEXT = re.compile(
    r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<sev>error|warning|note): "
    r"(?P<msg>.*?)(?:  \[(?P<code>[\w-]+)\])?$"
)


def parse_compileall(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    diagnostics: list[Diagnostic] = []
    file: str | None = None
    line: int | None = None
    in_error = False
    for text_line in combined(result).splitlines():
        if text_line.startswith(_COMPILE_START):
            in_error, file, line = True, None, None
            continue
        if text_line.startswith("***") and (where := _COMPILE_FILE.match(text_line[3:])):
            # Without `-q`, no header: the error's first line is its place, starred.
            in_error, file, line = True, where["file"], int(where["line"])
            continue
        if not in_error:
            continue
        if (where := _COMPILE_FILE.match(text_line)) and file is None:
            file, line = where["file"], int(where["line"])
        elif error := _COMPILE_ERROR.match(text_line):
            diagnostics.append(
                Diagnostic(
                    message=error["msg"],
                    file=relative(file, result.cwd),
                    line=line,
                    code=error["code"],
                    tool="compileall",
                )
            )
            in_error = False
    return ParsedOutput(diagnostics=tuple(diagnostics), failure_recognized=bool(diagnostics))


def parse_mypy(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    """mypy's `--output=json` lines when a project asks for them, its text format
    otherwise (as assay runs it). Under `--install-types --non-interactive`, mypy writes its
    findings to stderr."""
    diagnostics: list[Diagnostic] = []
    for item in json_lines(result.stdout.text or result.stderr.text):
        if "message" not in item:
            continue
        diagnostics.append(
            Diagnostic(
                message=str(item["message"]),
                file=relative(item.get("file"), result.cwd),
                line=to_int(item.get("line")),
                column=_mypy_column(item.get("column")),
                code=item.get("code"),
                severity=str(item.get("severity") or "error"),
                tool="mypy",
            )
        )
    if not diagnostics:
        for text_line in _mypy_messages(combined(result)):
            if match := _MYPY_TEXT.match(text_line):
                diagnostics.append(
                    Diagnostic(
                        message=match["msg"],
                        file=relative(match["file"], result.cwd),
                        line=int(match["line"]),
                        column=int(match["col"]) if match["col"] else None,
                        code=match["code"],
                        severity=match["sev"],
                        tool="mypy",
                    )
                )
    crash = _MYPY_CRASH.search(combined(result))
    return ParsedOutput(
        diagnostics=tuple(diagnostics),
        failure_recognized=_any_error(diagnostics),
        tool_crashed=crash.group(0).strip() if crash else None,
    )


#: mypy's line for a crash of its own (`file:3: error: INTERNAL ERROR -- Please try using
#: mypy master on GitHub: ...`, or `error: INTERNAL ERROR: maximum semantic analysis
#: iteration count reached`); its traceback follows under --show-traceback.
_MYPY_CRASH = re.compile(r"^(?:\S.*?: )?error: INTERNAL ERROR\b.*$", re.MULTILINE)


def _mypy_messages(text: str) -> list[str]:
    """mypy's text lines, one message each: under `pretty = true` a message wraps onto
    lines of its own, at the margin, and the source it is about follows indented."""
    messages: list[str] = []
    continues = False
    for line in text.splitlines():
        if _MYPY_TEXT.match(line):
            messages.append(line)
            continues = not _MYPY_CODE_END.search(line)
        elif continues and line and not line[0].isspace() and not _MYPY_SUMMARY.match(line):
            messages[-1] = f"{messages[-1]} {line}"
            continues = not _MYPY_CODE_END.search(line)
        else:
            continues = False
    return messages


#: The error code that ends a message (`  [import-not-found]`), and mypy's closing line.
_MYPY_CODE_END = re.compile(r"  \[[\w-]+\]$")
_MYPY_SUMMARY = re.compile(r"^(?:Found \d+ errors? in|Success: no issues)")


def _mypy_column(value: object) -> int | None:
    column = to_int(value)
    # mypy's JSON uses -1 for "no column"; 0-based columns otherwise are reported 1-based already.
    return column if column is not None and column >= 0 else None


def parse_pyright(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    """pyright `--outputjson`: generalDiagnostics with 0-based ranges."""
    document = json_document(result.stdout.text)
    diagnostics: list[Diagnostic] = []
    if isinstance(document, dict):
        for item in document.get("generalDiagnostics") or ():
            if not isinstance(item, dict):
                continue
            start = (item.get("range") or {}).get("start") or {}
            line, column = to_int(start.get("line")), to_int(start.get("character"))
            diagnostics.append(
                Diagnostic(
                    message=str(item.get("message", "")),
                    file=relative(item.get("file"), result.cwd),
                    line=None if line is None else line + 1,
                    column=None if column is None else column + 1,
                    code=item.get("rule"),
                    severity=_pyright_severity(item.get("severity")),
                    tool="pyright",
                )
            )
    return ParsedOutput(diagnostics=tuple(diagnostics), failure_recognized=_any_error(diagnostics))


#: ty's diagnostics: its full form (`error[code]: message` and, under it, ` --> file:l:c`)
#: and its concise one (`file:l:c: error[code] message`).
_TY_FULL = re.compile(
    r"^(?P<sev>error|warning)\[(?P<code>[\w-]+)\]: (?P<msg>.*)\n\s*--> "
    r"(?P<file>[^\n]+?):(?P<line>\d+):(?P<col>\d+)\s*$",
    re.MULTILINE,
)
_TY_CONCISE = re.compile(
    r"^(?P<file>[^\s:][^:\n]*):(?P<line>\d+):(?P<col>\d+): (?P<sev>error|warning)"
    r"\[(?P<code>[\w-]+)\] (?P<msg>.*)$",
    re.MULTILINE,
)


def parse_ty(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    """ty's diagnostics, as it prints them in either of its text forms."""
    text = combined(result)
    diagnostics = [
        Diagnostic(
            message=match["msg"].strip(),
            file=relative(match["file"], result.cwd),
            line=int(match["line"]),
            column=int(match["col"]),
            code=match["code"],
            severity=match["sev"],
            tool="ty",
        )
        for pattern in (_TY_FULL, _TY_CONCISE)
        for match in pattern.finditer(text)
    ]
    return ParsedOutput(diagnostics=tuple(diagnostics), failure_recognized=_any_error(diagnostics))


def _pyright_severity(value: object) -> str:
    return {"error": "error", "warning": "warning", "information": "note"}.get(str(value), "error")


def parse_ruff(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    """ruff `--output-format=json`: a list of violations (syntax errors have no code); of a
    list longer than the capture keeps, those before the cut. `ruff format` prints text."""
    if "format" in check.argv:
        return _parse_ruff_format(result)
    diagnostics: list[Diagnostic] = []
    for item in json_array_items(result.stdout.text):
        if not isinstance(item, dict):
            continue
        location = item.get("location")
        location = location if isinstance(location, dict) else {}
        diagnostics.append(
            Diagnostic(
                message=str(item.get("message", "")),
                file=relative(item.get("filename"), result.cwd),
                line=to_int(location.get("row")),
                column=to_int(location.get("column")),
                code=item.get("code") or "syntax-error",
                severity="error",
                tool="ruff",
            )
        )
    return ParsedOutput(diagnostics=tuple(diagnostics), failure_recognized=bool(diagnostics))


# The file `ruff format --check` or `--diff` would change, as each ruff prints it:
# `Would reformat: a.py` (before 0.9), `  --> a.py:3:1` under `unformatted: ...` (since),
# `a.py:3:1: unformatted: ...` (concise), `--- a.py` (a diff's header).
_RUFF_UNFORMATTED = re.compile(
    r"^(?:Would reformat: (?P<old>.+)"
    r"|\s*--> (?P<full>.+?):(?P<line>\d+):\d+"
    r"|(?P<concise>.+?):(?P<cline>\d+):\d+: unformatted: .*"
    r"|--- (?P<diff>.+))$"
)


def _parse_ruff_format(result: ProcessResult) -> ParsedOutput:
    """A diagnostic for each file ruff's formatter would change, once each."""
    found: dict[str, int | None] = {}
    for text in combined(result).splitlines():
        match = _RUFF_UNFORMATTED.match(text)
        if match is None:
            continue
        file = match["old"] or match["full"] or match["concise"] or match["diff"]
        found.setdefault(file.strip(), to_int(match["line"] or match["cline"]))
    diagnostics = tuple(
        Diagnostic(
            message="would be reformatted",
            file=relative(file, result.cwd),
            line=line,
            code="format",
            severity="error",
            tool="ruff",
        )
        for file, line in found.items()
    )
    return ParsedOutput(diagnostics=diagnostics, failure_recognized=bool(diagnostics))


def _any_error(diagnostics: list[Diagnostic]) -> bool:
    return any(d.severity == "error" for d in diagnostics)


# unittest:  "Ran 3 tests in 0.001s"  then  "OK (skipped=1)"  or  "FAILED (failures=1, errors=2)"
_UNITTEST_RAN = re.compile(r"^Ran (?P<n>\d+) tests? in ")
_UNITTEST_END = re.compile(r"^(?P<status>OK|FAILED)(?: \((?P<details>[^)]*)\))?\s*$")
_UNITTEST_DETAIL = re.compile(
    r"(failures|errors|skipped|expected failures|unexpected successes)=(\d+)"
)


def parse_unittest(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    """The closing `Ran N tests` and `OK`/`FAILED (...)` lines (unittest writes no report),
    and with `-v` the line per test it writes as each one ends."""
    ran: int | None = None
    details: dict[str, int] = {}
    for line in combined(result).splitlines():
        if match := _UNITTEST_RAN.match(line):
            ran, details = int(match["n"]), {}
        elif ran is not None and (match := _UNITTEST_END.match(line)):
            details = {k: int(v) for k, v in _UNITTEST_DETAIL.findall(match["details"] or "")}
    if ran is None:
        # Stopped before its summary: at assay's deadline, the test its listing had begun.
        running = unittest_running(strip_ansi(result.stderr.text)) if result.timed_out else None
        if running and (place := stuck_at(result.stderr.text, result.cwd)) is not None:
            running = f"{running} (stuck at {place})"
        return ParsedOutput(hung_tests=(running,) if running else ())
    cases = unittest_listing(strip_ansi(result.stderr.text))
    failed, errors, failing = _failing_tests(
        result.stderr.text, details.get("failures", 0), details.get("errors", 0), ran
    )
    if not cases and failing:
        # Run without `-v` (a project's own runner script): the failures' headers still
        # name the tests that failed; those that passed go unnamed.
        cases = tuple(
            TestCase(name, "failed" if kind == "FAIL" else "error")
            for name, kind in failing.items()
        )
    cases = _with_failure_details(cases, strip_ansi(result.stderr.text), result.cwd)
    skipped = details.get("skipped", 0)
    if cases and not result.stderr.truncated:
        # The summary counts each skipped subtest, the listing each skipped test: pathspec's
        # 197 tests skip 276 subtests, and counted as tests no test would have passed.
        skipped = min(skipped, sum(c.outcome == "skipped" for c in cases))
    # Unexpected successes fail a unittest run; count them as failures.
    failed += details.get("unexpected successes", 0)
    tests = TestCounts(
        passed=max(ran - failed - errors - skipped, 0),
        failed=failed,
        errors=errors,
        skipped=skipped,
        source="text",
    )
    summary_failed = failed + errors
    readings: tuple[Reading, ...] = (Reading("unittest's summary", ran=ran, failed=summary_failed),)
    if _verbose(result.argv) and not result.stderr.truncated:
        # Every test that ran has its line; a summary with none printed them was not
        # unittest's. (Output cut in the middle has lost lines: nothing to count then.)
        listed_failed = sum(c.outcome in ("failed", "error") for c in cases)
        readings += (Reading("unittest's per-test listing", ran=len(cases), failed=listed_failed),)
    return ParsedOutput(
        tests=tests,
        test_cases=cases,
        failure_recognized=tests.any_failed,
        no_tests_reported=tests.executed == 0,
        readings=readings,
    )


# The header over each failure's traceback: "FAIL: test_t (m.T.test_t) (i=1)", the
# parenthesised parameters only for a subtest (Python 3.10 and older name the class only).
_UNITTEST_FAILURE = re.compile(r"^(?P<kind>FAIL|ERROR): (?P<method>[\w.]+) \((?P<where>[\w.]+)\)")
#: The test unittest makes of a test module it could not import: named by the module, as
#: `tests.test_calc (unittest.loader._FailedTest.tests.test_calc)` (Python 3.11+), or
#: `test_calc (unittest.loader._FailedTest)`.
_FAILED_IMPORT = "unittest.loader._FailedTest."
#: How unittest's listing says why: its own frames, then the module's, then the error.
_FAILED_IMPORT_SAID = "ImportError: Failed to import test module:"


def _test_name(method: str, where: str) -> str:
    """The test's full name (Python 3.11+ names it in full; older ones its class only); a
    module that could not be imported by its own name. pycparser's test module importing a
    syntax error was named `tests.test_c_generator (unittest.loader._FailedTest...)`,
    with no word of the error."""
    name = where if where.endswith("." + method) else f"{where}.{method}"
    return name.removeprefix(_FAILED_IMPORT)


def _failing_tests(
    text: str, failures: int, errors: int, ran: int
) -> tuple[int, int, dict[str, str]]:
    """Failed and errored tests, each test once, and the tests the headers of the failure
    listing name (`FAIL` or `ERROR` each): unittest's `FAILED (failures=N)` counts every
    failing subtest, so one test with five failing subtests adds five.

    Counted from the headers of the failure listing when every failure has one (a test
    with both a failing and an erroring subtest is one failed test); when output was cut
    and some are missing, the summary's counts, never more than the tests that ran."""
    failing: dict[str, str] = {}
    headers = 0
    for line in strip_ansi(text).splitlines():
        if match := _UNITTEST_FAILURE.match(line):
            headers += 1
            method, where = match["method"], match["where"]
            name = _test_name(method, where)
            if failing.get(name) != "FAIL":
                failing[name] = match["kind"]
    if headers and headers == failures + errors:
        failed = sum(kind == "FAIL" for kind in failing.values())
        return failed, len(failing) - failed, failing
    failures = min(failures, ran)
    return failures, min(errors, ran - failures), failing


def unittest_failures(text: str, cwd: str) -> tuple[TestCase, ...]:
    """The tests unittest's failure listing in `text` names (`FAIL: test_x (mod.Class.test_x)`),
    each once, with its file and message: for a run read generically (a make target, a
    project's own runner module), whose closing `FAILED (failures=N)` counts what failed and
    names nothing."""
    _, _, failing = _failing_tests(text, 0, 0, 0)
    cases = tuple(
        TestCase(name, "failed" if kind == "FAIL" else "error") for name, kind in failing.items()
    )
    return _with_failure_details(cases, strip_ansi(text), cwd)


#: How much of a failure's exception text a test case keeps (as pytest's JUnit report's
#: failure text is cut).
_MESSAGE_MAX = 500
_TRACEBACK_START = "Traceback (most recent call last):"
_TRACEBACK_FILE = re.compile(r'^  File "(?P<file>[^"]+)", line (?P<line>\d+)')


def _with_failure_details(cases: tuple[TestCase, ...], text: str, cwd: str) -> tuple[TestCase, ...]:
    """`cases` with each failed or erred test's file and message from unittest's failure
    listing: where its traceback starts and the exception it ended with. (tomli's four
    failing tests were named with nothing of why.)"""
    details = _failure_details(text, cwd)
    return tuple(
        dataclasses.replace(case, file=details[case.name][0], message=details[case.name][1])
        if case.outcome in ("failed", "error") and case.name in details and case.message is None
        else case
        for case in cases
    )


def _failure_details(text: str, cwd: str) -> dict[str, tuple[str | None, str | None]]:
    """Each test's first failure block in unittest's listing (a header, a rule, the
    traceback) read as (file, message): the file of the traceback's first frame (the test's
    own: unittest leaves out its own frames), relative to `cwd`, and the last exception's
    text (after a chained one's traceback), with the diff unittest prints under it."""
    found: dict[str, tuple[str | None, str | None]] = {}
    lines = text.splitlines()
    for at, line in enumerate(lines):
        header = _UNITTEST_FAILURE.match(line)
        if header is None:
            continue
        method, where = header["method"], header["where"]
        name = _test_name(method, where)
        if name in found:
            continue  # a later subtest of the same test
        rest = lines[at + 1 :]
        # Past the header's rule, which a test's docstring comes before (its first line:
        # more-itertools' test_ilen was named with no message).
        start = next((i for i, b in enumerate(rest[:2]) if b in _UNITTEST_RULES), 0) + 1
        block: list[str] = []
        for body in rest[start:]:
            if body in _UNITTEST_RULES:
                break
            block.append(body)
        found[name] = _traceback_details(block, cwd)
    return found


def _traceback_details(block: list[str], cwd: str) -> tuple[str | None, str | None]:
    if block and block[0].startswith(_FAILED_IMPORT_SAID):
        return _import_details(block, cwd)
    file = next((relative(m["file"], cwd) for b in block if (m := _TRACEBACK_FILE.match(b))), None)
    starts = [i for i, b in enumerate(block) if b == _TRACEBACK_START]
    if not starts:
        return file, None
    rest = block[starts[-1] + 1 :]
    # The frames are indented; the exception is the first line that is not.
    exception = next((i for i, b in enumerate(rest) if b and not b.startswith(" ")), None)
    if exception is None:
        return file, None
    message = "\n".join(rest[exception:]).strip()
    return file, message[:_MESSAGE_MAX] or None


def _import_details(block: list[str], cwd: str) -> tuple[str | None, str | None]:
    """A test module's failed import: the project's innermost frame (the first frames are
    unittest's loader) and the error, placed there."""
    frames = [m for b in block if (m := _TRACEBACK_FILE.match(b))]
    places = [(relative(m["file"], cwd) or "", m["line"]) for m in frames]
    own = [(path, line) for path, line in places if path and not path.startswith(("/", ".."))]
    error = next((b for b in reversed(block) if b and not b.startswith(" ")), None)
    if not own:
        return None, error
    file, line = own[-1]
    return file, f"{error}\n    at {file}:{line}" if error else None


# unittest -v:  "test_add (tests.test_calc.CalcTest.test_add) ... ok"; a docstring's first
# line, or what the test wrote to stderr, may come between the name and the outcome.
_UNITTEST_CASE = re.compile(r"^(?P<method>[\w.]+) \((?P<where>[\w.]+)\)(?P<rest>.*)$")
_UNITTEST_OUTCOME = re.compile(
    r"(?:^|\.\.\. )(?P<outcome>ok|FAIL|ERROR|skipped\b.*|expected failure|unexpected success)"
    r"(?: \([\d.]+s\))?$"
)
_UNITTEST_OUTCOMES = {
    "ok": "passed",
    "FAIL": "failed",
    "ERROR": "error",
    "unexpected success": "failed",
    # An expected failure did not pass: like pytest's xfail, it counts as not run.
    "expected failure": "skipped",
}
#: The rules unittest draws before its failure details and before its summary.
_UNITTEST_RULES = ("=" * 70, "-" * 70)


#: A test whose name is not `method (module.Class)`: a doctest file (its path, then
#: `Doctest: tutorial.rst ... ok`), a FunctionTestCase, a case with its own __str__.
_UNITTEST_OTHER = re.compile(
    r"^(?P<desc>\S.*?) \.\.\. "
    r"(?P<outcome>ok|FAIL|ERROR|skipped\b.*|expected failure|unexpected success)"
    r"(?: \([\d.]+s\))?$"
)


#: A subtest's line under its test's (Python 3.11+): indented, with its own outcome, or
#: with it on the next line when the test has a docstring (shown there).
_UNITTEST_SUBTEST = re.compile(r"^  (?P<method>\w+) \((?P<where>[\w.]+)\)(?P<rest>.*)$")


def unittest_listing(text: str) -> tuple[TestCase, ...]:
    """The tests `unittest -v` listed in `text` (its stderr), each with its outcome; a test
    whose line never got an outcome (the run ended inside it) is not listed.

    A test with subtests prints a line for each subtest that did not pass, and then
    nothing of its own: it failed (or erred) if one of them did, else it passed, once the
    next test starts or the listing ends. A skipped subtest is not a skipped test: pathspec
    1.1.1's 46 tests that each skip the subtests of engines not installed all ran."""
    cases: list[TestCase] = []
    name: str | None = None
    subtests: list[str] = []
    subtest_open = False  # its outcome is on the next line

    def settle() -> None:
        if name is not None and subtests:
            worst = next((o for o in ("error", "failed") if o in subtests), "passed")
            cases.append(TestCase(name=name, outcome=worst))

    for line in text.splitlines():
        if line in _UNITTEST_RULES:
            settle()
            return tuple(cases)
        sub = _UNITTEST_SUBTEST.match(line)
        # A subtest whose outcome line never came (output cut) does not swallow the next test.
        awaited = subtest_open and not _UNITTEST_CASE.match(line)
        if name is not None and (sub or awaited):
            found = _UNITTEST_OUTCOME.search((sub["rest"] if sub else line).strip())
            subtest_open = found is None
            if found is not None:
                word = "skipped" if found["outcome"].startswith("skipped") else found["outcome"]
                subtests.append(_UNITTEST_OUTCOMES.get(word, word))
            if sub or found is not None:
                continue
        other = None if _UNITTEST_CASE.match(line) else _UNITTEST_OTHER.match(line)
        if other is not None and (name is None or subtests):
            # No test is open (one with subtests has ended): this line is a whole test.
            settle()
            word = "skipped" if other["outcome"].startswith("skipped") else other["outcome"]
            cases.append(TestCase(name=other["desc"], outcome=_UNITTEST_OUTCOMES.get(word, word)))
            name, subtests = None, []
            continue
        if match := _UNITTEST_CASE.match(line):
            settle()
            method, where = match["method"], match["where"]
            # Python 3.11+ names the test in full; older ones name its class only.
            name = _test_name(method, where)
            subtests, subtest_open = [], False
            line = match["rest"]
        if name is not None and (found := _UNITTEST_OUTCOME.search(line.strip())):
            outcome = found["outcome"]
            word = "skipped" if outcome.startswith("skipped") else outcome
            cases.append(TestCase(name=name, outcome=_UNITTEST_OUTCOMES.get(word, word)))
            name, subtests = None, []
    return tuple(cases)


def unittest_running(text: str) -> str | None:
    """The test `unittest -v` had begun and not ended where `text` (its stderr) stops: the
    last test line, when no outcome followed it (idna's hung test, named on its own line)."""
    lines = text.rstrip("\n").splitlines()
    begun = [(i, m) for i, line in enumerate(lines) if (m := _UNITTEST_CASE.match(line))]
    if not begun:
        return None
    last, match = begun[-1]
    if unittest_listing("\n".join(lines[last:])):
        return None  # it ended: the run stopped between tests
    method, where = match["method"], match["where"]
    return _test_name(method, where)


def _verbose(argv: tuple[str, ...]) -> bool:
    """Whether unittest was run to list each test (its last verbosity flag is `-v`)."""
    flags = [a for a in argv if a in ("-v", "--verbose", "-q", "--quiet")]
    return bool(flags) and flags[-1] in ("-v", "--verbose")

"""Rust: rustc diagnostics from cargo's JSON messages (or rustc's text), and cargo test's summary."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from assay.evidence import Check, Diagnostic, TestCase, TestCounts
from assay.parsed_output import Reading
from assay.parsers import ParsedOutput
from assay.parsers._text import combined, json_lines, relative, to_int
from assay.process import ProcessResult

# error[E0308]: mismatched types      then      --> src/main.rs:2:18
_RUSTC_HEADER = re.compile(r"^(?P<sev>error|warning)(?:\[(?P<code>[A-Z]\d+)\])?: (?P<msg>.+)$")
_RUSTC_WHERE = re.compile(r"^\s*--> (?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+)")
#: The same, in a message's whole `rendered` text.
_RENDERED_WHERE = re.compile(_RUSTC_WHERE.pattern, re.MULTILINE)
# test result: ok. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
_TEST_RESULT = re.compile(
    r"^test result: (?P<status>\w+)\. (?P<passed>\d+) passed; (?P<failed>\d+) failed; "
    r"(?P<ignored>\d+) ignored"
)
# test tests::adds ... ok      test src/lib.rs - add (line 3) ... ok      (a doc-test)
_TEST_LINE = re.compile(r"^test (?P<name>.+?) \.\.\. (?P<outcome>ok|FAILED|ignored)\b")
#: A test binary's first line: what follows up to its `test result:` line is its own.
_RUNNING = re.compile(r"^running \d+ tests?$")
_TEST_OUTCOME = {"ok": "passed", "FAILED": "failed", "ignored": "skipped"}
_SEVERITY = {"error": "error", "warning": "warning", "note": "note", "help": "note"}


def rustc_diagnostics(result: ProcessResult) -> list[Diagnostic]:
    """From cargo's `--message-format=json` messages when it printed them, else from text."""
    messages = [item for item in json_lines(result.stdout.text) if "reason" in item]
    if not messages:
        return list(dict.fromkeys(_from_text(combined(result), result.cwd)))
    # Every compile's messages are in the JSON: rustc's text beside it is what the tests
    # printed (autocfg's tests run rustc on probes that must not compile, and pass).
    diagnostics = [
        d
        for item in messages
        if item.get("reason") == "compiler-message"
        and (d := _from_json(item.get("message"), result.cwd)) is not None
    ]
    # One crate compiled as several targets (lib, lib test) reports the same problem per target.
    return list(dict.fromkeys(diagnostics))


def _from_json(message: Any, cwd: str) -> Diagnostic | None:
    if not isinstance(message, dict):
        return None
    level = str(message.get("level", ""))
    spans = [s for s in message.get("spans") or () if isinstance(s, dict)]
    if level not in ("error", "warning") or not spans:
        return None  # "aborting due to N errors" and friends carry no location
    span = next((s for s in spans if s.get("is_primary")), spans[0])
    file, line, column = span.get("file_name"), span.get("line_start"), span.get("column_start")
    rendered = message.get("rendered")
    if isinstance(rendered, str) and (shown := _RENDERED_WHERE.search(rendered)) is not None:
        # Where rustc's own `-->` points, of several primary spans: an unclosed `(`, where
        # the first in the JSON is the `}` that ended the file (heck: 175, not 180).
        file, line, column = shown["file"], shown["line"], shown["col"]
    code = message.get("code")
    return Diagnostic(
        message=str(message.get("message", "")),
        file=relative(file, cwd),
        line=to_int(line),
        column=to_int(column),
        code=code.get("code") if isinstance(code, dict) else None,
        severity=_SEVERITY[level],
        tool="rustc",
    )


def _from_text(text: str, cwd: str) -> list[Diagnostic]:
    diagnostics: list[Diagnostic] = []
    pending: re.Match[str] | None = None
    for line in text.splitlines():
        if header := _RUSTC_HEADER.match(line):
            pending = header
        elif pending is not None and (where := _RUSTC_WHERE.match(line)):
            diagnostics.append(
                Diagnostic(
                    message=pending["msg"],
                    file=relative(where["file"], cwd),
                    line=int(where["line"]),
                    column=int(where["col"]),
                    code=pending["code"],
                    severity=_SEVERITY[pending["sev"]],
                    tool="rustc",
                )
            )
            pending = None
    return diagnostics


# libtest's word, once a test has run for a minute, that it still runs; a doc-test's name
# has spaces (`src/lib.rs - Either<L,R>::is_left (line 114)`).
_STILL_RUNNING = re.compile(
    r"^test (?P<name>.+?) has been running for over \d+ seconds$", re.MULTILINE
)


def parse_cargo(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    """`cargo build/check/clippy` (diagnostics) or `cargo test` (diagnostics and test results)."""
    diagnostics = rustc_diagnostics(result)
    errors = any(d.severity == "error" for d in diagnostics)
    printed = _printed(result.stdout.text)
    if "test" not in check.argv[1:2]:
        return ParsedOutput(
            diagnostics=tuple(diagnostics), failure_recognized=errors, printed=printed
        )
    text = combined(result)
    tests, cases = cargo_test_results(text)
    return ParsedOutput(
        diagnostics=tuple(diagnostics),
        tests=tests,
        test_cases=cases,
        failure_recognized=errors or (tests is not None and tests.any_failed),
        no_tests_reported=tests is not None and tests.executed == 0,
        readings=_readings(tests, cases, result),
        hung_tests=_still_running(text, cases) if result.timed_out else (),
        printed=printed,
    )


def _still_running(text: str, cases: tuple[TestCase, ...]) -> tuple[str, ...]:
    """The tests libtest said still ran, that never ended: those a run stopped at assay's
    deadline hung in (libtest names no test that started, only one past a minute)."""
    ended = {case.name for case in cases}
    running = (m["name"] for m in _STILL_RUNNING.finditer(text) if m["name"] not in ended)
    return tuple(dict.fromkeys(running))


def _printed(stdout: str) -> str | None:
    """cargo's output as it prints it for a person, where it wrote JSON messages
    (`--message-format=json`): each compiler message as rendered, the rest as it is."""
    lines: list[str] = []
    messages = 0
    for line in stdout.splitlines(keepends=True):
        item = next(json_lines(line), None) if line.startswith("{") else None
        if item is None:
            lines.append(line)
            continue
        messages += 1
        message = item.get("message")
        if item.get("reason") == "compiler-message" and isinstance(message, dict):
            lines.append(str(message.get("rendered") or ""))
    return "".join(lines) if messages else None


#: Flags that leave the harness no line per test to count: a dot per test, or the tests'
#: own output written into the middle of their lines.
_NO_LISTING = frozenset({"-q", "--quiet", "--format=terse", "--nocapture"})


def _readings(
    tests: TestCounts | None, cases: tuple[TestCase, ...], result: ProcessResult
) -> tuple[Reading, ...]:
    """Every `test result:` line against the line each test got, where it gets one."""
    if tests is None:
        return ()
    ran = tests.passed + tests.failed + tests.skipped
    summary = Reading("cargo's `test result:` lines", ran=ran, failed=tests.failed)
    if _NO_LISTING & set(result.argv) or result.stdout.truncated or result.stderr.truncated:
        return (summary,)
    failed = sum(c.outcome == "failed" for c in cases)
    return (summary, Reading("cargo's per-test lines", ran=len(cases), failed=failed))


def cargo_test_results(text: str) -> tuple[TestCounts | None, tuple[TestCase, ...]]:
    """Sum of every `test result:` line (one per test binary, doc-tests included), and of
    the per-test lines of a binary that never printed its own: one stopped at the
    deadline or killed mid-run still ran the tests it reported."""
    passed = failed = ignored = 0
    seen = False
    cases: list[TestCase] = []
    unsummed: list[TestCase] = []
    for line in text.splitlines():
        if match := _TEST_RESULT.match(line):
            seen = True
            passed += int(match["passed"])
            failed += int(match["failed"])
            ignored += int(match["ignored"])
            unsummed.clear()
        elif _RUNNING.match(line):
            unsummed.clear()
        elif match := _TEST_LINE.match(line):
            case = TestCase(name=match["name"], outcome=_TEST_OUTCOME[match["outcome"]])
            cases.append(case)
            unsummed.append(case)
    if unsummed:
        seen = True
        passed += sum(case.outcome == "passed" for case in unsummed)
        failed += sum(case.outcome == "failed" for case in unsummed)
        ignored += sum(case.outcome == "skipped" for case in unsummed)
    if not seen:
        return None, tuple(cases)
    return TestCounts(passed=passed, failed=failed, skipped=ignored, source="text"), tuple(cases)


def parse_rustc(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    diagnostics = rustc_diagnostics(result)
    return ParsedOutput(
        diagnostics=tuple(diagnostics),
        failure_recognized=any(d.severity == "error" for d in diagnostics),
    )

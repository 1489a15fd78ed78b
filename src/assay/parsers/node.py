"""TypeScript/JavaScript tools: tsc text, eslint JSON, jest/vitest JSON reports, node --test TAP."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path
from typing import Any

from assay.evidence import Check, Diagnostic, TestCase, TestCounts
from assay.formats.failures import COLLECTION_FAILURE
from assay.parsed_output import Reading
from assay.parsers import ParsedOutput, generic, report_path
from assay.parsers._text import (
    combined,
    count_cases,
    json_document,
    relative,
    strip_ansi,
    to_int,
)
from assay.parsers.node_failures import (
    TapRun,
    message,
    printed_failures,
    tap_run,
    tap_top_level,
)
from assay.parsers.report_file import Refused, read_report
from assay.process import ProcessResult

# tsc --pretty false:  src/a.ts(1,7): error TS2322: Type 'string' is not ...
_TSC_PLAIN = re.compile(
    r"^(?P<file>.+?)\((?P<line>\d+),(?P<col>\d+)\): (?P<sev>error|warning|message) "
    r"(?P<code>TS\d+): (?P<msg>.*)$"
)
# tsc --pretty:  src/a.ts:1:7 - error TS2322: Type 'string' is not ...
_TSC_PRETTY = re.compile(
    r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+) - (?P<sev>error|warning|message) "
    r"(?P<code>TS\d+): (?P<msg>.*)$"
)
# A diagnostic with no file: "error TS5058: The specified path does not exist".
_TSC_GLOBAL = re.compile(r"^(?P<sev>error|warning) (?P<code>TS\d+): (?P<msg>.*)$")


def parse_tsc(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    diagnostics: list[Diagnostic] = []
    for line in combined(result).splitlines():
        match = _TSC_PLAIN.match(line) or _TSC_PRETTY.match(line)
        if match is not None:
            diagnostics.append(
                Diagnostic(
                    message=match["msg"],
                    file=relative(match["file"], result.cwd),
                    line=int(match["line"]),
                    column=int(match["col"]),
                    code=match["code"],
                    severity=_TSC_SEVERITY[match["sev"]],
                    tool="tsc",
                )
            )
        elif match := _TSC_GLOBAL.match(line.strip()):
            diagnostics.append(
                Diagnostic(
                    message=match["msg"],
                    code=match["code"],
                    severity=_TSC_SEVERITY[match["sev"]],
                    tool="tsc",
                )
            )
    return ParsedOutput(diagnostics=tuple(diagnostics), failure_recognized=bool(diagnostics))


_TSC_SEVERITY = {"error": "error", "warning": "warning", "message": "note"}
#: TypeScript's parser's errors (`TS1005: ')' expected`, unterminated literals): the code's
#: text, whatever its dependencies' types say.
_TSC_SYNTAX = range(1000, 1166)


#: TypeScript source files, where a type error is the code's (not tsconfig.json's options).
_TS_SOURCES = (".ts", ".tsx", ".mts", ".cts")


def ts_syntax_error_in(
    text: str, root: str, outside: tuple[str, ...] = (), *, type_errors: bool = False
) -> Diagnostic | None:
    """The first TypeScript syntax error `text` reports in a file of the project at `root`
    (an install whose `prepare` script built the project with tsc), unless that file lies
    under one of `outside` (the dependencies); with `type_errors`, any error of tsc's in
    such a TypeScript source (the install took the lockfile's releases: the types are the
    ones the project was written against)."""
    for line in text.splitlines():
        match = _TSC_PLAIN.match(line) or _TSC_PRETTY.match(line)
        if match is None or match["sev"] != "error":
            continue
        if int(match["code"][2:]) not in _TSC_SYNTAX and not (
            type_errors and match["file"].endswith(_TS_SOURCES)
        ):
            continue  # a type error of a configuration (tsconfig.json) may be the release's
        file = os.path.normpath(os.path.join(root, match["file"]))
        inside = file.startswith(root.rstrip("/") + "/") and os.path.isfile(file)
        if not inside or any(file.startswith(os.path.join(root, o) + "/") for o in outside):
            continue
        return Diagnostic(
            message=match["msg"],
            file=relative(file, root),
            line=int(match["line"]),
            column=int(match["col"]),
            code=match["code"],
            tool="tsc",
        )
    return None


_ESLINT_SEVERITY = {2: "error", 1: "warning"}

#: Biome's diagnostic headers (`index.js:2:20 lint/suspicious/noDoubleEquals  FIXABLE  ━━`,
#: `index.js format ━━`), each followed by its `× message` (errors) or `! message`.
_BIOME_HEADER = re.compile(
    r"^(?P<file>[^\s:]+)(?::(?P<line>\d+):(?P<col>\d+))? (?P<code>[\w/-]+)(?:\s+[A-Z]+)*\s+━"
)
_BIOME_MESSAGE = re.compile(r"^\s+(?P<mark>[×!i]) (?P<msg>\S.*)$")


def parse_biome(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    """Biome's text report: a header line per finding, its message on a line below it."""
    diagnostics: list[Diagnostic] = []
    header: re.Match[str] | None = None
    for line in strip_ansi(combined(result)).splitlines():
        if found := _BIOME_HEADER.match(line):
            header = found
            continue
        said = _BIOME_MESSAGE.match(line) if header is not None else None
        if header is None or said is None:
            continue
        diagnostics.append(
            Diagnostic(
                message=said["msg"].strip(),
                file=relative(header["file"], result.cwd),
                line=int(header["line"]) if header["line"] else None,
                column=int(header["col"]) if header["col"] else None,
                code=header["code"],
                severity="error" if said["mark"] == "×" else "warning",
                tool="biome",
            )
        )
        header = None
    return ParsedOutput(
        diagnostics=tuple(diagnostics),
        failure_recognized=any(d.severity == "error" for d in diagnostics),
    )


def parse_eslint(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    """eslint `-f json`: one entry per file, each with its messages (severity 2 = error)."""
    document = json_document(result.stdout.text)
    diagnostics: list[Diagnostic] = []
    if isinstance(document, list):
        for file_result in document:
            if not isinstance(file_result, dict):
                continue
            file = relative(file_result.get("filePath"), result.cwd)
            for message in file_result.get("messages") or ():
                if not isinstance(message, dict):
                    continue
                fatal = bool(message.get("fatal"))
                diagnostics.append(
                    Diagnostic(
                        message=str(message.get("message", "")),
                        file=file,
                        line=to_int(message.get("line")),
                        column=to_int(message.get("column")),
                        # Parse errors have no rule; name them so they are not mistaken for none.
                        code=message.get("ruleId") or ("syntax-error" if fatal else None),
                        severity=_ESLINT_SEVERITY.get(
                            to_int(message.get("severity")) or 2, "error"
                        ),
                        tool="eslint",
                    )
                )
    return ParsedOutput(diagnostics=tuple(diagnostics), failure_recognized=bool(diagnostics))


_JEST_STATUS = {
    "passed": "passed",
    "failed": "failed",
    "pending": "skipped",
    "skipped": "skipped",
    "todo": "skipped",
    "disabled": "skipped",
}


def parse_jest(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    """jest `--json` / vitest `--reporter=json` (the same shape), from the report file when
    one was asked for, else from stdout."""
    refused: str | None = None
    if report_dir is not None:
        data = read_report(report_path(report_dir, check, "json"))
        refused = data.reason if isinstance(data, Refused) else None
        try:
            document: Any = json.loads(data) if isinstance(data, bytes) else None
        except (ValueError, RecursionError):  # malformed JSON or text that is not UTF-8
            document = None
    else:
        document = json_document(result.stdout.text)
    if not isinstance(document, dict):
        return ParsedOutput(
            failure_recognized=_text_shows_failure(result),
            report_refused=refused,
            hung_tests=_started_not_ended(check, result, report_dir),
        )
    cases: list[TestCase] = []
    unloaded: list[TestCase] = []  # after the tests: a test's failure is the one to name first
    for suite in document.get("testResults") or ():
        if not isinstance(suite, dict):
            continue
        file = relative(suite.get("name"), result.cwd)
        if suite.get("status") == "failed" and not suite.get("assertionResults"):
            unloaded.append(_unloaded(file, suite.get("message"), result.cwd))
        for assertion in suite.get("assertionResults") or ():
            if not isinstance(assertion, dict):
                continue
            messages = assertion.get("failureMessages") or []
            cases.append(
                TestCase(
                    name=_test_name(assertion),
                    outcome=_JEST_STATUS.get(str(assertion.get("status")), "error"),
                    file=file,
                    duration_s=_ms(assertion.get("duration")),
                    message=message(strip_ansi(str(messages[0])), result.cwd) if messages else None,
                )
            )
    cases += unloaded
    # A test jest stopped at its own per-test timeout hung: named, and counted neither way.
    hung = [c for c in cases if _runner_timed_out(c)]
    counted = [c for c in cases if c not in hung]
    tests = count_cases(counted, "jest-json")
    return ParsedOutput(
        tests=tests,
        test_cases=tuple(cases),
        failure_recognized=tests.any_failed,
        no_tests_reported=tests.executed == 0 and not hung,
        report_found=True,
        readings=_jest_readings(cases, result),
        hung_tests=tuple(c.name for c in hung),
    )


def _started_not_ended(
    check: Check, result: ProcessResult, report_dir: Path | None
) -> tuple[str, ...]:
    """A run stopped at assay's deadline, which wrote no report: the tests assay's
    reporter saw start and not end (`assay.js_test_starts`)."""
    if not result.timed_out or report_dir is None:
        return ()
    from assay.js_test_starts import hung, record_path

    record = read_report(record_path(report_path(report_dir, check, "json")))
    return hung(record, result.cwd) if isinstance(record, bytes) else ()


def _test_name(assertion: dict[str, Any]) -> str:
    # vitest 0.34 (cosmiconfig's) joins the titles above a test with the file's own, which
    # is empty: " finds JS file in first searched dir sync".
    return str(assertion.get("fullName") or assertion.get("title") or "?").strip() or "?"


def parse_script_runner(
    check: Check, result: ProcessResult, report_dir: Path | None
) -> ParsedOutput:
    """A package script that ends with jest or vitest (`tools.node.NPM_JEST`): the runner's
    report; where it wrote none (a command before it failed: dayjs runs jest on its time
    zone tests first), what the script printed, read as any package script's output is."""
    parsed = parse_jest(check, result, report_dir)
    if parsed.report_found or parsed.report_refused or parsed.hung_tests:
        return parsed
    return parse_node_test(check, result, report_dir)


def _unloaded(file: str | None, said: object, cwd: str) -> TestCase:
    """A test file that failed to load, so that no test in it ran (a syntax error, a module
    or a data file it could not find), as one error named after the file, with why. It
    stands for no test of the file's (`file` is left unset: no test is listed in it). Its
    message is marked as a module pytest could not collect is, so that the note says the
    file ran no test: @open-draft/until's parse error in src/index.ts read as "1 of 1 tests
    failed: src/until.test.ts"."""
    why = message(strip_ansi(said), cwd) if isinstance(said, str) and said.strip() else None
    marked = f"{COLLECTION_FAILURE}: {why}" if why else COLLECTION_FAILURE
    return TestCase(name=file or "?", outcome="error", message=marked)


#: The failure a runner gives a test it stopped at its own per-test timeout: jest's
#: `thrown: "Exceeded timeout of 5000 ms for a test.` (or hook), mocha's `Timeout of 2000ms
#: exceeded.`, vitest's `Test timed out in 5000ms.` Such a test hung: that says nothing
#: about the code, as a hang assay's own deadline stops says nothing.
_RUNNER_TIMED_OUT = re.compile(
    r'^(?:Error: )?(?:thrown: "Exceeded timeout of \d+ ms for a (?:test|hook)\b'
    r"|Timeout of \d+ms exceeded\.|Test timed out in \d+ms\.)"
)


def _runner_timed_out(case: TestCase) -> bool:
    return case.message is not None and _RUNNER_TIMED_OUT.match(case.message) is not None


# jest's summary on stderr: "Tests:       1 failed, 1 skipped, 2 passed, 4 total"
_JEST_SUMMARY = re.compile(r"^Tests:\s+(?P<counts>(?:\d+ [a-z]+, )*)(?P<total>\d+) total\s*$")


def _jest_readings(cases: list[TestCase], result: ProcessResult) -> tuple[Reading, ...]:
    """jest's printed summary against its report, when it printed one (a project may
    replace its reporters; vitest, asked for JSON, prints none): every test either lists."""
    summary = None
    for line in strip_ansi(result.stderr.text).splitlines()[-200:]:
        summary = _JEST_SUMMARY.match(line.strip()) or summary
    if summary is None:
        return ()
    failed = sum(
        int(n) for n, word in re.findall(r"(\d+) ([a-z]+)", summary["counts"]) if word == "failed"
    )
    report_failed = sum(c.outcome in ("failed", "error") for c in cases)
    return (
        Reading("the JSON report", ran=len(cases), failed=report_failed),
        Reading("jest's summary", ran=int(summary["total"]), failed=failed),
    )


def _ms(value: object) -> float | None:
    return float(value) / 1000.0 if isinstance(value, int | float) else None


def _text_shows_failure(result: ProcessResult) -> bool:
    counts = generic.parse_counts(combined(result))
    return counts is not None and counts.any_failed


# TAP (node --test --test-reporter=tap):  "# pass 3" ... ; spec reporter:  "ℹ pass 3"
_NODE_SUMMARY = re.compile(
    r"^(?:#|ℹ)\s+(?P<key>tests|pass|fail|cancelled|skipped|todo)\s+(?P<n>\d+)\s*$"
)


def parse_node_test(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    """`node --test`: the closing summary (TAP or spec reporter) and top-level TAP results.

    Read from stdout only, where the reporter writes: `combined` puts stderr after stdout,
    so a summary forged on stderr would otherwise come after the real one and win.
    """
    summary: dict[str, int] = {}
    text = strip_ansi(result.stdout.text)
    for line in text.splitlines():
        if match := _NODE_SUMMARY.match(line.strip()):
            # The last summary wins: the closing one covers the whole run.
            summary[match["key"]] = int(match["n"])
    if not summary:
        parsed = generic.parse(check, result, report_dir)
        tap = tap_run(text, result.cwd)
        # A stream with no plan was cut short, or is not TAP; one with node-tap's own
        # `timeout!` is node-tap's, cut short by assay's deadline (npm/ini: two files timed
        # out by node-tap, then killed before its closing plan; read as "2 of 2 failed").
        if tap.tap and (tap.plans or tap.hung):
            parsed = _with_plain_tap(parsed, tap, cut=result.timed_out)
        if result.timed_out and not parsed.hung_tests and (suite := uvu_running(text)):
            parsed = dataclasses.replace(parsed, hung_tests=(suite,))
        if result.timed_out and not parsed.hung_tests and (block := tape_running(text)):
            parsed = dataclasses.replace(parsed, hung_tests=(block,))
        if result.timed_out and not parsed.hung_tests and (test := mocha_running(text)):
            parsed = dataclasses.replace(parsed, hung_tests=(test,))
        return _with_printed_failures(parsed, result)
    cases = tap_top_level(text, result.cwd)
    if not cases and summary.get("fail"):
        # tape: no `- ` after the number, no subtests; each failure named by its block.
        cases = tap_run(text, result.cwd).failures
    # tape prints this summary too; where it counted no assertion, its blocks ran.
    blocks = 0 if summary.get("tests") else generic.unasserted_tape_blocks(text)
    tests = TestCounts(
        passed=summary.get("pass", 0) or blocks,
        failed=summary.get("fail", 0),
        errors=summary.get("cancelled", 0),
        skipped=summary.get("skipped", 0) + summary.get("todo", 0),
        source="text",
    )
    return ParsedOutput(
        tests=tests,
        test_cases=tuple(cases),
        failure_recognized=tests.any_failed,
        no_tests_reported=summary.get("tests", tests.executed) == 0 and not blocks,
    )


#: uvu's default reporter: a test file's name on a line of its own, then per suite
#: ` name ` followed by a mark per test as it ends (`•` passed, `✘` failed, `-` skipped) and,
#: once the suite is done, `  (passed / total)`.
_UVU_SUITE_DONE = re.compile(r"^ \S.*?\s\(\d+ / \d+\)\s*$")
_UVU_SUITE_OPEN = re.compile(r"^ (?P<suite>\S(?:.*?\S)?) (?:\s*[•✘-])*\s*$")
_UVU_STARTED = re.compile(r"^> .*\buvu\b", re.MULTILINE)


def uvu_running(text: str) -> str | None:
    """The uvu suite a run stopped at assay's deadline was in (`file > suite`): its line was
    begun, never closed with its `(n / m)` count. None where the output is not uvu's (its
    package script's `> uvu ...` line, or a closed suite's line, says it is)."""
    lines = text.rstrip("\n").split("\n")
    if not lines or not (
        _UVU_STARTED.search(text) or any(_UVU_SUITE_DONE.match(line) for line in lines)
    ):
        return None
    last = _UVU_SUITE_OPEN.match(lines[-1])
    if last is None or _UVU_SUITE_DONE.match(lines[-1]):
        return None
    suite = last["suite"]
    # The file it belongs to: the nearest line above that is neither a suite's nor blank.
    for line in reversed(lines[:-1]):
        if line.strip() and not line.startswith(" ") and not line.startswith(">"):
            return f"{line.strip()} > {suite}"
        if line.startswith(">"):
            break
    return suite


#: tape run by a package script (`> c8 tape test/*.js`), and each test's `# name` line, which
#: tape prints as the test starts, before its assertions' `ok N` lines.
_TAPE_STARTED = re.compile(r"^> (?:.*[\s/])?tape(?:\s|$)", re.MULTILINE)
_TAPE_BLOCK = re.compile(r"^# (?P<name>\S.*?)\s*$")
_TAPE_TOTALS = re.compile(r"^# (?:tests|pass|fail|ok|todo|skip)\b")


def tape_running(text: str) -> str | None:
    """The tape test a run stopped at assay's deadline was in: the last `# name` line tape
    printed as it started a test, in a run that never reached its closing `# tests N`
    (fastify/deepmerge with a loop in `cloneArray`: "npm-test was killed at its deadline",
    the test unnamed, where its last line was `# should replace objects with arrays`).
    None where the output is not tape's (its package script's `> ... tape ...` line)."""
    if not _TAPE_STARTED.search(text):
        return None
    for line in reversed(text.splitlines()):
        if _TAPE_TOTALS.match(line):
            return None  # it ended
        if found := _TAPE_BLOCK.match(line):
            return found["name"]
    return None


#: mocha run by a package script (`> mocha --check-leaks --reporter spec`); its spec
#: reporter's closing count; and a test's line, printed as it ends: passed (`✔ name (12ms)`),
#: failed (`1) name`) or pending (`- name`). Any other indented line is a suite's title,
#: printed as the suite begins, two spaces deeper per level.
_MOCHA_STARTED = re.compile(r"^> (?:.*[\s/])?mocha(?:\s|$)", re.MULTILINE)
_MOCHA_ENDED = re.compile(r"^\s+\d+ (?:passing|failing|pending)\b", re.MULTILINE)
_MOCHA_TEST = re.compile(r"^(?:[✔✓√]|\d+\)|-) (?P<name>.+?)(?: \(\d+ms\))?$")


def mocha_running(text: str) -> str | None:
    """Where a mocha run stopped at assay's deadline was: its open suites, and the test
    after the last one it printed (a test's line comes only as it ends, so the one that
    hung is never printed). bytes.js with an endless loop in `format`: "npm-test printed
    nothing for 60 s", where mocha had begun `Test byte format function` and ended no test
    in it. None where the output is not mocha's, or the run reached its closing counts."""
    started = list(_MOCHA_STARTED.finditer(text))
    if not started or _MOCHA_ENDED.search(text, started[-1].end()):
        return None
    suites: list[tuple[int, str]] = []
    last: tuple[int, str] | None = None
    for line in text[started[-1].end() :].splitlines():
        title = line.strip()
        depth = len(line) - len(line.lstrip(" "))
        if not title or depth < 2:
            continue  # the test's own printing, at the margin
        # A line closes every suite as deep as it or deeper: a test's is its suite's child.
        while suites and suites[-1][0] >= depth:
            suites.pop()
        if test := _MOCHA_TEST.match(title):
            last = (depth, test["name"])
            continue
        suites.append((depth, title))
        last = None
    if not suites:
        return None
    path = " > ".join(title for _, title in suites)
    if last is not None and last[0] > suites[-1][0]:
        return f"{path} > the test after '{last[1]}'"
    return f"{path} > its first test"


def _with_plain_tap(parsed: ParsedOutput, tap: TapRun, *, cut: bool = False) -> ParsedOutput:
    """A TAP stream with no closing counts (node-tap: `1..N` and `# time=`), counted by its
    top-level results. A plan that promised more results than came (a run that died), or a
    `Bail out!`, is an error; failures another summary counted beyond the stream's own
    `not ok`s stay counted; a test node-tap stopped at its deadline is named, not counted.
    A stream `cut` at assay's deadline owes nothing of its plan: the subtest it was in
    hung (dotenv's `tap run` with a loop in parse: "7 of 7 tests failed" for its plan of 7,
    where node-tap had begun tests/test-config-import.js and printed nothing more)."""
    owed = 0 if cut and tap.unfinished else max(0, tap.planned - tap.results)
    errors = owed + int(tap.bailed)
    if cut and tap.unfinished and not tap.hung:
        tap = dataclasses.replace(tap, hung=[tap.unfinished])
    # Counted by the innermost tests where there are more of them than top-level results
    # (node-tap: one per file); a plan owed or a bail-out still counts at the top level.
    counted = tap.leaves if tap.leaves.total() > tap.results else tap.top_level
    tests = TestCounts(
        passed=counted["passed"],
        failed=counted["failed"],
        errors=errors,
        skipped=counted["skipped"],
        source="text",
    )
    other = parsed.tests
    if other is not None:
        # Another summary's failures that node-tap's hangs account for are not more.
        mine, hangs = counted["failed"], max(counted["timed_out"], tap.timed_out)
        tests = dataclasses.replace(
            tests,
            failed=mine if other.failed <= mine + hangs else other.failed,
            errors=max(errors, other.errors),
        )
    return dataclasses.replace(
        parsed,
        tests=tests,
        test_cases=tuple(tap.failures) or parsed.test_cases,
        failure_recognized=tests.any_failed or parsed.failure_recognized,
        no_tests_reported=tests.executed == 0 and not tap.hung,
        hung_tests=(*parsed.hung_tests, *tap.hung),
    )


def _with_printed_failures(parsed: ParsedOutput, result: ProcessResult) -> ParsedOutput:
    """A script that runs mocha, jest or vitest with their own reporters: the failing tests
    they list, for the report to name (the counts stay the summary's)."""
    if parsed.test_cases or not parsed.failure_recognized:
        return parsed
    failing = printed_failures(strip_ansi(combined(result)), result.cwd)
    if not failing:
        return parsed
    parsed = dataclasses.replace(parsed, test_cases=tuple(failing))
    hung = [c for c in failing if _runner_timed_out(c)]
    if not hung or parsed.tests is None:
        return parsed
    # The summary counted the hung tests as failing: they come off, and are named instead.
    tests = dataclasses.replace(parsed.tests, failed=max(0, parsed.tests.failed - len(hung)))
    return dataclasses.replace(
        parsed,
        tests=tests,
        failure_recognized=tests.any_failed or bool(parsed.diagnostics),
        hung_tests=(*parsed.hung_tests, *(c.name for c in hung)),
    )

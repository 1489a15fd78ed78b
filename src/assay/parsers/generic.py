"""Tool-agnostic reading of output: test summary lines any common runner prints."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from assay.evidence import Check, Diagnostic, TestCase, TestCounts
from assay.gopath_layout import IMPORT_PATH_ENV
from assay.parsers import ParsedOutput
from assay.parsers._text import combined, relative, strip_ansi
from assay.parsers.crash import (
    crash_diagnostics,
    missing_browser,
    missing_command,
    missing_tool_module,
    shell_crash,
)
from assay.parsers.go import timed_out_tests
from assay.parsers.go_verbose_text import failed_tests, running_tests
from assay.process import ProcessResult
from assay.verdict import Kind

# "3 passed, 1 failed" (pytest, the plain closing line), "N passed; M failed" (cargo),
# "2 tests passed" / "1 test failed" (ava). A number that ends a word is a name's
# (uthash's `test92 failed`), not a count.
_COUNT = re.compile(r"(?<![\w.])(\d+) (?:tests? )?(passed|failed|errors?|skipped)\b")
_KEYS = {"error": "errors", "passing": "passed", "failing": "failed", "pending": "skipped"}
_KEYS |= {"pass": "passed", "fail": "failed", "skip": "skipped", "todo": "skipped"}


def _counted(word: str, number: str) -> dict[str, int]:
    return {_KEYS.get(word.lower(), word.lower()): int(number)}


def _out_of(total: str, failed: str, skipped: str = "0") -> dict[str, int]:
    """A summary that gives the total and its failures: the rest passed."""
    passed = max(0, int(total) - int(failed) - int(skipped))
    return {"passed": passed, "failed": int(failed), "skipped": int(skipped)}


# Other runners' summary lines, each read into counts (`re.MULTILINE`: `^` is a line's start).
_SUMMARIES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], dict[str, int]]], ...] = (
    # mocha: "2 passing (5ms)", "1 failing", "1 pending"
    (
        re.compile(r"^\s*(\d+) (passing|failing|pending)\b", re.MULTILINE),
        lambda m: _counted(m[2], m[1]),
    ),
    # TAP (tape, node:test): "# pass  2", "# fail 1"; node:test's spec reporter: "ℹ pass 2"
    (
        re.compile(r"^(?:#|ℹ) ?(pass|fail|skip(?:ped)?) +(\d+)\s*$", re.MULTILINE),
        lambda m: _counted(m[1], m[2]),
    ),
    # bun test: " 59 pass", " 1 fail", " 2 skip", " 1 todo", one per line, then "Ran 62 tests".
    (
        re.compile(r"^ ?(\d+) (pass|fail|skip|todo)\s*$", re.MULTILINE),
        lambda m: _counted(m[2], m[1]),
    ),
    # C test programs: "PASSED: 3" / "FAILED: 1", "Tests passed: 3" / "Tests failed: 1"
    (
        re.compile(
            r"^\s*(?:tests? )?(passed|failed|skipped)\s*:\s*(\d+)\s*$", re.MULTILINE | re.IGNORECASE
        ),
        lambda m: _counted(m[1], m[2]),
    ),
    # A C test driver's total and its failures: "102 tests conducted, 7 failed." (uthash)
    (
        re.compile(
            r"^\s*(\d+) tests? (?:conducted|run|ran|executed|completed),? (\d+) failed\b",
            re.MULTILINE | re.IGNORECASE,
        ),
        lambda m: _out_of(m[1], m[2]),
    ),
    # uvu: "Total:     2" / "Passed:    1" / "Skipped:   0", one per line
    (
        re.compile(r"^\s*Total:\s+(\d+)\s+Passed:\s+(\d+)\s+Skipped:\s+(\d+)", re.MULTILINE),
        lambda m: {
            "passed": int(m[2]),
            "failed": max(0, int(m[1]) - int(m[2]) - int(m[3])),
            "skipped": int(m[3]),
        },
    ),
    # jasmine: "2 specs, 1 failure", "3 specs, 0 failures, 1 pending spec"
    (
        re.compile(r"(\d+) specs?, (\d+) failures?(?:, (\d+) pending specs?)?"),
        lambda m: _out_of(m[1], m[2], m[3] or "0"),
    ),
    # Unity: "3 Tests 1 Failures 0 Ignored"
    (
        re.compile(r"(\d+) Tests (\d+) Failures (\d+) Ignored"),
        lambda m: _out_of(m[1], m[2], m[3]),
    ),
    # CTest: "50% tests passed, 1 tests failed out of 2"
    (
        re.compile(r"\d+% tests passed, (\d+) tests? failed out of (\d+)"),
        lambda m: _out_of(m[2], m[1]),
    ),
    # unittest, run by a make target or a script: "Ran 99 tests in 2.318s", a blank line,
    # then "OK", "OK (skipped=1)" or "FAILED (failures=1, errors=2)"
    (
        re.compile(
            r"^Ran (\d+) tests? in [\d.]+s\n\n(?:OK|FAILED)(?: \(([^)\n]*)\))?[ \t]*$",
            re.MULTILINE,
        ),
        lambda m: _unittest_counts(int(m[1]), m[2] or ""),
    ),
)


#: unittest's closing count, which a run read generically may end with.
_UNITTEST_RAN = re.compile(r"^Ran \d+ tests? in [\d.]+s$", re.MULTILINE)


def _unittest_counts(ran: int, details: str) -> dict[str, int]:
    """unittest's closing line read into counts: failures and unexpected successes failed,
    errors errored, the rest of what ran passed unless skipped."""
    said = {k.strip(): int(v) for k, v in re.findall(r"([a-z ]+)=(\d+)", details)}
    failed = said.get("failures", 0) + said.get("unexpected successes", 0)
    errors, skipped = said.get("errors", 0), said.get("skipped", 0)
    passed = max(0, ran - failed - errors - skipped)
    return {"passed": passed, "failed": failed, "errors": errors, "skipped": skipped}


# go test's plain text: "--- FAIL: TestDouble (0.00s)" (PASS and SKIP too under -v), at any
# depth (subtests are indented), counted line by line: go prints no count of its own.
_GO_RESULT = re.compile(r"^\s*--- (PASS|FAIL|SKIP): \S", re.MULTILINE)
# Without -v a passing package prints only "ok  \texample.com/calc\t0.005s": each such
# package counts as one test passed (its tests ran; go does not say how many).
_GO_PACKAGE_OK = re.compile(r"^ok  \t\S+\t(?!.*\[no tests to run\])", re.MULTILINE)
# TAP's line for a failing test, counted for a stream that ends without a summary.
_TAP_NOT_OK = re.compile(r"^not ok \d+(?!.*# (?:SKIP|TODO))", re.MULTILINE)
#: tape's run of test blocks that asserted through node's `assert` rather than tape's `t`
#: (events 3.3.0): tape heads each block with `# name` as it starts, counts no assertion,
#: and ends `1..0`, `# tests 0`, `# ok`. A thrown assertion ends the run, so each block
#: headed before a `# ok` ran to its end.
_TAPE_UNASSERTED = re.compile(
    r"^TAP version \d+\n(?P<blocks>(?:# .*\n)+)\n?1\.\.0\n# tests 0\n# pass +0\n\n?# ok\s*$",
    re.MULTILINE,
)
#: A linter's total on a line of its own (eslint's and xo's `  2 errors`), not a test
#: runner's (pytest's `2 errors in 0.5s`): sindresorhus/is's lint errors read as 2 of 2
#: tests failed.
_LINT_TOTAL = re.compile(r"\s*(?P<n>\d+) (?P<what>errors?|warnings?)\s*")
#: ESLint's closing lines (`✖ 1 problem (1 error, 0 warnings)`, `1 error and 0 warnings
#: potentially fixable with the `--fix` option.`): a lint inside `npm test` whose error
#: read as 1 of 1 tests failed (fastq, json-schema-traverse, light-my-request).
_ESLINT_TOTAL = re.compile(
    r"^\s*(?:✖ \d+ problems? \((?P<n>\d+) errors?, \d+ warnings?\)"
    r"|\d+ errors? and \d+ warnings? potentially fixable\b.*)\s*$"
)

#: A bundler's closing count of the errors that stopped its build: esbuild's `Build failed
#: with 1 error:` (its JavaScript API's thrown error, as tsup prints it too), webpack's
#: `webpack 5.90.0 compiled with 2 errors in 310 ms`. dotenv's `npm test` builds with esbuild
#: first, and a syntax error in lib/main.js read as "1 of 1 tests failed".
_BUILD_TOTAL = re.compile(
    r"^(?:\w*Error: )?Build failed with \d+ errors?:?\s*$|^.*\bcompiled with \d+ errors?\b.*$"
)
#: esbuild's errors as that thrown error lists them: `lib/main.js:25:8: ERROR: Expected
#: identifier but found "="`.
_ESBUILD_ERROR = re.compile(
    r"^(?P<file>[^\s:][^:\n]*):(?P<line>\d+):(?P<col>\d+): ERROR: (?P<msg>\S.*?)\s*$",
    re.MULTILINE,
)


def _esbuild_errors(text: str, cwd: str) -> list[Diagnostic]:
    """esbuild's errors (`_ESBUILD_ERROR`), each once, the first `_MAX_FINDINGS`."""
    found: dict[tuple[str, str, str, str], Diagnostic] = {}
    for error in _ESBUILD_ERROR.finditer(text):
        key = (error["file"], error["line"], error["col"], error["msg"])
        found.setdefault(
            key,
            Diagnostic(
                message=error["msg"],
                file=relative(error["file"], cwd),
                line=int(error["line"]),
                column=int(error["col"]),
                tool="esbuild",
            ),
        )
    return list(found.values())[:_MAX_FINDINGS]


#: ESLint's stylish findings, as snazzy (`standard | snazzy`) prints them too, under the
#: file they are in: `  90:26  error  Parsing error: Unexpected token {  null` (snazzy's
#: rule for a parse error is `null`).
_STYLISH_FINDING = re.compile(
    r"^\s+(?P<line>\d+):(?P<col>\d+)\s+(?P<sev>error|warning)\s+(?P<msg>\S.*?)"
    r"(?:\s{2,}(?P<rule>[\w@/-]+))?\s*$"
)
#: Their closing total: ESLint's `✖ 2 problems (2 errors, 0 warnings)`, snazzy's bare
#: `✖ 1 problem` (on-exit-leak-free's lint read as a failure that said nothing of why).
_STYLISH_TOTAL = re.compile(r"^\s*✖ \d+ problems?\b")
#: The most findings kept from one output.
_MAX_FINDINGS = 200


def _stylish_findings(text: str, cwd: str) -> list[Diagnostic]:
    """The findings listed right before the last stylish total in the last lines of
    `text`, each with its file (the unindented line above its group)."""
    lines = text.splitlines()[-_MAX_FINDINGS * 2 :]
    end = next(
        (
            i
            for i in range(len(lines) - 1, max(-1, len(lines) - 51), -1)
            if _STYLISH_TOTAL.match(lines[i])
        ),
        None,
    )
    if end is None:
        return []
    found: list[Diagnostic] = []
    group: list[re.Match[str]] = []
    for line in reversed(lines[:end]):
        if not line.strip():
            continue
        if finding := _STYLISH_FINDING.match(line):
            group.append(finding)
            continue
        if not group or line[:1].isspace():
            break  # not the file of a group of findings: the listing began after it
        file = relative(line.strip(), cwd)
        found[:0] = [_stylish(f, file) for f in reversed(group)]
        group = []
    # Warnings alone fail nothing, unless the linter was told they do: not said here.
    return found[-_MAX_FINDINGS:] if any(f.severity == "error" for f in found) else []


#: A finding at a place with a rule's code, as flake8 (and pycodestyle, ruff's concise
#: form) prints it, `./a.py:3:1: F401 'os' imported but unused`, and as pylint does,
#: `a/b.py:1:0: C0114: Missing module docstring (missing-module-docstring)` under a
#: `************* Module a.b` line (wcwidth's pylint failure read as that line alone).
_CODED_FINDING = re.compile(
    r"^(?P<file>[^\s:][^:\n]*):(?P<line>\d+):(?P<col>\d+):? "
    r"(?P<code>[A-Z]{1,4}\d{2,5})(?P<pylint>:)? (?P<msg>\S.*?)\s*$",
    re.MULTILINE,
)


def _coded_findings(text: str, cwd: str) -> list[Diagnostic]:
    """flake8's and pylint's findings (`_CODED_FINDING`), the first `_MAX_FINDINGS`. Read
    only from a run that failed: each is a reason a linter exits non-zero."""
    found = []
    for finding in _CODED_FINDING.finditer(text):
        found.append(
            Diagnostic(
                message=finding["msg"],
                file=relative(finding["file"], cwd),
                line=int(finding["line"]),
                # pylint counts columns from 0, flake8 (as evidence does) from 1.
                column=int(finding["col"]) + bool(finding["pylint"]),
                code=finding["code"],
                tool="pylint" if finding["pylint"] else "flake8",
            )
        )
        if len(found) == _MAX_FINDINGS:
            break
    return found


def _stylish(finding: re.Match[str], file: str | None) -> Diagnostic:
    rule = finding["rule"]
    return Diagnostic(
        message=finding["msg"],
        file=file,
        line=int(finding["line"]),
        column=int(finding["col"]),
        code=rule if rule and rule != "null" else None,
        severity=finding["sev"],
        tool="eslint",
    )


def _lint_errors(text: str) -> bool:
    """Whether a linter's total in the last lines of `text` counts errors (a wrapper such
    as `npm test` that lints first failed on its findings)."""
    for line in text.splitlines()[-50:]:
        total = _LINT_TOTAL.fullmatch(line)
        if total is not None and total["what"].startswith("error") and int(total["n"]):
            return True
        eslint = _ESLINT_TOTAL.match(line)
        if eslint is not None and eslint["n"] and int(eslint["n"]):
            return True
    return False


# A mark and a test's name, one line per test, as hand-rolled harnesses print them
# (picocolors' `node tests/test.js`): read only from a stream that names no summary.
_MARKED = {
    # Not vitest's line for a whole file (`✓ src/cases.spec.ts (0 test) 3ms`): a run that
    # hung after one counted "1 passed" of a file with no test (path-to-regexp).
    "passed": re.compile(r"^\s*[✓✔√] +(?!\S+\.[cm]?[jt]sx? \(\d+ tests?\b)\S", re.MULTILINE),
    # Not a linter's finding at a place (tsd's `✖  952:8  Cannot find name`) or its total
    # (eslint's `✖ 3 problems`): slugify's 20 passing tests read as 200 of 220 failed. Nor
    # ava's own timeout (`ava_timed_out`): no test failed, one hung. Nor esbuild's
    # diagnostic (`✘ [ERROR] Expected identifier`): a build error (`_esbuild_errors`).
    "failed": re.compile(
        r"^\s*[✗✘✕✖×] +(?!\d+:\d+\b|\d+ problems?\b|Timed out while running tests"
        r"|\[(?:ERROR|WARNING)\] )\S",
        re.MULTILINE,
    ),
}


# mocha's closing summary: "  318 passing (698ms)", then "  2 pending" and "  44 failing" on
# the lines right after it. mocha prints it *before* each failure's diff and stack, so with
# many failures (and a coverage table after them) it is far from the end of the output.
_MOCHA_SUMMARY = re.compile(
    r"^ {2}(?P<passing>\d+) passing \(\d+(?:\.\d+)?(?:ms|s|m)\)\n"
    r"(?:^ {2}(?P<pending>\d+) pending\n)?"
    r"(?:^ {2}(?P<failing>\d+) failing\n)?",
    re.MULTILINE,
)


def _mocha_summary(text: str) -> dict[str, int]:
    """The counts of mocha's last closing summary anywhere in `text`, or {}."""
    last = None
    for last in _MOCHA_SUMMARY.finditer(text + "\n"):
        pass
    if last is None:
        return {}
    return {
        "passed": int(last["passing"]),
        "skipped": int(last["pending"] or 0),
        "failed": int(last["failing"] or 0),
    }


# jest's closing count, once per run: "Tests:       1 failed, 166 passed, 167 total".
_JEST_TESTS = re.compile(r"^Tests: +(?P<said>.*?)\d+ total\s*$", re.MULTILINE)


def _jest_runs(text: str) -> dict[str, int]:
    """The counts of every jest run in `text`, added up: a script that runs jest twice
    (`jest --env node && jest --env edge`) ran both runs' tests; {} for fewer than two."""
    runs = list(_JEST_TESTS.finditer(text))
    if len(runs) < 2:
        return {}
    counts: dict[str, int] = {}
    for run in runs:
        for number, word in _COUNT.findall(run["said"]):
            key = _KEYS.get(word, word)
            counts[key] = counts.get(key, 0) + int(number)
    return counts


def unasserted_tape_blocks(text: str) -> int:
    """How many test blocks a tape run that counted no assertion ran to their end (0: not
    such a run)."""
    found = _TAPE_UNASSERTED.search(text + "\n")
    return found["blocks"].count("\n") if found else 0


def parse_counts(text: str) -> TestCounts | None:
    """The largest count of each outcome in the last lines of `text` (and in mocha's
    summary and jest's runs added up, wherever they are), or None if none is named."""
    counts = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    seen = False
    for key, number in (_mocha_summary(text) | _jest_runs(text)).items():
        counts[key] = max(counts[key], number)
        seen = True
    tail = text.splitlines()[-200:]
    for line in tail:
        if _LINT_TOTAL.fullmatch(line) or _ESLINT_TOTAL.match(line) or _BUILD_TOTAL.match(line):
            continue
        for number, word in _COUNT.findall(line):
            key = _KEYS.get(word, word)
            counts[key] = max(counts[key], int(number))
            seen = True
    joined = "\n".join(tail)
    for pattern, read in _SUMMARIES:
        for match in pattern.finditer(joined):
            for key, number in read(match).items():
                counts[key] = max(counts[key], number)
                seen = True
    # `go test -v` heads each test's result wherever it is: a failing run's 260 lines had
    # their first 60 uncounted (Masterminds/semver, "7 of 77" for 11 of 84).
    go_results = _GO_RESULT.findall(text)
    for word in set(go_results):
        key = _KEYS[word.lower()]
        counts[key] = max(counts[key], go_results.count(word))
        seen = True
    if "PASS" not in go_results and (packages_ok := len(_GO_PACKAGE_OK.findall(text))):
        counts["passed"] = max(counts["passed"], packages_ok)
        seen = True
    failing = len(_TAP_NOT_OK.findall(joined))
    if failing:
        counts["failed"] = max(counts["failed"], failing)
        seen = True
    if not any(counts.values()) and (blocks := unasserted_tape_blocks(joined)):
        counts["passed"] = blocks
        seen = True
    if not seen:
        for key, mark in _MARKED.items():
            counts[key] = len(mark.findall(joined))
        seen = counts["passed"] + counts["failed"] > 0
    elif not counts["passed"]:
        # A summary that counts only what went wrong (ava's "1 test failed"): the passes
        # are the tests marked passed, one line each.
        counts["passed"] = len(_MARKED["passed"].findall(joined))
    return TestCounts(**counts, source="text") if seen else None


# ava's own deadline: "✘ Timed out while running tests", then each pending test as "◌ name".
_AVA_TIMED_OUT = re.compile(r"^\s*[✘✖×] Timed out while running tests\s*$", re.MULTILINE)
_AVA_PENDING = re.compile(r"^\s*◌ (.+?)\s*$", re.MULTILINE)


def ava_timed_out(text: str) -> tuple[str, ...]:
    """The tests ava left pending when its own timeout stopped the run (a hang, as assay's
    deadline is); () when ava did not time out."""
    alarm = _AVA_TIMED_OUT.search(text)
    if alarm is None:
        return ()
    return tuple(_AVA_PENDING.findall(text, alarm.end())) or ("ava",)


def _test_counts(result: ProcessResult) -> TestCounts | None:
    """Counts from each stream's own tail: a long failure listing on stderr must not push
    the summary that closes stdout out of sight. Read for test checks only: a build's
    "Found 1 error" or "1 error generated" counts errors, not tests."""
    return _merged(*(parse_counts(strip_ansi(o.text)) for o in (result.stdout, result.stderr)))


def _merged(*found: TestCounts | None) -> TestCounts | None:
    """The largest count of each outcome any stream named; None when none named one."""
    named = [counts for counts in found if counts is not None]
    if not named:
        return None
    return TestCounts(
        passed=max(c.passed for c in named),
        failed=max(c.failed for c in named),
        errors=max(c.errors for c in named),
        skipped=max(c.skipped for c in named),
        source="text",
    )


def parse(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    """Counts from the common "N passed, M failed" wording, for tools assay has no parser for;
    from a run that failed, the crash that ended it and a command its recipe could not find."""
    text = strip_ansi(combined(result))
    tests = _test_counts(result) if check.kind is Kind.TEST else None
    failed = tests is not None and tests.any_failed
    crashes: tuple[Diagnostic, ...] = ()
    missing = None
    hung: tuple[str, ...] = ()
    # A passing run's printed tracebacks and compile errors are not why anything failed;
    # nor, in a run whose summary counts failing tests, are those of the probes it compiles
    # on purpose (feature checks, tests that expect a compiler to refuse): its tests are.
    if result.exit_code not in (0, None):
        missing = missing_command(text, result.exit_code)
        if missing is None and not failed:
            missing = missing_tool_module(text) or missing_browser(text)
        if not failed and check.kind is Kind.TEST:
            hung = timed_out_tests(text) or ava_timed_out(text)
        if not failed and not hung:
            crashes = crash_diagnostics(text, result.cwd, check.tool)
            if not crashes:
                crashed = shell_crash(check.argv, result.exit_code, check.tool)
                crashes = (crashed,) if crashed is not None else ()
    if not hung and result.timed_out and check.kind is Kind.TEST:
        # Stopped at assay's deadline: a `go test -v` behind make names what it was running.
        hung = running_tests(text, result.cwd or "", check.env.get(IMPORT_PATH_ENV))
    findings: list[Diagnostic] = []
    if result.exit_code not in (0, None):
        findings = _stylish_findings(text, result.cwd)
        if not findings and not failed:  # failing tests say why; a test may print such lines
            findings = _coded_findings(text, result.cwd) or _esbuild_errors(text, result.cwd)
    linted = result.exit_code not in (0, None) and (
        _lint_errors(text) or any(f.severity == "error" for f in findings)
    )
    cases: tuple[TestCase, ...] = ()
    if failed and check.kind is Kind.TEST and "--- FAIL: " in text:
        cases = failed_tests(text)
    elif failed and check.kind is Kind.TEST and _UNITTEST_RAN.search(text):
        # unittest's summary counted the failures; its listing names them.
        from assay.parsers.python import unittest_failures

        cases = unittest_failures(text, result.cwd or "")
    return ParsedOutput(
        diagnostics=(*crashes, *findings),
        tests=tests,
        test_cases=cases,
        failure_recognized=failed or bool(crashes) or linted,
        missing_command=missing,
        hung_tests=hung,
    )

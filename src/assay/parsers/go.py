"""Go: compiler and vet diagnostics (text), and `go test -json` events."""

from __future__ import annotations

import re
from pathlib import Path

from assay.evidence import Check, Diagnostic, TestCase
from assay.parsed_output import Reading
from assay.parsers import ParsedOutput
from assay.parsers._text import combined, count_cases, json_lines, relative
from assay.process import ProcessResult

# ./main.go:5:2: undefined: x      (go build, go vet; column optional)
_GO_DIAG = re.compile(
    r"^(?:vet: )?(?P<file>[^\s:][^:]*\.go):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<msg>.+)$"
)


def go_diagnostics(text: str, cwd: str) -> list[Diagnostic]:
    diagnostics = []
    for line in text.splitlines():
        if match := _GO_DIAG.match(line.strip()):
            diagnostics.append(
                Diagnostic(
                    message=match["msg"],
                    file=relative(match["file"], cwd),
                    line=int(match["line"]),
                    column=int(match["col"]) if match["col"] else None,
                    tool="go",
                )
            )
    return diagnostics


def parse(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    """`go test` (JSON events) or `go build` / `go vet` (text), told apart by the subcommand."""
    if "test" in check.argv[1:2]:
        return parse_test_json(check, result, report_dir)
    diagnostics = go_diagnostics(combined(result), result.cwd)
    return ParsedOutput(diagnostics=tuple(diagnostics), failure_recognized=bool(diagnostics))


_ACTIONS = {"pass": "passed", "fail": "failed", "skip": "skipped"}


def parse_test_json(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    """Per-test outcomes from `go test -json`; build errors (printed as text) as diagnostics."""
    outcomes: dict[tuple[str, str], str] = {}
    output: dict[tuple[str, str], list[str]] = {}
    durations: dict[tuple[str, str], float] = {}
    package_failed = False
    events = 0
    tested: set[str] = set()
    concluded: set[str] = set()
    for event in json_lines(result.stdout.text):
        action, package, test = (
            event.get("Action"),
            str(event.get("Package", "")),
            event.get("Test"),
        )
        if not isinstance(action, str):
            continue
        events += 1
        if not test:
            package_failed = package_failed or action == "fail"
            if action in _ACTIONS:
                concluded.add(package)
            continue
        tested.add(package)
        key = (package, str(test))
        if action == "output":
            output.setdefault(key, []).append(str(event.get("Output", "")))
        elif action in _ACTIONS:
            outcomes[key] = _ACTIONS[action]
            if isinstance(event.get("Elapsed"), int | float):
                durations[key] = float(event["Elapsed"])
    cases = tuple(
        TestCase(
            name=f"{package}.{test}",
            outcome=outcome,
            file=None,
            duration_s=durations.get((package, test)),
            message="".join(output.get((package, test), []))[-500:]
            if outcome == "failed"
            else None,
        )
        for (package, test), outcome in outcomes.items()
    )
    diagnostics = go_diagnostics(
        result.stderr.text + "\n" + _non_json(result.stdout.text), result.cwd
    )
    tests = count_cases(cases, "go-json") if events else None
    return ParsedOutput(
        diagnostics=tuple(diagnostics),
        tests=tests,
        test_cases=cases,
        failure_recognized=bool(diagnostics)
        or package_failed
        or any(case.outcome == "failed" for case in cases),
        no_tests_reported=events > 0 and not cases,
        report_found=events > 0,
        readings=_readings(
            _result_expected(tested, result), concluded, failed_packages=package_failed
        ),
    )


def _result_expected(tested: set[str], result: ProcessResult) -> set[str]:
    """The tested packages whose result the captured output must hold. go prints each
    package's events together, ending with its result; where the middle of a long run was
    dropped, a package whose events stop in the head ended in the omitted part. One still
    running when the run ended has its last events in the tail, which runs to the end."""
    if not result.stdout.truncated:
        return tested
    return tested & {str(e.get("Package", "")) for e in json_lines(result.stdout.tail)}


def _readings(
    tested: set[str], concluded: set[str], *, failed_packages: bool
) -> tuple[Reading, ...]:
    """go test ends every package it tested with the package's own result (its `ok` or
    `FAIL` line): tests with no such ending were not reported by a run that finished."""
    if not tested:
        return ()
    unfinished = sorted(tested - concluded)
    if unfinished:
        channel = f"go test's result for package {unfinished[0]}"
        return (Reading(channel, appeared=False),)
    return (Reading("go test's package results", failed=1 if failed_packages else 0),)


def _non_json(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("{"))

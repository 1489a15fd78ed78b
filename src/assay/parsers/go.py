"""Go: compiler and vet diagnostics (text), and `go test -json` events.

A test binary stopped by go test's own `-timeout` panics ("panic: test timed out after
2s"), naming the tests still running (Go 1.20 on; before, the test that was running just
never ends). That is a hang, not an answer about the code: those tests are named in
`ParsedOutput.hung_tests`, left out of the counts, and `classify` makes the run a timeout,
as for a deadline of assay's own, unless a real failure or a build error beside them
already makes it fail."""

from __future__ import annotations

import re
from pathlib import Path

from assay.evidence import Check, Diagnostic, TestCase
from assay.gopath_layout import IMPORT_PATH_ENV
from assay.parsed_output import Reading
from assay.parsers import ParsedOutput
from assay.parsers._text import combined, count_cases, json_lines, relative
from assay.process import ProcessResult

# ./main.go:5:2: undefined: x      (go build, go vet; column optional); and the cover tool,
# which `go test -cover` ran on each file before compiling it before Go 1.20, behind a date
# and the file's name: `2024/01/02 15:04:05 cover: /w/main.go: /w/main.go:5:9: expected ';'`
_GO_DIAG = re.compile(
    r"^(?:vet: |(?:\d{4}/\d\d/\d\d \d\d:\d\d:\d\d )?cover: [^:]+\.go: )?"
    r"(?P<file>[^\s:][^:]*\.go):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<msg>.+)$"
)


def go_diagnostics(text: str, cwd: str, import_path: str | None = None) -> list[Diagnostic]:
    """The diagnostics in `text`, files relative to `cwd`; or, for a check run from a link
    at `import_path` in a GOPATH (`assay.gopath_layout`), relative to that link."""
    diagnostics = []
    for line in text.splitlines():
        if match := _GO_DIAG.match(line.strip()):
            diagnostics.append(
                Diagnostic(
                    message=match["msg"],
                    file=relative(_below_link(match["file"], import_path), cwd),
                    line=int(match["line"]),
                    column=int(match["col"]) if match["col"] else None,
                    tool="go",
                )
            )
    return diagnostics


def _below_link(file: str, import_path: str | None) -> str:
    """`file` relative to the link at `import_path` when it lies below one (the cover tool
    names files by their absolute path from it), else as it is."""
    link = f"/src/{import_path}/"
    at = file.find(link) if import_path and file.startswith("/") else -1
    return file[at + len(link) :] if at != -1 else file


def parse(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    """`go test` (JSON events) or `go build` / `go vet` (text), told apart by the subcommand."""
    if "test" in check.argv[1:2]:
        return parse_test_json(check, result, report_dir)
    diagnostics = go_diagnostics(combined(result), result.cwd, check.env.get(IMPORT_PATH_ENV))
    return ParsedOutput(diagnostics=tuple(diagnostics), failure_recognized=bool(diagnostics))


_ACTIONS = {"pass": "passed", "fail": "failed", "skip": "skipped"}
#: The testing package's alarm, printed when `-timeout` is up, then the running tests.
_TIMED_OUT = re.compile(r"^panic: test timed out after \S+$", re.MULTILINE)
_RUNNING_HEADER = re.compile(r"^running tests:$", re.MULTILINE)
_RUNNING_TEST = re.compile(r"^\s+(\S+) \([^()]*\)$")
HUNG_MESSAGE = "stopped at go test's -timeout: it hung"
_EXITED_MESSAGE = "its test binary exited while it ran, with no result for it\n"
#: The most of a failed test's output kept as its message: its last lines.
_MESSAGE_CHARS = 500


def _last_lines(text: str) -> str:
    """The whole lines that end `text`, within `_MESSAGE_CHARS`."""
    if len(text) <= _MESSAGE_CHARS:
        return text
    tail = text[-_MESSAGE_CHARS:]
    start = tail.find("\n") + 1
    return tail[start:] if 0 < start < len(tail) else tail


#: go test's closing line for a package that failed: "FAIL\texample.com/calc\t3.013s".
_FAILED_PACKAGE = re.compile(r"^FAIL\t(\S+)\t", re.MULTILINE)


def parse_test_json(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    """Per-test outcomes from `go test -json`; build errors (printed as text) as diagnostics."""
    outcomes: dict[tuple[str, str], str] = {}
    output: dict[tuple[str, str], list[str]] = {}
    package_output: dict[str, list[str]] = {}
    started: set[tuple[str, str]] = set()
    paused: set[tuple[str, str]] = set()
    durations: dict[tuple[str, str], float] = {}
    package_failed = False
    events = 0
    tested: set[str] = set()
    concluded: set[str] = set()
    printed: list[str] = []
    for event in json_lines(result.stdout.text):
        action, package, test = (
            event.get("Action"),
            str(event.get("Package", "")),
            event.get("Test"),
        )
        if not isinstance(action, str):
            continue
        events += 1
        if action == "output":
            printed.append(str(event.get("Output", "")))
        if not test:
            if action == "output":
                package_output.setdefault(package, []).append(str(event.get("Output", "")))
            package_failed = package_failed or action == "fail"
            if action in _ACTIONS:
                concluded.add(package)
            continue
        tested.add(package)
        key = (package, str(test))
        if action == "output":
            output.setdefault(key, []).append(str(event.get("Output", "")))
        elif action == "run":
            started.add(key)
        elif action == "pause":
            paused.add(key)
        elif action == "cont":
            paused.discard(key)
        elif action in _ACTIONS:
            outcomes[key] = _ACTIONS[action]
            if isinstance(event.get("Elapsed"), int | float):
                durations[key] = float(event["Elapsed"])
    plain = _non_json(result.stdout.text)
    diagnostics = go_diagnostics(
        result.stderr.text + "\n" + plain, result.cwd, check.env.get(IMPORT_PATH_ENV)
    )
    running = _still_running(started, paused, outcomes)
    hung = () if diagnostics else _hung(running, outcomes, output, package_output)
    for key in hung:
        outcomes[key] = "error"
    if result.timed_out and not hung:
        # Stopped at assay's deadline: what was running and never ended is what hung.
        hung = tuple(sorted(running))
    # With no deadline to blame, a test that started and never ended had its binary exit
    # under it (`os.Exit(1)` in the code it ran, a crash): failed, or a failing canary
    # beside it would be the run's only failure. A parallel test still paused then, waiting
    # for the sequential ones to end, never ran, and a parent only waited: no outcome.
    exited = set() if result.timed_out else {k for k in running if k not in outcomes}
    for key in exited:
        outcomes[key] = "failed"
        output.setdefault(key, []).insert(0, _EXITED_MESSAGE)
    cases = tuple(
        TestCase(
            name=f"{package}.{test}",
            outcome=outcome,
            file=None,
            duration_s=durations.get((package, test)),
            message=HUNG_MESSAGE
            if outcome == "error"
            else _last_lines("".join(output.get((package, test), [])))
            if outcome == "failed"
            else None,
        )
        for (package, test), outcome in outcomes.items()
    )
    counted = [case for case in cases if case.outcome != "error"]
    tests = count_cases(counted, "go-json") if events else None
    return ParsedOutput(
        diagnostics=tuple(diagnostics),
        tests=tests,
        test_cases=cases,
        failure_recognized=bool(diagnostics)
        or package_failed
        or any(case.outcome == "failed" for case in cases),
        hung_tests=tuple(
            _with_stuck_place(key, output, package_output, result.cwd) for key in hung
        ),
        no_tests_reported=events > 0 and not cases,
        report_found=events > 0,
        readings=_readings(
            _result_expected(tested, result), concluded, failed_packages=package_failed
        ),
        printed="".join(printed) + plain if events else None,
    )


def _with_stuck_place(
    key: tuple[str, str],
    output: dict[tuple[str, str], list[str]],
    package_output: dict[str, list[str]],
    cwd: str,
) -> str:
    """`example.com/calc.TestSlow`, with the line of the project's code it was stuck on
    where the timeout panic's goroutine dump shows it (`stuck_in`)."""
    from assay.parsers.go_stacks import stuck_in

    package, test = key
    dump = "".join(output.get(key, [])) + "".join(package_output.get(package, []))
    place = stuck_in(dump, package, test, cwd)
    return f"{package}.{test} (stuck at {place})" if place else f"{package}.{test}"


def _still_running(
    started: set[tuple[str, str]],
    paused: set[tuple[str, str]],
    outcomes: dict[tuple[str, str], str],
) -> set[tuple[str, str]]:
    """The tests that were running when the output ended: started, not ended, and not a
    parallel test still paused (it waits its turn and never ran), nor a parent whose
    subtest is running (it only waits for it). A hung TestDiff with 250 parallel subtests
    named all of them, where two ran."""
    unended = {key for key in started - paused if key not in outcomes}
    return {
        (package, test)
        for package, test in unended
        if not any(p == package and t.startswith(test + "/") for p, t in unended)
    }


def _hung(
    running: set[tuple[str, str]],
    outcomes: dict[tuple[str, str], str],
    output: dict[tuple[str, str], list[str]],
    package_output: dict[str, list[str]],
) -> tuple[tuple[str, str], ...]:
    """The tests go test's `-timeout` stopped: in a package whose binary printed the
    timeout panic, those it lists as running, and those `_still_running`. A test that
    passed or was skipped never counts, whatever it printed."""
    texts: dict[str, str] = {}
    for (package, _), lines in output.items():
        texts[package] = texts.get(package, "") + "".join(lines)
    for package, lines in package_output.items():
        texts[package] = texts.get(package, "") + "".join(lines)
    hung: list[tuple[str, str]] = []
    for package, text in texts.items():
        alarm = _TIMED_OUT.search(text)
        if alarm is None:
            continue
        listed = _running_tests(text[alarm.end() :])
        for key in sorted(k for k in running | set(outcomes) if k[0] == package):
            ended = outcomes.get(key)
            if ended in ("passed", "skipped"):
                continue
            if key in running or key[1] in listed:
                hung.append(key)
    return tuple(hung)


def timed_out_tests(text: str) -> tuple[str, ...]:
    """What go test's `-timeout` stopped, read from its plain text output (a `go test`
    behind make or a script): the tests it lists as running, else the packages it failed;
    () when the timeout panic is not there."""
    alarm = _TIMED_OUT.search(text)
    if alarm is None:
        return ()
    listed = sorted(_running_tests(text[alarm.end() :]))
    return tuple(listed) or tuple(_FAILED_PACKAGE.findall(text)) or ("go test",)


def _running_tests(after_alarm: str) -> set[str]:
    """The names under the "running tests:" header that follows the timeout panic."""
    header = _RUNNING_HEADER.search(after_alarm)
    if header is None:
        return set()
    names = set()
    for line in after_alarm[header.end() :].splitlines()[1:]:
        match = _RUNNING_TEST.match(line)
        if match is None:
            break
        names.add(match[1])
    return names


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

"""DESIGN.md's verdict table, row by row, on plain values."""

from __future__ import annotations

import dataclasses
import signal

import pytest

from assay.classify import REASON_MAX_CHARS, classify
from assay.evidence import Check, Diagnostic, TestCounts
from assay.parsers import ParsedOutput
from assay.process import ProcessResult, StartFailure
from assay.verdict import Cause, Kind, Verdict
from tests.results import process_result


def result(
    exit_code: int | None = 0,
    *,
    sig: int | None = None,
    timed_out: bool = False,
    start_failure: StartFailure | None = None,
    out: str = "",
    err: str = "",
) -> ProcessResult:
    return process_result(
        exit_code=exit_code,
        signal=sig,
        timed_out=timed_out,
        start_failure=start_failure,
        start_error="tool: not found" if start_failure else None,
        stdout=out,
        stderr=err,
    )


def check(kind: Kind) -> Check:
    return Check(name="c", kind=kind, argv=("tool",))


RAN_TESTS = ParsedOutput(tests=TestCounts(passed=3))
FAILED_TESTS = ParsedOutput(tests=TestCounts(passed=2, failed=1), failure_recognized=True)


@pytest.mark.parametrize(
    ("kind", "res", "parsed", "cause"),
    [
        (Kind.TEST, result(0), RAN_TESTS, Cause.EXIT_ZERO),
        (Kind.LINT, result(0), None, Cause.EXIT_ZERO),
        (Kind.TEST, result(0), None, Cause.NO_TESTS_OBSERVED),
        (Kind.TEST, result(0), ParsedOutput(tests=TestCounts(skipped=4)), Cause.NO_TESTS_OBSERVED),
        (Kind.TEST, result(0), FAILED_TESTS, Cause.REPORT_MISMATCH),
        (Kind.TEST, result(1), FAILED_TESTS, Cause.EXIT_NONZERO),
        (Kind.TEST, result(1), RAN_TESTS, Cause.REPORT_MISMATCH),
        (Kind.TEST, result(1), None, Cause.UNRECOGNIZED_FAILURE),
        (Kind.TEST, result(5), ParsedOutput(no_tests_reported=True), Cause.NO_TESTS_OBSERVED),
        (Kind.TYPECHECK, result(2), None, Cause.EXIT_NONZERO),
        (Kind.BUILD, result(1), None, Cause.EXIT_NONZERO),
        (Kind.TEST, result(None, timed_out=True, sig=signal.SIGKILL), RAN_TESTS, Cause.TIMEOUT),
        # Failures its runner reported before it hung: they failed.
        (
            Kind.TEST,
            result(None, timed_out=True, sig=signal.SIGKILL),
            FAILED_TESTS,
            Cause.EXIT_NONZERO,
        ),
        # Code that did not build beside tests that passed: the build's errors say why.
        (
            Kind.TEST,
            result(1),
            ParsedOutput(tests=TestCounts(passed=3), diagnostics=(Diagnostic("syntax error"),)),
            Cause.EXIT_NONZERO,
        ),
        (Kind.BUILD, result(None, sig=signal.SIGSEGV), None, Cause.SIGNAL),
        (Kind.TEST, result(None, start_failure=StartFailure.NOT_FOUND), None, Cause.START_FAILED),
        (Kind.TEST, result(1), ParsedOutput(diagnostics=(Diagnostic("boom"),)), Cause.EXIT_NONZERO),
    ],
)
def test_rows_of_the_table(
    kind: Kind, res: ProcessResult, parsed: ParsedOutput | None, cause: Cause
) -> None:
    evidence = classify(check(kind), res, parsed)
    assert evidence.cause is cause
    assert evidence.verdict is cause.verdict


def test_nothing_parsed_can_turn_a_timeout_or_signal_into_a_pass() -> None:
    for res in (result(None, timed_out=True, sig=9), result(None, sig=11), result(3)):
        for kind in Kind:
            assert classify(check(kind), res, RAN_TESTS).verdict is not Verdict.PASS


def test_reason_is_the_head_for_compilers_and_the_tail_for_tests() -> None:
    long = "FIRST " + "x" * (REASON_MAX_CHARS * 2) + " LAST"
    assert classify(check(Kind.BUILD), result(1, out=long)).reason.startswith("FIRST")
    assert classify(check(Kind.TEST), result(1, out=long), FAILED_TESTS).reason.endswith("LAST")


def test_a_tests_reason_keeps_the_end_of_both_streams() -> None:
    """humanize: pytest-benchmark's table of timings on stderr pushed pytest's `FAILED`
    line, at the end of stdout, out of the reason."""
    out = "x" * REASON_MAX_CHARS + "\nFAILED tests/test_i18n.py::test_intcomma - assert\n"
    err = "timings " * REASON_MAX_CHARS + "END OF TABLE"
    reason = classify(check(Kind.TEST), result(1, out=out, err=err), FAILED_TESTS).reason
    assert "FAILED tests/test_i18n.py::test_intcomma - assert" in reason
    assert reason.endswith("END OF TABLE") and len(reason) <= REASON_MAX_CHARS + 10
    short = classify(check(Kind.TEST), result(1, out="1 failed", err=err), FAILED_TESTS).reason
    assert short.startswith("1 failed\n...") and len(short) <= REASON_MAX_CHARS + 10


def test_start_failure_note_says_what_to_do() -> None:
    evidence = classify(check(Kind.TEST), result(None, start_failure=StartFailure.NOT_FOUND))
    assert "not found" in evidence.note and "install" in evidence.note


PNPM_404 = (
    "Progress: resolved 119, reused 0, downloaded 84, added 51\n"
    " ERR_PNPM_FETCH_404  GET https://registry.npmjs.org/nope-id/-/nope-id-1.4.1.tgz: "
    "Not Found - 404\n\nNo authorization header was set for the request.\n"
)
YARN_TLS = (
    "➤ YN0000: ┌ Fetch step\n"
    "➤ YN0001: │ RequestError: self-signed certificate in certificate chain\n"
    "    at ClientRequest.<anonymous> (.yarn/releases/yarn-4.4.1.cjs:147:14258)\n"
    "➤ YN0000: └ Completed in 0s 236ms\n"
)


@pytest.mark.parametrize(
    ("output", "quoted"),
    [
        (PNPM_404, PNPM_404.splitlines()[1].strip()),
        (YARN_TLS, "RequestError: self-signed certificate in certificate chain"),
    ],
)
def test_a_package_managers_error_line_is_the_one_quoted(output: str, quoted: str) -> None:
    """pnpm's and yarn's installs mark their errors their own way; a note quotes them."""
    from assay.classify import last_error_line

    assert last_error_line(output) == quoted


def test_the_reason_is_the_output_a_person_reads() -> None:
    """Without colour codes, and where the tool wrote for a machine, as it prints it."""
    coloured = result(1, out="\x1b[31mFAILED\x1b[0m tests/test_a.py::test_b\n")
    assert classify(check(Kind.TEST), coloured, FAILED_TESTS).reason == (
        "FAILED tests/test_a.py::test_b"
    )
    events = result(1, out='{"Action":"output","Output":"--- FAIL: TestA\\n"}\n')
    printed = ParsedOutput(failure_recognized=True, printed="--- FAIL: TestA\n")
    assert classify(check(Kind.TEST), events, printed).reason == "--- FAIL: TestA"


def test_a_file_the_compiler_was_given_at_the_deadline_is_being_compiled_not_run() -> None:
    """BurntSushi/toml's `go test`, slow to build in a loaded sandbox, was stopped while Go's
    compiler held `internal/toml-test/json.go`: the note said "while running" that file."""
    compile_argv = (
        "/usr/lib/go-1.19/pkg/tool/linux_amd64/compile",
        "-o",
        "/tmp/go-build1/b004/_pkg_.a",
        "-p",
        "github.com/BurntSushi/toml/internal/toml-test",
        "/w/internal/toml-test/json.go",
        "/w/internal/toml-test/runner.go",
    )
    stopped = dataclasses.replace(
        process_result(("go", "test", "./..."), cwd="/w", exit_code=None, timed_out=True),
        signal=signal.SIGKILL,
        running_at_deadline=(compile_argv,),
    )
    note = classify(check(Kind.TEST), stopped).note
    assert "while compiling internal/toml-test/json.go (the compiler was still running" in note
    assert "while running" not in note, note

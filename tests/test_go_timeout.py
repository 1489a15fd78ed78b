"""go test's own `-timeout` is a hang, as assay's deadline is: never a failure of the code.

A real Go module whose CI or Makefile runs `go test -timeout 2s`, with a test that sleeps
for an hour: the testing package panics ("panic: test timed out after 2s") and go test
exits 1. Before, that read as FAILED through `go test -json`, and behind `make test`
(whose go text output assay did not read) a plain wrong value was INDETERMINATE, "exited 2
and its output does not say why"."""

from __future__ import annotations

import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from assay.check_execution import default_runner, run_check
from assay.evidence import Check
from assay.go_cache_view import GO_CACHE_ENV
from assay.process import ProcessResult
from assay.verdict import Cause, Kind
from tests.repos import write
from tests.test_go_cache import verify

pytestmark = pytest.mark.skipif(shutil.which("go") is None, reason="needs go")

CALC = "package calc\n\nfunc Double(x int) int { return x * 2 }\n"
WRONG = "package calc\n\nfunc Double(x int) int { return x * 3 }\n"
TESTS = (
    'package calc\n\nimport (\n\t"testing"\n\t"time"\n)\n\n'
    "func TestDouble(t *testing.T) {\n"
    '\tif Double(2) != 4 {\n\t\tt.Fatal("Double(2) != 4")\n\t}\n}\n\n'
    "func TestSlow(t *testing.T) {{ time.Sleep({sleep}) }}\n"
)
RUNS_IN_CI = {
    ".github/workflows/ci.yml": (
        "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: go test -timeout 2s ./...\n"
    )
}
RUNS_IN_MAKE = {"Makefile": "test:\n\tgo test -timeout 2s ./...\n"}


def module(root: Path, runner: dict[str, str], *, code: str = CALC, hangs: bool) -> Path:
    sleep = "time.Hour" if hangs else "time.Millisecond"
    return write(
        root,
        {
            "go.mod": "module example.com/calc\n\ngo 1.19\n",
            "calc.go": code,
            "calc_test.go": TESTS.replace("{{", "{").replace("}}", "}").replace("{sleep}", sleep),
            **runner,
        },
    )


def the_test_check(report: dict[str, Any]) -> dict[str, Any]:
    (check,) = [c for c in report["checks"] if c["kind"] == "test"]
    return check


@pytest.mark.parametrize("runner", [RUNS_IN_CI, RUNS_IN_MAKE], ids=["go-test-json", "make"])
def test_a_test_stopped_at_go_tests_own_timeout_is_a_hang(
    tmp_path: Path, runner: dict[str, str]
) -> None:
    report = verify(module(tmp_path / "calc", runner, hangs=True), tmp_path / "state")
    assert report["status"] == "INDETERMINATE", report["note"]
    check = the_test_check(report)
    assert check["cause"] == "timeout", check
    hung = "example.com/calc.TestSlow" if runner is RUNS_IN_CI else "example.com/calc"
    assert hung in report["note"], report["note"]
    assert "a hang, not a failure" in report["note"]
    if runner is RUNS_IN_CI:  # the line it was stuck on, from the panic's goroutine dump
        stuck = "example.com/calc.TestSlow (stuck at calc_test.go:14 in example.com/calc.TestSlow)"
        assert stuck in report["note"], report["note"]
    # What is shown of the output is what go test prints for a person, not its events.
    assert "panic: test timed out after 2s" in check["reason"], check["reason"]
    assert '"Action"' not in check["reason"], check["reason"]


@pytest.mark.parametrize("runner", [RUNS_IN_CI, RUNS_IN_MAKE], ids=["go-test-json", "make"])
def test_a_real_failure_beside_a_hang_still_fails(tmp_path: Path, runner: dict[str, str]) -> None:
    repo = module(tmp_path / "calc", runner, code=WRONG, hangs=True)
    report = verify(repo, tmp_path / "state")
    assert report["status"] == "FAILED", report["note"]
    assert the_test_check(report)["cause"] == "exit_nonzero"


@pytest.mark.parametrize("runner", [RUNS_IN_CI, RUNS_IN_MAKE], ids=["go-test-json", "make"])
def test_a_wrong_value_fails_and_a_right_one_passes(tmp_path: Path, runner: dict[str, str]) -> None:
    wrong = verify(module(tmp_path / "wrong", runner, code=WRONG, hangs=False), tmp_path / "s")
    assert wrong["status"] == "FAILED", wrong["note"]
    check = the_test_check(wrong)
    assert check["tests"]["failed"] >= 1, check
    right = verify(module(tmp_path / "right", runner, hangs=False), tmp_path / "s")
    assert right["status"] == "VERIFIED", right["note"]


def test_what_readies_a_check_is_part_of_its_time(tmp_path: Path) -> None:
    """go test's warm-up (its compile, run first with the shared cache writable) and the
    tests shared nothing of the check's deadline: a slow warm-up (a cold `-race` build)
    and a hung test outlasted the runner's net, and the hang read as a verifier that
    never returned (FAILED, "verifier_timeout"). The tests get what the warm-up left."""
    repo = module(tmp_path / "calc", {}, hangs=True)
    shared = tmp_path / "gocache"
    shared.mkdir()
    check = Check(
        name="go-test",
        argv=("go", "test", "./..."),
        kind=Kind.TEST,
        tool="go",
        timeout_s=12,
        # No HOME of its own: go reads its settings file under it, so a check that sets it
        # does not write the shared cache, and has no warm-up.
        env={GO_CACHE_ENV: str(shared)},
    )

    def slow_warm_up(argv: Sequence[str], **kwargs: Any) -> ProcessResult:
        if any(word.startswith("-exec=") for word in argv):
            time.sleep(7)  # a cold build under load
        return default_runner(argv, **kwargs)

    started = time.monotonic()
    evidence = run_check(check, root=repo, runner=slow_warm_up)
    assert evidence.cause is Cause.TIMEOUT, evidence.note
    assert evidence.result is not None and evidence.result.duration_s < 7, evidence.result
    assert time.monotonic() - started < 12 + 5

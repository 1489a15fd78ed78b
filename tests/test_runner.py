"""The fail-closed verifier runner, with real misbehaving verifiers."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from assay import testing
from assay._verifier_workers import shutdown_workers
from assay.evidence import Check, Evidence, evidence_for
from assay.runner import Isolation, Outcome, VerifierContext, run_verifiers
from assay.verdict import VERIFIER_FAULTS, Cause, Kind, Verdict
from tests.conftest import read_pids, wait_gone

CTX = VerifierContext(workdir=".")

BAD_VERIFIERS = [
    (testing.RaisingVerifier(), Cause.VERIFIER_ERROR, "RuntimeError"),
    (testing.HangingVerifier(), Cause.VERIFIER_TIMEOUT, "deadline"),
    (testing.SegfaultVerifier(), Cause.VERIFIER_CRASH, "SIGSEGV"),
    (testing.ExitingVerifier(), Cause.VERIFIER_CRASH, "status 0"),
    (testing.SystemExitVerifier(), Cause.VERIFIER_ERROR, "SystemExit"),
    (testing.KeyboardInterruptVerifier(), Cause.VERIFIER_ERROR, "KeyboardInterrupt"),
    (testing.GarbageVerifier(), Cause.VERIFIER_BAD_RETURN, "not Evidence"),
    (testing.OrphaningVerifier(), Cause.VERIFIER_TIMEOUT, "deadline"),
    (
        testing.OrphaningVerifier(id="orphan-returns", hang=False),
        Cause.VERIFIER_LEAKED_PROCESS,
        "left 1",
    ),
]


@pytest.mark.parametrize(
    ("verifier", "cause", "detail"), BAD_VERIFIERS, ids=lambda v: getattr(v, "id", None)
)
def test_each_misbehaviour_fails_with_its_own_mode_and_the_next_verifier_still_passes(
    verifier: object, cause: Cause, detail: str, tmp_path: Path, short_grace: float
) -> None:
    ctx = VerifierContext(workdir=str(tmp_path), data={"pid_file": str(tmp_path / "pid")})
    started = time.monotonic()
    (outcome,) = run_verifiers([verifier], ctx, deadline=1.5)
    assert time.monotonic() - started < 1.5 + short_grace + 3
    assert outcome.fault is cause
    assert outcome.evidence.cause is cause
    assert outcome.evidence.verdict is Verdict.FAIL
    assert not outcome.passed
    assert detail in outcome.detail
    if isinstance(verifier, testing.OrphaningVerifier):
        (grandchild,) = read_pids(tmp_path / "pid")
        assert wait_gone(grandchild, 2.0), "the SIGTERM-ignoring grandchild outlived the run"
    # No poisoned state: a healthy verifier right after, in this same process, passes.
    (healthy,) = run_verifiers([testing.HealthyVerifier()], ctx, deadline=5)
    assert healthy.passed and healthy.fault is None


def test_fan_out_one_crash_does_not_touch_its_siblings() -> None:
    verifiers = [
        testing.HealthyVerifier(id="a"),
        testing.SegfaultVerifier(),
        testing.HealthyVerifier(id="c", cause=Cause.EXIT_NONZERO),
    ]
    a, crash, c = run_verifiers(verifiers, CTX, deadline=10)
    assert a.passed and a.verifier_id == "a"
    assert crash.fault is Cause.VERIFIER_CRASH
    assert c.fault is None and c.evidence.cause is Cause.EXIT_NONZERO and not c.passed


def test_async_verifiers_are_awaited() -> None:
    (outcome,) = run_verifiers([testing.AsyncHealthyVerifier()], CTX, deadline=10)
    assert outcome.passed


@pytest.mark.parametrize("isolation", list(Isolation))
def test_in_process_and_worker_both_contain_exceptions(isolation: Isolation) -> None:
    outcomes = run_verifiers(
        [testing.SystemExitVerifier(), testing.GarbageVerifier(), testing.HealthyVerifier()],
        CTX,
        deadline=10,
        isolation=isolation,
    )
    assert [o.fault for o in outcomes] == [Cause.VERIFIER_ERROR, Cause.VERIFIER_BAD_RETURN, None]
    assert [o.isolation for o in outcomes] == [isolation] * 3
    assert outcomes[2].passed


def test_in_process_hang_is_abandoned_at_the_deadline() -> None:
    started = time.monotonic()
    (outcome,) = run_verifiers(
        [testing.HangingVerifier(seconds=5)], CTX, deadline=0.3, isolation=Isolation.IN_PROCESS
    )
    assert time.monotonic() - started < 2
    assert outcome.fault is Cause.VERIFIER_TIMEOUT


def test_healthy_workers_are_reused_and_crashed_ones_replaced() -> None:
    from assay import _verifier_workers

    shutdown_workers()
    run_verifiers([testing.HealthyVerifier()], CTX, deadline=10)
    (first,) = [w.pid for w in _verifier_workers._idle]
    run_verifiers([testing.HealthyVerifier()], CTX, deadline=10)
    assert [w.pid for w in _verifier_workers._idle] == [first]
    run_verifiers([testing.SegfaultVerifier()], CTX, deadline=10)
    assert _verifier_workers._idle == []  # the crashed worker was not put back
    assert wait_gone(first, 2.0)


def test_unpicklable_verifier_is_an_error_not_a_pass() -> None:
    class Local:  # defined in a function: cannot be sent to a worker
        id = "local"

        def verify(self, ctx: VerifierContext) -> object:
            return evidence_for(Check("local", Kind.TEST, ()), Cause.EXIT_ZERO)

    (outcome,) = run_verifiers([Local()], CTX, deadline=10)
    assert outcome.fault is Cause.VERIFIER_ERROR
    assert not outcome.passed


def test_an_outcome_cannot_be_built_outside_the_runner() -> None:
    evidence = evidence_for(Check("x", Kind.TEST, ()), Cause.EXIT_ZERO)
    with pytest.raises(TypeError):
        Outcome("x", evidence, None, "", 0.0, Isolation.IN_PROCESS)


def test_an_outcome_cannot_be_changed_after_the_runner_made_it() -> None:
    (outcome,) = run_verifiers([testing.SegfaultVerifier()], CTX, deadline=10)
    with pytest.raises(AttributeError):
        outcome.fault = None  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del outcome.fault
    assert outcome.fault is Cause.VERIFIER_CRASH and not outcome.passed


def test_every_fault_cause_is_a_failing_verdict() -> None:
    for cause in VERIFIER_FAULTS:
        assert cause.verdict is Verdict.FAIL
        assert not cause.verdict.passed


def test_the_fault_path_refuses_a_non_fault_cause() -> None:
    from assay.runner import _faulted

    with pytest.raises(ValueError):
        _faulted(testing.HealthyVerifier(), Cause.EXIT_ZERO, "", time.monotonic(), Isolation.WORKER)


def test_negative_deadline_is_rejected() -> None:
    with pytest.raises(ValueError):
        run_verifiers([testing.HealthyVerifier()], CTX, deadline=-1)


INTERRUPTED_WHILE_JOINING = """
import os, signal, sys, time
from assay.runner import Isolation, VerifierContext, run_verifiers

class Sleeper:
    id = "sleeper"
    isolation = Isolation.IN_PROCESS

    def verify(self, ctx):
        # The kernel gives the process's signal to a thread that does not block it: here,
        # this one, as it may give Ctrl-C to any verifier's thread.
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        time.sleep(0.3)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(20)

signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
started = time.monotonic()
try:
    run_verifiers([Sleeper()], VerifierContext(workdir="."))
except KeyboardInterrupt:
    print(round(time.monotonic() - started, 1))
"""


def test_a_signal_another_thread_takes_still_interrupts_the_join() -> None:
    """Ctrl-C taken by a verifier's thread runs Python's handler only when the main thread
    wakes: joining without a timeout never woke it, and `assay run` sat until its command
    ended (the interrupt test timed out in CI, its main thread in `Event.wait`)."""
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_WHILE_JOINING],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert float(done.stdout) < 5, done.stdout + done.stderr


def test_a_stage_starts_its_tests_first_and_answers_in_plan_order() -> None:
    """The longest checks start first (tests, then type checks); the evidence comes back
    in the plan's order whatever order the checks started and ended in."""
    from assay.check_verifiers import run_checks, start_order

    kinds = [Kind.BUILD, Kind.LINT, Kind.TYPECHECK, Kind.TEST, Kind.LINT, Kind.TEST]
    checks = [Check(name=f"c{i}", kind=kind, argv=("true",)) for i, kind in enumerate(kinds)]
    assert start_order(checks) == [3, 5, 2, 0, 1, 4]

    def execute(check: Check) -> Evidence:
        time.sleep(0.05 if check.kind is Kind.TEST else 0.0)  # tests end last
        return evidence_for(check, Cause.EXIT_ZERO)

    done = run_checks(checks, execute, workdir=".")
    assert [e.check.name for e in done] == [c.name for c in checks]

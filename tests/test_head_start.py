"""A stage's first check to start, the test run, has its command running before the
others begin theirs (`check_verifiers._HeadStart`): with two cores they raced it for the
workspace's one sandbox built ahead, and a quick lint that won left the tests to build
one of their own, after. Real processes through the real runner."""

from __future__ import annotations

import time

from assay.check_verifiers import HEAD_START_MAX_S, run_checks
from assay.evidence import Check, Evidence, evidence_for
from assay.process import run_process
from assay.verdict import Cause, Kind

TESTS = Check(name="tests", kind=Kind.TEST, argv=("true",))
LINT = Check(name="lint", kind=Kind.LINT, argv=("true",))


def staged(prepare_s: float, *, runs: bool = True) -> dict[str, float]:
    """When each check's executor began and, for the tests, when their command ran, with
    `prepare_s` of the tests' own work (identifying, preparing) before their command."""
    seen: dict[str, float] = {}

    def execute(check: Check) -> Evidence:
        seen[f"{check.name} began"] = time.monotonic()
        if check is TESTS:
            time.sleep(prepare_s)
            if runs:
                seen["tests ran"] = time.monotonic()
                run_process(["true"], timeout=30)
        return evidence_for(check, Cause.EXIT_ZERO)

    done = run_checks([LINT, TESTS], execute, workdir=".")  # the plan's order: lint first
    assert [e.check.name for e in done] == ["lint", "tests"]
    return seen


def test_the_other_checks_begin_once_the_test_runs_command_runs() -> None:
    seen = staged(0.2)
    assert seen["lint began"] >= seen["tests ran"], seen


def test_the_others_wait_no_longer_than_the_head_start() -> None:
    seen = staged(HEAD_START_MAX_S + 1.5)
    waited = seen["lint began"] - seen["tests began"]
    assert HEAD_START_MAX_S - 0.05 <= waited < HEAD_START_MAX_S + 1.0, seen


def test_the_others_begin_at_once_when_the_test_run_ends_without_a_command() -> None:
    seen = staged(0.0, runs=False)
    assert seen["lint began"] - seen["tests began"] < HEAD_START_MAX_S, seen

"""Every verdict, cause and status member is mapped explicitly."""

from __future__ import annotations

import pytest

from assay.verdict import Cause, Status, Verdict

EXPECTED_PASSED = {
    Verdict.PASS: True,
    Verdict.FAIL: False,
    Verdict.INCONCLUSIVE: False,
    Verdict.UNVERIFIED: False,
}


@pytest.mark.parametrize("verdict", list(Verdict))
def test_passed_is_explicit_for_every_verdict(verdict: Verdict) -> None:
    assert verdict.passed is EXPECTED_PASSED[verdict]


@pytest.mark.parametrize("cause", list(Cause))
def test_only_exit_zero_can_carry_a_pass(cause: Cause) -> None:
    assert cause.verdict.passed is (cause is Cause.EXIT_ZERO)


EXPECTED_EXIT = {
    Status.VERIFIED: 0,
    Status.FAILED: 1,
    Status.INDETERMINATE: 3,
    Status.UNVERIFIED: 4,
}


@pytest.mark.parametrize("status", list(Status))
def test_status_exit_codes_and_gate(status: Status) -> None:
    assert status.exit_code == EXPECTED_EXIT[status]
    assert status.verified is (status is Status.VERIFIED)


def test_design_table_causes() -> None:
    assert Cause.NO_TESTS_OBSERVED.verdict is Verdict.INCONCLUSIVE
    assert Cause.TIMEOUT.verdict is Verdict.INCONCLUSIVE
    assert Cause.SIGNAL.verdict is Verdict.INCONCLUSIVE
    assert Cause.SANDBOX_UNAVAILABLE.verdict is Verdict.INCONCLUSIVE
    assert Cause.TOOLCHAIN_MISSING.verdict is Verdict.UNVERIFIED
    assert Cause.UNRECOGNIZED_FAILURE.verdict is Verdict.INCONCLUSIVE
    assert Cause.EXIT_NONZERO.verdict is Verdict.FAIL
    # A report the canary tests contradict is never a verdict on the code: not even a fail.
    assert Cause.REPORT_TAMPERED.verdict is Verdict.INCONCLUSIVE

"""The verdict vocabulary: what a check concluded, why, and what a report says.

Every mapping here is an explicit table, never truthiness: `passed` is a
property over every member, so adding a member without deciding whether it
passes is a test failure, not a silent pass.
"""

from __future__ import annotations

import enum


class Kind(enum.StrEnum):
    """The question one check answers."""

    BUILD = "build"
    TYPECHECK = "typecheck"
    LINT = "lint"
    TEST = "test"


class Verdict(enum.StrEnum):
    """What one check concluded about the code."""

    PASS = "pass"
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"
    UNVERIFIED = "unverified"

    @property
    def passed(self) -> bool:
        return _VERDICT_PASSED[self]


_VERDICT_PASSED: dict[Verdict, bool] = {
    Verdict.PASS: True,
    Verdict.FAIL: False,
    Verdict.INCONCLUSIVE: False,
    Verdict.UNVERIFIED: False,
}


class Cause(enum.StrEnum):
    """Why a check got its verdict (DESIGN.md's table, one member per row)."""

    EXIT_ZERO = "exit_zero"
    NO_TESTS_OBSERVED = "no_tests_observed"
    EXIT_NONZERO = "exit_nonzero"
    UNRECOGNIZED_FAILURE = "unrecognized_failure"
    # Exit code and a structured report (or a recognizable failure count) disagree.
    REPORT_MISMATCH = "report_mismatch"
    # The run's report contradicts the canary tests planted in it (one must fail, one must
    # pass): the reporting channel was rewritten, so nothing else it says is believed.
    REPORT_TAMPERED = "report_tampered"
    # Failing tests were run again (`--rerun-failures`) and each passed at least once: they
    # are flaky, so the run says nothing either way about the code.
    FLAKY_TESTS = "flaky_tests"
    TIMEOUT = "timeout"
    SIGNAL = "signal"
    START_FAILED = "start_failed"
    SANDBOX_UNAVAILABLE = "sandbox_unavailable"
    # The step needed the network, which the sandbox does not give: not the code's failure.
    NETWORK_UNAVAILABLE = "network_unavailable"
    TOOLCHAIN_MISSING = "toolchain_missing"
    VERIFIER_ERROR = "verifier_error"
    VERIFIER_CRASH = "verifier_crash"
    VERIFIER_TIMEOUT = "verifier_timeout"
    VERIFIER_BAD_RETURN = "verifier_bad_return"
    # The verifier returned but left processes running behind it.
    VERIFIER_LEAKED_PROCESS = "verifier_leaked_process"

    @property
    def verdict(self) -> Verdict:
        """The only verdict this cause can carry."""
        return _CAUSE_VERDICT[self]


_CAUSE_VERDICT: dict[Cause, Verdict] = {
    Cause.EXIT_ZERO: Verdict.PASS,
    Cause.NO_TESTS_OBSERVED: Verdict.INCONCLUSIVE,
    Cause.EXIT_NONZERO: Verdict.FAIL,
    Cause.UNRECOGNIZED_FAILURE: Verdict.INCONCLUSIVE,
    Cause.REPORT_MISMATCH: Verdict.FAIL,
    Cause.REPORT_TAMPERED: Verdict.INCONCLUSIVE,
    Cause.FLAKY_TESTS: Verdict.INCONCLUSIVE,
    Cause.TIMEOUT: Verdict.INCONCLUSIVE,
    Cause.SIGNAL: Verdict.INCONCLUSIVE,
    Cause.START_FAILED: Verdict.INCONCLUSIVE,
    Cause.SANDBOX_UNAVAILABLE: Verdict.INCONCLUSIVE,
    Cause.NETWORK_UNAVAILABLE: Verdict.INCONCLUSIVE,
    Cause.TOOLCHAIN_MISSING: Verdict.UNVERIFIED,
    Cause.VERIFIER_ERROR: Verdict.FAIL,
    Cause.VERIFIER_CRASH: Verdict.FAIL,
    Cause.VERIFIER_TIMEOUT: Verdict.FAIL,
    Cause.VERIFIER_BAD_RETURN: Verdict.FAIL,
    Cause.VERIFIER_LEAKED_PROCESS: Verdict.FAIL,
}

#: Causes that mean the verifier itself misbehaved (the runner's failure modes).
VERIFIER_FAULTS: frozenset[Cause] = frozenset(
    {
        Cause.VERIFIER_ERROR,
        Cause.VERIFIER_CRASH,
        Cause.VERIFIER_TIMEOUT,
        Cause.VERIFIER_BAD_RETURN,
        Cause.VERIFIER_LEAKED_PROCESS,
    }
)


class Status(enum.StrEnum):
    """What a whole report says; the status an agent or CI acts on."""

    VERIFIED = "VERIFIED"
    FAILED = "FAILED"
    INDETERMINATE = "INDETERMINATE"
    UNVERIFIED = "UNVERIFIED"

    @property
    def exit_code(self) -> int:
        return _STATUS_EXIT[self]

    @property
    def verified(self) -> bool:
        """Only VERIFIED lets a completion claim through."""
        return _STATUS_VERIFIED[self]


_STATUS_EXIT: dict[Status, int] = {
    Status.VERIFIED: 0,
    Status.FAILED: 1,
    Status.INDETERMINATE: 3,
    Status.UNVERIFIED: 4,
}

_STATUS_VERIFIED: dict[Status, bool] = {
    Status.VERIFIED: True,
    Status.FAILED: False,
    Status.INDETERMINATE: False,
    Status.UNVERIFIED: False,
}

#: Exit code for a usage or configuration error: nothing was run.
USAGE_ERROR_EXIT = 2

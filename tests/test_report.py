"""Aggregation into a status, and the completion-gate JSON."""

from __future__ import annotations

import json

from assay.evidence import Check, Evidence, TestCounts, evidence_for
from assay.report import Report, aggregate
from assay.verdict import Cause, Kind, Status


def ev(kind: Kind, cause: Cause, tests: TestCounts | None = None, name: str = "c") -> Evidence:
    return evidence_for(Check(name=name, kind=kind, argv=("x",)), cause, tests=tests)


PASSING_TESTS = ev(Kind.TEST, Cause.EXIT_ZERO, TestCounts(passed=2), name="pytest")
LINT_OK = ev(Kind.LINT, Cause.EXIT_ZERO, name="ruff")


def test_all_pass_with_tests_is_verified() -> None:
    report = aggregate([LINT_OK, PASSING_TESTS])
    assert report.status is Status.VERIFIED and report.verified and report.exit_code == 0
    assert report.note == ""


def test_any_fail_is_failed_even_beside_inconclusive() -> None:
    report = aggregate(
        [
            PASSING_TESTS,
            ev(Kind.TEST, Cause.TIMEOUT),
            ev(Kind.LINT, Cause.EXIT_NONZERO, name="ruff"),
        ]
    )
    assert report.status is Status.FAILED and report.exit_code == 1
    assert "ruff failed" in report.note


def test_inconclusive_without_fail_is_indeterminate() -> None:
    report = aggregate([LINT_OK, ev(Kind.TEST, Cause.TIMEOUT)])
    assert report.status is Status.INDETERMINATE and report.exit_code == 3


def test_unverified_cases() -> None:
    assert aggregate([]).status is Status.UNVERIFIED
    assert aggregate([LINT_OK]).status is Status.UNVERIFIED  # no tests ran
    assert aggregate([LINT_OK], require_tests=False).status is Status.VERIFIED
    missing = aggregate([PASSING_TESTS, ev(Kind.TYPECHECK, Cause.TOOLCHAIN_MISSING)])
    assert missing.status is Status.UNVERIFIED and missing.exit_code == 4


def test_gate_json_first_five_keys_and_round_trip() -> None:
    report = aggregate([LINT_OK, PASSING_TESTS], plan={"checks": []})
    data = json.loads(json.dumps(report.to_dict()))
    assert list(data)[:5] == ["status", "exit_code", "output", "verified", "note"]
    assert isinstance(data["output"], str) and isinstance(data["verified"], bool)
    assert data["schema"].startswith("assay.report/")
    assert Report.from_dict(data).to_dict() == data

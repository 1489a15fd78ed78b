"""Properties over arbitrary inputs: nothing but a clean run can be a pass, and nothing but
all-passing evidence with executed tests can be VERIFIED."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.classify import classify
from assay.evidence import Check, Diagnostic, TestCounts, evidence_for
from assay.output import CapturedOutput
from assay.parsers import ParsedOutput
from assay.process import ProcessResult, StartFailure
from assay.report import aggregate
from assay.verdict import Cause, Kind, Status, Verdict

counts = st.builds(
    TestCounts,
    passed=st.integers(0, 5),
    failed=st.integers(0, 2),
    errors=st.integers(0, 2),
    skipped=st.integers(0, 3),
)
parsed_outputs = st.builds(
    ParsedOutput,
    diagnostics=st.lists(st.builds(Diagnostic, st.text(max_size=5)), max_size=2).map(tuple),
    tests=st.none() | counts,
    failure_recognized=st.booleans(),
    no_tests_reported=st.booleans(),
    report_found=st.booleans(),
)
results = st.builds(
    ProcessResult,
    argv=st.just(("tool",)),
    cwd=st.just("."),
    # 0 drawn often: a pass is only possible there, so that is where a bug would show.
    exit_code=st.one_of(st.just(0), st.none(), st.integers(1, 255)),
    signal=st.one_of(st.none(), st.sampled_from([6, 9, 11, 15])),
    timed_out=st.booleans(),
    start_failure=st.none() | st.sampled_from(list(StartFailure)),
    start_error=st.none() | st.text(max_size=5),
    duration_s=st.floats(0, 10),
    stdout=st.just(CapturedOutput.empty()),
    stderr=st.just(CapturedOutput.empty()),
)


@pytest.mark.slow
@settings(max_examples=500)
@given(kind=st.sampled_from(list(Kind)), result=results, parsed=st.none() | parsed_outputs)
def test_only_a_clean_run_can_pass(
    kind: Kind, result: ProcessResult, parsed: ParsedOutput | None
) -> None:
    evidence = classify(Check("c", kind, ("tool",)), result, parsed)
    assert evidence.cause.verdict is evidence.verdict
    if evidence.verdict is Verdict.PASS:
        assert result.exit_code == 0
        assert not result.timed_out and result.signal is None and result.start_failure is None
        if kind is Kind.TEST:
            assert parsed is not None and parsed.tests is not None
            assert parsed.tests.executed > 0 and not parsed.tests.any_failed


evidence_items = st.builds(
    lambda kind, cause, tests: evidence_for(Check("c", kind, ("x",)), cause, tests=tests),
    st.sampled_from(list(Kind)),
    st.sampled_from(list(Cause)),
    st.none() | counts,
)


@settings(max_examples=300)
@given(checks=st.lists(evidence_items, max_size=6), require_tests=st.booleans())
def test_verified_needs_every_check_passing_and_tests_executed(
    checks: list, require_tests: bool
) -> None:
    report = aggregate(checks, require_tests=require_tests)
    if report.status is Status.VERIFIED:
        assert checks and all(e.verdict is Verdict.PASS for e in checks)
        if require_tests:
            assert any(
                e.check.kind is Kind.TEST and e.tests is not None and e.tests.executed > 0
                for e in checks
            )
    if any(e.verdict is Verdict.FAIL for e in checks):
        assert report.status is Status.FAILED
    assert report.verified is (report.status is Status.VERIFIED)

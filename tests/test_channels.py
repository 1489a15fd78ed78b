"""Channel agreement and the base's tests, as units: what each parser reads from each
channel of a run, the rule that holds them against each other, and the comparison of the
base's passing tests with the change's run. The end-to-end attacks are in
tests/test_attacks_channels.py."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from assay.base_tests import BaseCheck, compare
from assay.channels import disagreement
from assay.classify import classify
from assay.evidence import Check, Evidence, TestCase, TestCounts, evidence_for
from assay.output import CapturedOutput
from assay.parsed_output import Reading
from assay.parsers import parse_output, report_path
from assay.parsers.python import unittest_listing
from assay.report import aggregate
from assay.run_record import RunRecord
from assay.verdict import Cause, Kind, Status, Verdict
from tests.results import process_result


def _check(tool: str, argv: tuple[str, ...], name: str | None = None) -> Check:
    return Check(name=name or tool, kind=Kind.TEST, argv=argv, tool=tool)


def _classified(
    check: Check,
    report_dir: Path | None = None,
    *,
    stdout: str = "",
    stderr: str = "",
    exit_code: int = 0,
) -> Evidence:
    done = process_result(check.argv, stdout=stdout, stderr=stderr, exit_code=exit_code)
    return classify(check, done, parse_output(check, done, report_dir))


# --------------------------------------------------------------------------- the rule


def test_channels_that_agree_let_a_pass_through() -> None:
    readings = (Reading("a", ran=2, failed=0), Reading("b", ran=2, failed=0), Reading("c"))
    assert disagreement("t", readings) is None
    assert disagreement("t", ()) is None


def test_a_channel_that_never_appeared_is_tampering() -> None:
    found = disagreement(
        "t", (Reading("the report", ran=2), Reading("the summary", appeared=False))
    )
    assert found is not None and found.cause is Cause.REPORT_TAMPERED
    assert "the summary never appeared" in found.note
    assert found.cause.verdict is Verdict.INCONCLUSIVE


def test_channels_that_count_differently_are_a_mismatch() -> None:
    found = disagreement("t", (Reading("the report", ran=3), Reading("the summary", ran=2)))
    assert found is not None and found.cause is Cause.REPORT_MISMATCH
    assert "3" in found.note and "2" in found.note


def test_a_channel_that_tells_of_failures_is_a_mismatch() -> None:
    found = disagreement("t", (Reading("the report", ran=2, failed=0), Reading("s", failed=1)))
    assert found is not None and found.cause is Cause.REPORT_MISMATCH


# --------------------------------------------------------------------------- pytest

PYTEST = _check("pytest", ("python", "-m", "pytest", "-q"))
TWO_PASSING = '<testcase classname="t" name="a"/><testcase classname="t" name="b"/>'


def _junit(report_dir: Path, body: str) -> None:
    path = report_path(report_dir, PYTEST, "xml")
    path.write_text(f'<?xml version="1.0"?><testsuites><testsuite>{body}</testsuite></testsuites>')


def test_pytest_report_without_its_summary_is_not_a_pass(tmp_path: Path) -> None:
    """A forged report and an exit before pytest printed anything."""
    _junit(tmp_path, TWO_PASSING)
    evidence = _classified(PYTEST, tmp_path, stdout="", exit_code=0)
    assert (evidence.verdict, evidence.cause) == (Verdict.INCONCLUSIVE, Cause.REPORT_TAMPERED)
    assert "summary line never appeared" in evidence.note


def test_pytest_report_counting_more_than_its_summary_is_a_mismatch(tmp_path: Path) -> None:
    _junit(tmp_path, TWO_PASSING + '<testcase classname="t" name="c"/>')
    evidence = _classified(PYTEST, tmp_path, stdout="2 passed in 0.01s\n", exit_code=0)
    assert (evidence.verdict, evidence.cause) == (Verdict.FAIL, Cause.REPORT_MISMATCH)


def test_pytest_honest_summary_agrees_with_its_report(tmp_path: Path) -> None:
    """What pytest 9 prints for passes, an xpass, an xfail, skips and subtests, against the
    report it writes for the same run (one skip is a whole module's)."""
    _junit(
        tmp_path,
        '<testcase classname="" name="test_b"><skipped message="collection skipped"/></testcase>'
        '<testcase classname="test_a" name="test_ok"/>'
        '<testcase classname="test_a" name="test_xf"><skipped type="pytest.xfail"/></testcase>'
        '<testcase classname="test_a" name="test_xp"/>'
        '<testcase classname="test_a" name="test_sk"><skipped type="pytest.skip"/></testcase>'
        '<testcase classname="test_a" name="test_sub"/>',
    )
    summary = "2 passed, 2 skipped, 1 xfailed, 1 xpassed, 3 subtests passed in 1.62s\n"
    evidence = _classified(PYTEST, tmp_path, stdout=".xXsuuu. [100%]\n" + summary)
    assert (evidence.verdict, evidence.cause) == (Verdict.PASS, Cause.EXIT_ZERO), evidence.note


def test_pytest_failing_run_keeps_its_own_verdict(tmp_path: Path) -> None:
    """The channels are only held against each other for a run that would pass."""
    _junit(tmp_path, '<testcase classname="t" name="a"><failure message="no"/></testcase>')
    evidence = _classified(PYTEST, tmp_path, stdout="", exit_code=1)
    assert (evidence.verdict, evidence.cause) == (Verdict.FAIL, Cause.EXIT_NONZERO)


# --------------------------------------------------------------------------- unittest

UNITTEST = _check("unittest", ("python", "-m", "unittest", "discover", "-s", "tests", "-v"))

# What Python 3.11 wrote for a suite with a docstring, output on stderr inside a test, a
# skip, an expected failure, subtests and a class skipped in setUpClass.
UNITTEST_VERBOSE = """\
test_log (test_u.T.test_log) ... to stderr
WARNING:root:warned
ok
test_ok (test_u.T.test_ok)
Doc line here. ... ok
test_sk (test_u.T.test_sk) ... skipped 'why'
test_sub (test_u.T.test_sub) ... ok
test_xf (test_u.T.test_xf) ... expected failure
skipped 'class skip'

----------------------------------------------------------------------
Ran 5 tests in 0.001s

OK (skipped=2, expected failures=1)
"""


def test_unittest_listing_names_every_test_with_its_outcome() -> None:
    cases = unittest_listing(UNITTEST_VERBOSE)
    assert [(c.name, c.outcome) for c in cases] == [
        ("test_u.T.test_log", "passed"),
        ("test_u.T.test_ok", "passed"),
        ("test_u.T.test_sk", "skipped"),
        ("test_u.T.test_sub", "passed"),
        ("test_u.T.test_xf", "skipped"),
    ]


def test_unittest_listing_of_older_pythons_names_the_class_only() -> None:
    (case,) = unittest_listing("test_add (tests.test_calc.CalcTest) ... FAIL\n")
    assert (case.name, case.outcome) == ("tests.test_calc.CalcTest.test_add", "failed")


def test_unittest_honest_verbose_run_passes() -> None:
    evidence = _classified(UNITTEST, stderr=UNITTEST_VERBOSE)
    assert (evidence.verdict, evidence.cause) == (Verdict.PASS, Cause.EXIT_ZERO), evidence.note
    assert len(evidence.test_cases) == 5


def test_unittest_summary_with_no_listing_is_a_mismatch() -> None:
    """Code that printed unittest's closing lines and exited before any test ran."""
    forged = "..\n" + "-" * 70 + "\nRan 2 tests in 0.001s\n\nOK\n"
    evidence = _classified(UNITTEST, stderr=forged)
    assert (evidence.verdict, evidence.cause) == (Verdict.FAIL, Cause.REPORT_MISMATCH)
    assert "listing" in evidence.note


def test_unittest_listing_is_not_expected_when_it_was_not_asked_for() -> None:
    quiet = _check("unittest", ("python", "-m", "unittest"))
    evidence = _classified(quiet, stderr="..\n" + "-" * 70 + "\nRan 2 tests in 0.0s\n\nOK\n")
    assert (evidence.verdict, evidence.cause) == (Verdict.PASS, Cause.EXIT_ZERO)


def test_unittest_listing_cut_in_the_middle_is_not_counted() -> None:
    cut = CapturedOutput(head="", tail="Ran 9 tests in 0.1s\n\nOK\n", bytes=10**7, truncated=True)
    done = dataclasses.replace(process_result(UNITTEST.argv), stderr=cut)
    evidence = classify(UNITTEST, done, parse_output(UNITTEST, done))
    assert (evidence.verdict, evidence.cause) == (Verdict.PASS, Cause.EXIT_ZERO), evidence.note


# --------------------------------------------------------------------------- go and cargo

GO_TEST = _check("go", ("go", "test", "-json", "./..."), name="go-test")


def _events(*events: dict[str, object]) -> str:
    return "\n".join(json.dumps(e) for e in events)


def test_go_tests_without_their_package_result_are_not_a_pass() -> None:
    """Events written into go test's output by the code under test, with no `ok` of go's."""
    stdout = _events(
        {"Action": "run", "Package": "p", "Test": "TestA"},
        {"Action": "pass", "Package": "p", "Test": "TestA"},
    )
    evidence = _classified(GO_TEST, stdout=stdout)
    assert (evidence.verdict, evidence.cause) == (Verdict.INCONCLUSIVE, Cause.REPORT_TAMPERED)
    assert "package p" in evidence.note


def test_go_tests_with_their_package_result_pass() -> None:
    stdout = _events(
        {"Action": "run", "Package": "p", "Test": "TestA"},
        {"Action": "pass", "Package": "p", "Test": "TestA"},
        {"Action": "output", "Package": "p", "Output": "ok  \tp\t0.01s\n"},
        {"Action": "pass", "Package": "p"},
    )
    evidence = _classified(GO_TEST, stdout=stdout)
    assert (evidence.verdict, evidence.cause) == (Verdict.PASS, Cause.EXIT_ZERO), evidence.note


CARGO_TEST = _check("cargo", ("cargo", "test"), name="cargo-test")


def test_cargo_result_lines_must_match_the_lines_per_test() -> None:
    honest = "running 2 tests\ntest a ... ok\ntest b ... ok\n\ntest result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n"
    assert _classified(CARGO_TEST, stdout=honest).cause is Cause.EXIT_ZERO
    forged = "test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n"
    evidence = _classified(CARGO_TEST, stdout=honest + forged)
    assert (evidence.verdict, evidence.cause) == (Verdict.FAIL, Cause.REPORT_MISMATCH)


def test_cargo_without_lines_per_test_is_read_by_its_result_lines() -> None:
    terse = "running 2 tests\n..\ntest result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n"
    check = _check("cargo", ("cargo", "test", "--", "--nocapture"), name="cargo-test")
    assert _classified(check, stdout=terse).cause is Cause.EXIT_ZERO


JEST = _check("jest", ("npx", "jest"))


def _jest_report(report_dir: Path, statuses: list[str]) -> None:
    results = [{"fullName": f"t{i}", "status": status} for i, status in enumerate(statuses)]
    document = {"testResults": [{"name": "a.test.js", "assertionResults": results}]}
    report_path(report_dir, JEST, "json").write_text(json.dumps(document))


def test_jest_summary_agrees_with_its_report(tmp_path: Path) -> None:
    _jest_report(tmp_path, ["passed", "passed", "pending"])
    stderr = "PASS ./a.test.js\nTests:       1 skipped, 2 passed, 3 total\nTime: 0.5 s\n"
    evidence = _classified(JEST, tmp_path, stderr=stderr)
    assert (evidence.verdict, evidence.cause) == (Verdict.PASS, Cause.EXIT_ZERO), evidence.note


def test_jest_report_that_disagrees_with_its_summary_is_a_mismatch(tmp_path: Path) -> None:
    """A report rewritten after jest printed what really happened."""
    _jest_report(tmp_path, ["passed", "passed"])
    stderr = "FAIL ./a.test.js\nTests:       1 failed, 2 passed, 3 total\n"
    evidence = _classified(JEST, tmp_path, stderr=stderr)
    assert (evidence.verdict, evidence.cause) == (Verdict.FAIL, Cause.REPORT_MISMATCH)


def test_jest_without_its_summary_is_read_by_its_report(tmp_path: Path) -> None:
    """Reporters a project configured instead of jest's own print no summary."""
    _jest_report(tmp_path, ["passed"])
    assert _classified(JEST, tmp_path).cause is Cause.EXIT_ZERO


# --------------------------------------------------------------------------- the base's tests


def _evidence(name: str, cases: dict[str, str], passed: int | None = None) -> Evidence:
    check = Check(name=name, kind=Kind.TEST, argv=("t",))
    counted = sum(o == "passed" for o in cases.values()) if passed is None else passed
    return evidence_for(
        check,
        Cause.EXIT_ZERO,
        tests=TestCounts(passed=counted),
        test_cases=tuple(TestCase(name=n, outcome=o) for n, o in cases.items()),
    )


def test_a_base_test_skipped_or_missing_now_is_listed() -> None:
    base = [BaseCheck.of(_evidence("pytest", {"a": "passed", "b": "passed", "c": "passed"}))]
    change = [_evidence("pytest", {"a": "passed", "b": "skipped", "new": "passed"})]
    found = compare(base, change)
    assert [(n.test, n.now) for n in found] == [("b", "skipped"), ("c", "missing")]


def test_tests_the_change_adds_or_fails_are_not_listed() -> None:
    """A failing test is the change's verdict to give, not a missing one."""
    base = [BaseCheck.of(_evidence("pytest", {"a": "passed", "b": "passed", "c": "failed"}))]
    change = [_evidence("pytest", {"a": "failed", "b": "error", "c": "passed", "new": "passed"})]
    assert compare(base, change) == ()


def test_a_test_that_failed_at_the_base_and_is_skipped_now_is_listed() -> None:
    """The test a change is asked to fix, skipped from library code, was not fixed; one
    that errored at the base (a module that did not import) may well be gone."""
    base = [BaseCheck.of(_evidence("pytest", {"a": "failed", "b": "failed", "c": "error"}))]
    change = [_evidence("pytest", {"a": "skipped", "new": "passed"})]
    found = compare(base, change)
    assert [(n.test, n.now) for n in found] == [("a", "skipped"), ("b", "missing")]
    again = BaseCheck.from_dict(base[0].to_dict())  # as the base's outcomes are cached
    assert compare([again], change) == found


def test_a_test_check_the_change_did_not_run_lists_every_base_test() -> None:
    base = [BaseCheck.of(_evidence("pytest", {"a": "passed"}))]
    assert [(n.check, n.test, n.now) for n in compare(base, [])] == [("pytest", "a", "missing")]


def test_a_check_without_test_names_is_held_to_its_count() -> None:
    base = [BaseCheck.of(_evidence("make-test", {}, passed=5))]
    (found,) = compare(base, [_evidence("make-test", {}, passed=3)])
    assert (found.check, found.test, found.now) == (
        "make-test",
        "2 of its 5 passing tests",
        "missing",
    )
    assert compare(base, [_evidence("make-test", {}, passed=6)]) == ()


def test_a_check_without_test_names_counts_its_failing_tests_as_run() -> None:
    """pkg/errors' `make test` (go test -v, read as text) with a changed message: 11 of its
    51 tests failed, and the note also said 11 of the base's 51 passing tests were not
    executed. A failing test is the change's verdict to give, not a missing one."""
    check = Check(name="make-test", kind=Kind.TEST, argv=("make", "test"))
    base = [BaseCheck.of(_evidence("make-test", {}, passed=51))]
    failing = evidence_for(check, Cause.EXIT_NONZERO, tests=TestCounts(passed=40, failed=11))
    assert compare(base, [failing]) == ()
    fewer = evidence_for(check, Cause.EXIT_NONZERO, tests=TestCounts(passed=30, errors=11))
    (found,) = compare(base, [fewer])
    assert found.test == "10 of its 51 passing tests", found


def test_a_check_that_names_only_its_failures_is_held_to_its_count() -> None:
    """unittest without `-v` names the tests that failed and no other: the one the change
    fixed goes unnamed in its run, which is no reason to call it missing."""
    check = Check(name="unittest", kind=Kind.TEST, argv=("t",))

    def run(passed: int, failing: tuple[str, ...]) -> Evidence:
        return evidence_for(
            check,
            Cause.EXIT_NONZERO if failing else Cause.EXIT_ZERO,
            tests=TestCounts(passed=passed, failed=len(failing)),
            test_cases=tuple(TestCase(name=n, outcome="failed") for n in failing),
        )

    base = [BaseCheck.of(run(3, ("t.T.test_a",)))]
    assert base[0].passed == () and base[0].failed == () and base[0].passed_count == 3
    assert compare(base, [run(4, ())]) == ()
    (found,) = compare(base, [run(2, ())])
    assert found.test == "1 of its 3 passing tests"


def test_a_test_reported_twice_counts_as_run_once_it_ran() -> None:
    base = [BaseCheck.of(_evidence("pytest", {"a": "passed"}))]
    change = _evidence("pytest", {})
    change = Evidence(
        check=change.check,
        verdict=change.verdict,
        cause=change.cause,
        tests=TestCounts(passed=1),
        test_cases=(TestCase("a", "skipped"), TestCase("a", "passed")),
    )
    assert compare(base, [change]) == ()


@pytest.mark.parametrize(
    ("cause", "status"),
    [(Cause.EXIT_ZERO, Status.INDETERMINATE), (Cause.EXIT_NONZERO, Status.FAILED)],
)
def test_unexecuted_base_tests_keep_the_change_from_verified(cause: Cause, status: Status) -> None:
    """Not seen run is not seen failing: INDETERMINATE, unless something did fail."""
    evidence = evidence_for(
        Check(name="pytest", kind=Kind.TEST, argv=("t",)), cause, tests=TestCounts(passed=1)
    )
    not_executed = [{"check": "pytest", "test": "t::test_add", "now": "skipped"}]
    record = RunRecord(base_tests={"not_executed": not_executed})
    report = aggregate([evidence], record=record)
    assert report.status is status
    assert "t::test_add (skipped)" in report.note
    again = RunRecord.from_dict(report.record.to_dict())
    assert again.base_tests == record.base_tests


def test_tests_a_failed_run_never_reached_are_counted_not_listed() -> None:
    """BurntSushi/toml's go test ended at a panic in one test: the note named ten of the
    1,060 tests it never reached before anything else. One it ran and skipped is named."""
    evidence = evidence_for(
        Check(name="go-test", kind=Kind.TEST, argv=("t",)),
        Cause.EXIT_NONZERO,
        tests=TestCounts(passed=1, failed=1),
    )
    never = [{"check": "go-test", "test": f"p.Test{i}", "now": "missing"} for i in range(12)]
    skipped = {"check": "go-test", "test": "p.TestSkipped", "now": "skipped"}
    record = RunRecord(base_tests={"not_executed": [*never, skipped]})
    report = aggregate([evidence], record=record)
    assert report.status is Status.FAILED
    assert "p.Test0" not in report.note, report.note
    assert "go-test: p.TestSkipped (skipped)" in report.note, report.note
    assert "go-test failed, and its run did not reach 12 tests that passed at the base" in (
        report.note
    ), report.note

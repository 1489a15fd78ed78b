"""assay's grading agrees with the `swebench` package's own, on the same runs.

SWE-bench instances made from a real repository (inflection 0.5.1's sdist, real bugs
planted) are imported and evaluated by `assay eval` for real: real pytest under real
bubblewrap, once with the gold patch and once with a patch that fixes nothing. Each
recorded attempt's per-test outcomes and resolved status are compared with what
swebench's log parser and grading functions make of that attempt's own test output.
Where the two differ by design, the difference is named here, test by test.
"""

from __future__ import annotations

import copy
import sys

import pytest

from assay.eval.swebench.agreement import (
    AgreementUnavailable,
    RunAgreement,
    compare_attempt,
    render_table,
)
from tests.fixtures.swebench_agreement.build import Attempt, evaluate

pytestmark = pytest.mark.slow

I1, I2, I3, I4, I5, I6 = (f"jpvanhal__inflection-{n}" for n in range(1, 7))
#: Every test where the two readers differ, and why: nothing else may differ.
EXPECTED_BY_DESIGN = {
    (I3, "gold", "test_inflection.py::test_dasherize_locale"): "skip_line",
    (I4, "gold", "test_inflection.py::test_titleize[david's code-David's Code]"): "space",
    (I4, "gold", "test_inflection.py::test_titleize[active_record-Active Record]"): "space",
    (I4, "unfixed", "test_inflection.py::test_titleize[david's code-David's Code]"): "space",
    (I4, "unfixed", "test_inflection.py::test_titleize[active_record-Active Record]"): "space",
}
#: (assay resolved, swebench's resolution) per run.
EXPECTED_RESOLVED = {
    (I1, "gold"): (True, "RESOLVED_FULL"),
    (I2, "gold"): (True, "RESOLVED_FULL"),
    # A skipped pass-to-pass test: missing for swebench (its skip line has no id),
    # skipped for assay; not passing for either. Its xfail fail-to-pass test passes for both.
    (I3, "gold"): (False, "RESOLVED_NO"),
    # Full ids with spaces: found by assay, missing for swebench's parser.
    (I4, "gold"): (True, "RESOLVED_NO"),
    # Ids cut at the first space, as swebench's parser cuts them: found by both.
    (I5, "gold"): (True, "RESOLVED_FULL"),
    # A pass-to-pass test the run never has: unresolved for both.
    (I6, "gold"): (False, "RESOLVED_NO"),
    (I1, "unfixed"): (False, "RESOLVED_NO"),
    # The new test file fails at collection: its tests are missing for both.
    (I2, "unfixed"): (False, "RESOLVED_NO"),
    (I4, "unfixed"): (False, "RESOLVED_NO"),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Attempt]:
    """(run, attempt, instance) for every attempt of both evaluations."""
    return evaluate(tmp_path_factory.mktemp("agreement"))


def _compared(runs: list[Attempt]) -> list[RunAgreement]:
    found = [compare_attempt(a, i, run=run) for run, a, i in runs]
    return sorted(found, key=lambda r: (r.run, r.instance_id))


def test_every_test_agrees_or_differs_for_a_named_reason(
    runs: list[Attempt],
) -> None:
    compared = _compared(runs)
    print(render_table(compared))  # the agreement table, for the note (-s shows it)

    assert {(r.instance_id, r.run) for r in compared} == set(EXPECTED_RESOLVED)
    assert all(r.swebench_log_usable for r in compared)
    disagree = [
        (r.instance_id, r.run, t) for r in compared for t in r.tests if t.verdict == "disagree"
    ]
    assert disagree == []
    by_design = {
        (r.instance_id, r.run, t.test_id): t.by_design
        for r in compared
        for t in r.tests
        if t.verdict == "by design"
    }
    assert by_design == EXPECTED_BY_DESIGN
    agreed = sum(r.count("agree") for r in compared)
    assert agreed == sum(len(r.tests) for r in compared) - len(EXPECTED_BY_DESIGN)


def test_resolved_status_agrees_but_where_a_test_differs_by_design(
    runs: list[Attempt],
) -> None:
    compared = _compared(runs)

    got = {(r.instance_id, r.run): (r.assay_resolved, r.swebench_resolution) for r in compared}
    assert got == EXPECTED_RESOLVED
    verdicts = {(r.instance_id, r.run): r.resolved_verdict for r in compared}
    assert verdicts[(I4, "gold")] == "by design"
    assert {v for k, v in verdicts.items() if k != (I4, "gold")} == {"agree"}


def test_the_runs_hold_what_the_instances_were_built_to_show(
    runs: list[Attempt],
) -> None:
    """The disagreement cases really happened in the runs, not just in the lists."""
    tests = {(r.instance_id, r.run, t.test_id): t for r in _compared(runs) for t in r.tests}
    collection = tests[(I2, "unfixed", "test_suffixes.py::test_first_four")]
    assert (collection.assay_outcome, collection.swebench_status) == ("not_run", None)
    failing = tests[(I1, "unfixed", "test_inflection.py::test_ordinal[13-13th]")]
    assert (failing.assay_outcome, failing.swebench_status) == ("failed", "FAILED")
    missing = tests[(I6, "gold", "test_inflection.py::test_ordinal_of_thirteens[14]")]
    assert (missing.assay_outcome, missing.swebench_passes) == ("not_run", False)
    xfail = tests[(I3, "gold", "test_inflection.py::test_dasherize_spaces")]
    assert (xfail.assay_outcome, xfail.swebench_status, xfail.assay_passes) == (
        "xfailed",
        "XFAIL",
        True,
    )
    cut = tests[(I5, "gold", "test_inflection.py::test_titleize[david's")]
    assert (cut.assay_outcome, cut.swebench_status) == ("passed", "PASSED")


def test_an_altered_assay_outcome_is_a_disagreement(
    runs: list[Attempt],
) -> None:
    """The comparison can fail: one test's outcome in assay's record changed after the
    run, and that test (and the resolved status) no longer agree."""
    run, attempt, instance = next(
        (r, a, i) for r, a, i in runs if (a["task_id"], r) == (I1, "gold")
    )
    altered = copy.deepcopy(attempt)
    target = "test_inflection.py::test_ordinal[13-13th]"
    altered["evidence"]["verification"]["tests"]["fail_to_pass"][target] = "failed"

    compared = compare_attempt(altered, instance, run=run)

    verdicts = {t.test_id: t.verdict for t in compared.tests}
    assert verdicts[target] == "disagree"
    assert [v for k, v in verdicts.items() if k != target] == ["agree"] * (len(verdicts) - 1)
    assert compared.resolved_verdict == "disagree"


def test_an_attempt_that_was_not_verified_is_a_clear_error(
    runs: list[Attempt],
) -> None:
    run, attempt, instance = runs[0]
    errored = dict(attempt, outcome="error")
    errored["evidence"] = dict(attempt["evidence"], verification=None)

    with pytest.raises(AgreementUnavailable, match="not verified"):
        compare_attempt(errored, instance, run=run)


def test_without_the_swebench_package_it_is_a_clear_error(
    runs: list[Attempt], monkeypatch: pytest.MonkeyPatch
) -> None:
    run, attempt, instance = runs[0]
    monkeypatch.setitem(sys.modules, "swebench.harness.grading", None)  # as if not installed

    with pytest.raises(AgreementUnavailable, match="pip install 'assay\\[test\\]'"):
        compare_attempt(attempt, instance, run=run)

"""The report's statistics against values worked by hand: Wilson intervals and the unbiased
pass@k estimator, and what the report's JSON makes of a real store's attempts."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from assay.eval.stats import pass_at_k, pass_at_k_by_task, wilson_interval


def _interval(passed: int, total: int) -> tuple[float, float]:
    found = wilson_interval(passed, total)
    assert found is not None
    return found


def test_wilson_interval_matches_the_formula_worked_by_hand() -> None:
    lo, hi = _interval(5, 10)
    assert (round(lo, 4), round(hi, 4)) == (0.2366, 0.7634)
    lo, hi = _interval(0, 4)
    assert lo == 0.0 and round(hi, 4) == 0.4899
    lo, hi = _interval(4, 4)
    assert round(lo, 4) == 0.5101 and hi == 1.0
    assert wilson_interval(0, 0) is None


def test_wilson_interval_refuses_counts_that_cannot_be() -> None:
    for passed, total in ((3, 2), (-1, 2), (1, -1)):
        with pytest.raises(ValueError, match="passed"):
            wilson_interval(passed, total)


def test_pass_at_k_is_the_unbiased_estimator() -> None:
    assert pass_at_k(n=2, c=1, k=1) == 0.5
    assert pass_at_k(n=2, c=1, k=2) == 1.0
    assert pass_at_k(n=5, c=0, k=3) == 0.0
    # 1 - C(3, 2) / C(5, 2) = 1 - 3/10
    assert math.isclose(pass_at_k(n=5, c=2, k=2), 0.7)
    with pytest.raises(ValueError, match="k"):
        pass_at_k(n=2, c=1, k=3)


def test_pass_at_k_by_task_averages_tasks_with_enough_scored_attempts() -> None:
    outcomes = {"a": [True, False], "b": [False, False], "c": [True]}
    found = pass_at_k_by_task(outcomes)
    # k=1: a 0.5, b 0, c 1 -> 0.5 over 3 tasks; k=2: a 1, b 0 -> 0.5 over 2 tasks (c has 1).
    assert found == {"1": {"value": 0.5, "tasks": 3}, "2": {"value": 0.5, "tasks": 2}}
    assert pass_at_k_by_task({}) == {}


def test_the_json_report_has_pass_at_k_and_intervals_from_the_store(tmp_path: Path) -> None:
    from assay.eval.store import Store
    from assay.eval.summary import summarize
    from tests.eval.report_store import fill_store

    store = Store(tmp_path / "s.sqlite")
    eval_id = fill_store(store)
    info = store.get_eval(eval_id)
    assert info is not None

    summary = summarize(store, info)

    # Scored: a 2 of 2 passed, b 1 of 2, hostile 0 of 1; one error beside them.
    assert (summary["scored"], summary["passed"], summary["errors"]) == (5, 3, 1)
    assert summary["pass_at_k"]["1"] == {"value": pytest.approx((1 + 0.5 + 0) / 3), "tasks": 3}
    assert summary["pass_at_k"]["2"] == {"value": 1.0, "tasks": 2}
    lo, hi = summary["ci95"]
    assert (round(lo, 4), round(hi, 4)) == tuple(round(v, 4) for v in _interval(3, 5))
    assert summary["groups"]["task"]["a"]["ci95"] == list(_interval(2, 2))
    assert summary["groups"]["task"]["c"]["ci95"] is None  # only an error: nothing scored


def test_the_terminal_table_shows_pass_at_k_when_there_are_epochs(tmp_path: Path) -> None:
    from assay.eval.store import Store
    from assay.eval.summary import render_text, summarize
    from tests.eval.report_store import fill_store

    store = Store(tmp_path / "s.sqlite")
    info = store.get_eval(fill_store(store))
    assert info is not None

    text = render_text(summarize(store, info))

    assert "pass@1 50.0% (3 tasks)  pass@2 100.0% (2 tasks)" in text

"""End to end, for real: a small Python repository with four bugs as task folders, run
through bubblewrap by `run_eval` with nop, the oracle, a scripted agent and a forger."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from assay.eval import run_eval
from assay.eval.store import Store
from tests.eval.tasks import FORGER, HALF_AGENT, make_tasks, write_agent, write_task

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tasks(tmp_path_factory.mktemp("eval-tasks"))


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("eval-store") / "evals.sqlite"


def _by_task(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["task_id"]: row for row in summary["attempts"]}


def test_nop_scores_nothing_and_a_missing_source_errs_only_its_own_run(
    tasks: Path, store_path: Path, tmp_path: Path
) -> None:
    broken = write_task(tmp_path / "task-gone", 1, repo=tmp_path / "no-such-repo", commit="bug-1")
    text = (broken / "task.toml").read_text().replace('id = "calc-1"', 'id = "calc-gone"')
    (broken / "task.toml").write_text(text)

    result = run_eval([tasks, broken], "nop", store=store_path, concurrency=2)

    summary = result.summary
    assert (summary["scored"], summary["passed"], summary["pass_rate"]) == (4, 0, 0.0)
    assert summary["errors"] == 1
    assert summary["errors_by_stage"] == {"provision:source_missing": 1}
    rows = _by_task(summary)
    assert rows["calc-gone"]["error"]["stage"] == "provision"
    assert "no-such-repo" in rows["calc-gone"]["error"]["message"]
    for task_id in ("calc-1", "calc-2", "calc-3", "calc-4"):
        assert rows[task_id]["outcome"] == "scored"
        assert rows[task_id]["status"] == "FAILED"
        assert list(rows[task_id]["tests"]["fail_to_pass"].values()) == ["failed"]


def test_the_oracle_scores_every_task(tasks: Path, store_path: Path) -> None:
    result = run_eval([tasks], "oracle", store=store_path, concurrency=2)

    assert result.summary["pass_rate"] == 1.0
    assert result.summary["errors"] == 0
    for row in result.summary["attempts"]:
        assert row["status"] == "VERIFIED"
        assert set(row["tests"]["fail_to_pass"].values()) == {"passed"}
        assert set(row["tests"]["pass_to_pass"].values()) == {"passed"}
        assert row["tampering"] == []


def test_an_agent_that_fixes_half_scores_half(
    tasks: Path, store_path: Path, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path, "half", HALF_AGENT)

    result = run_eval([tasks], f"python3 {agent}", store=store_path, concurrency=2)

    summary = result.summary
    assert summary["pass_rate"] == 0.5
    assert summary["errors"] == 0
    rows = _by_task(summary)
    assert {t: r["score"] for t, r in rows.items()} == {
        "calc-1": 1.0,
        "calc-2": 0.0,
        "calc-3": 1.0,
        "calc-4": 0.0,
    }
    # Its non-zero exit on the tasks it gave up on is recorded, never an error.
    assert rows["calc-2"]["agent_exit_code"] == 3
    assert rows["calc-2"]["outcome"] == "scored"
    assert rows["calc-3"]["telemetry"] == {
        "turns": 3,
        "tokens_in": 100,
        "tokens_out": 20,
        "cost_usd": 0.01,
    }
    # Stored, with its score and the stages' timings, exactly once per attempt.
    store = Store(store_path)
    try:
        assert {(r["task_id"], r["epoch"]) for r in store.attempts(result.eval_id)} == {
            (f"calc-{n}", 1) for n in range(1, 5)
        }
        stages = {t[3] for t in store.stage_timings(result.eval_id)}
        assert stages == {"generate", "provision", "run", "verify", "score", "cleanup"}
    finally:
        store.close()


def test_an_agent_that_forges_a_pass_scores_nothing_and_its_tampering_is_recorded(
    tasks: Path, store_path: Path, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path, "forger", FORGER)

    result = run_eval([tasks / "task-1"], f"python3 {agent}", store=store_path)

    (row,) = result.summary["attempts"]
    assert row["outcome"] == "scored"
    assert row["score"] == 0.0
    assert row["status"] == "FAILED"
    tampering = "\n".join(row["tampering"])
    assert "tests/test_calc.py" in tampering
    assert "conftest.py" in tampering
    assert row["tests"]["fail_to_pass"] == {"tests/test_calc.py::test_add": "failed"}

"""SWE-bench instances graded end to end, for real: imported from a git clone, run
through bubblewrap by `assay eval` with the oracle and with recorded predictions, then
reported by `assay report --format swebench`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.cli import assay, no_traceback
from tests.eval.swebench_repos import make_instance, write_jsonl

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

#: Instance id -> the prediction for it (None: no prediction at all).
GOLD, EMPTY, NOT_APPLYING, BREAKS_SUB, MISSING, WITH_TESTS = (
    f"acme__calc-{n}" for n in range(1, 7)
)
ALL = (GOLD, EMPTY, NOT_APPLYING, BREAKS_SUB, MISSING, WITH_TESTS)


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("swebench")
    instance = make_instance(root / "repos")
    ids = ALL
    jsonl = write_jsonl(root / "instances.jsonl", [dict(instance, instance_id=i) for i in ids])
    done = assay(
        "tasks", "import", str(jsonl), "--repos", str(root / "repos"), "--out", str(root / "tasks")
    )
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    gold = str(instance["patch"])
    predictions = {
        GOLD: gold,
        EMPTY: "",
        NOT_APPLYING: gold.replace("-    return a - b", "-    return a * b"),
        # Fixes add and breaks sub: fail-to-pass passes, pass-to-pass fails.
        BREAKS_SUB: _breaking_patch(),
        # The fix, and a change to the test file as it was at the base (which the test
        # patch also changes): SWE-bench applies it to the base, then puts the test
        # patch's files back, so it is resolved.
        WITH_TESTS: gold + _test_file_patch(),
    }
    return root, predictions


def _breaking_patch() -> str:
    return (
        "diff --git a/calc.py b/calc.py\n"
        "--- a/calc.py\n"
        "+++ b/calc.py\n"
        "@@ -1,5 +1,5 @@\n"
        " def add(a, b):\n"
        "-    return a - b\n"
        "+    return a + b\n"
        " \n"
        " \n"
        " def sub(a, b):\n"
        "@@ -6 +6 @@ def sub(a, b):\n"
        "-    return a - b\n"
        "+    return b - a\n"
    )


def _test_file_patch() -> str:
    return (
        "diff --git a/tests/test_calc.py b/tests/test_calc.py\n"
        "--- a/tests/test_calc.py\n"
        "+++ b/tests/test_calc.py\n"
        "@@ -1 +1 @@\n"
        "-from calc import sub\n"
        "+from calc import add, sub  # the model's own edit\n"
    )


def _eval(root: Path, agent: str, store: Path) -> dict[str, Any]:
    done = assay(
        "eval",
        str(root / "tasks"),
        "--agent",
        agent,
        "--store",
        str(store),
        "--concurrency",
        "2",
        "--json",
        timeout=900,
    )
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


def _swebench(store: Path) -> dict[str, Any]:
    done = assay("report", "--store", str(store), "--format", "swebench")
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_the_oracle_resolves_every_instance(
    imported: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    root, _predictions = imported
    store = tmp_path / "evals.sqlite"

    summary = _eval(root, "oracle", store)
    report = _swebench(store)

    assert {row["resolved"] for row in summary["attempts"]} == {True}
    assert report["resolved_ids"] == sorted(ALL)
    assert report["resolved_instances"] == report["total_instances"] == 6
    assert report["error_ids"] == report["unresolved_ids"] == report["empty_patch_ids"] == []


def test_predictions_are_graded_with_swebench_meaning(
    imported: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    root, predictions = imported
    preds = write_jsonl(
        tmp_path / "preds.jsonl",
        [
            {"instance_id": i, "model_name_or_path": "m", "model_patch": p}
            for i, p in predictions.items()
        ],
    )
    store = tmp_path / "evals.sqlite"

    summary = _eval(root, f"patch:{preds}", store)
    report = _swebench(store)

    rows = {row["task_id"]: row for row in summary["attempts"]}
    assert rows[GOLD]["resolved"] is True
    assert rows[BREAKS_SUB]["resolved"] is False
    assert rows[BREAKS_SUB]["not_passed"] == {
        "fail_to_pass": {},
        "pass_to_pass": {"tests/test_calc.py::test_sub": "failed"},
    }
    # A patch that does not apply is a scored failure with git's reason, not an error.
    assert rows[NOT_APPLYING]["outcome"] == "scored"
    assert rows[NOT_APPLYING]["resolved"] is False
    assert rows[NOT_APPLYING]["unresolved_reason"].startswith("the patch did not apply: ")
    assert "calc.py" in rows[NOT_APPLYING]["unresolved_reason"]
    assert {
        k: report[k]
        for k in (
            "total_instances",
            "submitted_instances",
            "completed_instances",
            "resolved_instances",
            "unresolved_instances",
            "empty_patch_instances",
            "error_instances",
        )
    } == {
        "total_instances": 6,
        "submitted_instances": 5,
        "completed_instances": 4,
        "resolved_instances": 2,
        "unresolved_instances": 2,
        "empty_patch_instances": 1,
        "error_instances": 0,
    }
    assert report["resolved_ids"] == [GOLD, WITH_TESTS]
    assert "tests/test_calc.py" in rows[WITH_TESTS]["agent_note"]
    assert report["unresolved_ids"] == sorted((NOT_APPLYING, BREAKS_SUB))
    assert report["empty_patch_ids"] == [EMPTY]
    assert report["incomplete_ids"] == [MISSING]
    assert report["submitted_ids"] == sorted((GOLD, EMPTY, NOT_APPLYING, BREAKS_SUB, WITH_TESTS))
    assert report["completed_ids"] == sorted((GOLD, NOT_APPLYING, BREAKS_SUB, WITH_TESTS))
    assert report["error_ids"] == []
    assert report["schema_version"] == 2
    assert "test_sub" in report["unresolved_reasons"][BREAKS_SUB]

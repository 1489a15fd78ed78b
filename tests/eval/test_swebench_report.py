"""`assay report --format swebench` on a real store: errors, epochs beyond the first, and
tasks without grading sets (assay's verdict decides)."""

from __future__ import annotations

import json
from pathlib import Path

from assay.eval.store import Store
from assay.eval.swebench import swebench_report
from tests.cli import assay, no_traceback
from tests.eval.report_store import HOSTILE_ID, fill_store


def test_errors_are_error_ids_with_their_cause_and_the_first_epoch_decides(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "evals.sqlite")
    try:
        eval_id = fill_store(store)
        info = store.get_eval(eval_id)
        assert info is not None
        report = swebench_report(store, info)
    finally:
        store.close()

    assert report["total_instances"] == 4
    assert report["resolved_ids"] == ["a", "b"]  # b's second epoch failed: not its run
    assert report["unresolved_ids"] == [HOSTILE_ID]
    assert report["unresolved_reasons"] == {HOSTILE_ID: "verification FAILED"}
    assert report["error_ids"] == report["infra_failure_ids"] == ["c"]
    assert report["failure_reasons"] == {"c": "provision/source_missing: no repository at <x>"}
    assert report["completed_ids"] == sorted(["a", "b", HOSTILE_ID])
    assert report["empty_patch_ids"] == report["incomplete_ids"] == []
    assert report["schema_version"] == 2


def test_the_command_writes_it_and_refuses_two_formats_at_once(tmp_path: Path) -> None:
    path = tmp_path / "evals.sqlite"
    store = Store(path)
    try:
        fill_store(store)
    finally:
        store.close()

    done = assay("report", "--store", str(path), "--format", "swebench")
    both = assay("report", "--store", str(path), "--format", "swebench", "--json")

    no_traceback(done)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["resolved_instances"] == 2
    no_traceback(both)
    assert both.returncode == 2
    assert "--json" in both.stderr

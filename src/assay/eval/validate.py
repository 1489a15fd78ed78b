"""A task counts only once it is shown to work: its oracle (`solution.patch`) verifies
`VERIFIED` three times in a row (else it is flaky, or its solution is wrong), and the
`nop` agent leaves it not `VERIFIED` (else there is nothing to fix).

Each oracle run reruns its failing tests as the task says (`rerun_failures`, default 2):
a test that fails and then passes on a rerun makes the oracle flaky, and the task is
rejected with the test named (a grading-set test first), since no attempt at it could be
graded on that test."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.eval.api import run_eval
from assay.eval.store import Store

#: How many times in a row the oracle must verify.
ORACLE_RUNS = 3


@dataclass(frozen=True, slots=True)
class TaskValidation:
    task_id: str
    valid: bool
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "valid": self.valid, "reason": self.reason}


def validate_tasks(
    folders: Sequence[str | Path],
    store: Store,
    *,
    sandbox: str = "auto",
    concurrency: int = 1,
) -> list[TaskValidation]:
    """Run the oracle `ORACLE_RUNS` times and `nop` once on every task; judge each task."""
    oracle = run_eval(
        folders,
        "oracle",
        epochs=ORACLE_RUNS,
        concurrency=concurrency,
        store=store,
        sandbox=sandbox,
    )
    nop = run_eval(folders, "nop", concurrency=concurrency, store=store, sandbox=sandbox)
    by_task: dict[str, list[dict[str, Any]]] = {}
    for row in oracle.summary["attempts"]:
        by_task.setdefault(row["task_id"], []).append(row)
    nop_rows = {row["task_id"]: row for row in nop.summary["attempts"]}
    return [_judge(task_id, rows, nop_rows.get(task_id)) for task_id, rows in by_task.items()]


def _judge(
    task_id: str, oracle: list[dict[str, Any]], nop: dict[str, Any] | None
) -> TaskValidation:
    for row in sorted(oracle, key=lambda r: r["epoch"]):
        if row["error"]:
            error = row["error"]
            return TaskValidation(
                task_id,
                False,
                f"oracle run {row['epoch']} could not run ({error['stage']}/{error['cause']}: "
                f"{error['message']})",
            )
        if flaky := _flaky(row):
            return TaskValidation(
                task_id,
                False,
                f"oracle run {row['epoch']} of {ORACLE_RUNS} was {row['status']}: the gold "
                f"patch is flaky: {flaky} failed, then passed on a rerun in a fresh process",
            )
        if row["status"] != "VERIFIED":
            return TaskValidation(
                task_id,
                False,
                f"oracle run {row['epoch']} of {ORACLE_RUNS} was {row['status']}, not VERIFIED "
                "(flaky, or its solution does not fix it)",
            )
    if nop is None or nop["error"]:
        why = nop["error"]["message"] if nop and nop["error"] else "no nop run"
        return TaskValidation(task_id, False, f"the nop run could not run: {why}")
    if nop["status"] == "VERIFIED":
        return TaskValidation(task_id, False, "nop is VERIFIED: there is nothing to fix")
    return TaskValidation(
        task_id,
        True,
        f"oracle VERIFIED {ORACLE_RUNS} times in a row; nop {nop['status']}",
    )


def _flaky(row: dict[str, Any]) -> str:
    """The flaky tests of an oracle run, grading-set ones first and said to be."""
    by_set = row.get("flaky") or {}
    graded = [f"{name} {tid}" for name, tests in by_set.items() for tid in tests]
    graded_ids = {tid for tests in by_set.values() for tid in tests}
    others = [
        f"test {t}"
        for t in row.get("flaky_tests") or []
        if not any(_same_test(t, g) for g in graded_ids)
    ]
    named = graded + others
    more = f" (and {len(named) - 5} more)" if len(named) > 5 else ""
    return ", ".join(named[:5]) + more


def _same_test(a: str, b: str) -> bool:
    from assay.eval.verify_stage import normalize_test_id

    return normalize_test_id(a) == normalize_test_id(b)

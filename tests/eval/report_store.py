"""A real store holding a small evaluation for the report tests: passes, a failure, an
infrastructure error, and a task whose id and agent output are hostile markup."""

from __future__ import annotations

from typing import Any

from assay.eval.record import ERROR, SCORED, AttemptError, AttemptRecord, StageTiming
from assay.eval.score import Score
from assay.eval.store import Store

#: Markup that would run, or fetch, if the report pasted it unescaped.
HOSTILE_ID = "<script>console.error('id')</script>&\"'x"
HOSTILE_OUTPUT = (
    "</pre></details></table><img src=x onerror=\"console.error('output')\">"
    "<script>console.error('output')</script><link rel=stylesheet href=https://example.com/x.css>"
)

TASKS: dict[str, dict[str, Any]] = {
    "a": {"language": "python", "difficulty": "easy", "template": "comparison_flip"},
    "b": {"language": "go", "difficulty": "medium", "template": "off_by_one"},
    HOSTILE_ID: {"language": "python", "difficulty": "hard", "template": "<b>bold</b>"},
    "c": {"language": "python", "difficulty": "easy", "template": "comparison_flip"},
}

#: (task, epoch, status or None for an error, agent seconds, tokens in, cost in dollars)
ATTEMPTS = [
    ("a", 1, "VERIFIED", 2.0, 1000, 0.01),
    ("a", 2, "VERIFIED", 3.0, 1500, 0.02),
    ("b", 1, "VERIFIED", 5.0, 4000, 0.05),
    ("b", 2, "FAILED", 9.0, 8000, 0.10),
    (HOSTILE_ID, 1, "FAILED", 1.0, 500, 0.005),
    ("c", 1, None, 0.0, 0, 0.0),
]


def fill_store(store: Store) -> str:
    """Records the evaluation in `store`; returns its id."""
    specs = [{"id": task_id, **fields} for task_id, fields in TASKS.items()]
    eval_id = store.create_eval("agent </td>", {"epochs": 2, "planned": 8}, specs)
    start = 1_700_000_000.0
    for task_id, epoch, status, seconds, tokens, cost in ATTEMPTS:
        telemetry = {"tokens_in": tokens, "tokens_out": tokens // 10, "cost_usd": cost}
        agent = {
            "runner": "command",
            "exit_code": 0,
            "timed_out": False,
            "duration_s": seconds,
            "stdout": HOSTILE_OUTPUT if task_id == HOSTILE_ID else "done\n",
            "stderr": "",
        }
        evidence: dict[str, Any] = {
            "task": {"id": task_id, **TASKS[task_id]},
            "agent": agent if status else None,
            "verification": {"status": status, "tampering": []} if status else None,
        }
        error = None
        if status is None:
            error = AttemptError("provision", "source_missing", "no repository at <x>")
        store.record_attempt(
            AttemptRecord(
                eval_id=eval_id,
                task_id=task_id,
                epoch=epoch,
                outcome=SCORED if status else ERROR,
                started_at=start,
                finished_at=start + seconds + 4.0,
                status=status,
                error=error,
                score=Score(1.0 if status == "VERIFIED" else 0.0, status=status)
                if status
                else None,
                timings=(StageTiming(1, "run", seconds), StageTiming(1, "verify", 4.0)),
                evidence=evidence,
                telemetry=telemetry if status else {},
            )
        )
        start += 60
    return eval_id

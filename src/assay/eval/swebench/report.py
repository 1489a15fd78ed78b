"""An evaluation reported as SWE-bench's harness reports a run (`make_run_report` in
`swebench/harness/reporting.py`, schema_version 2), so the tooling that reads those files
reads assay's.

Each task is an instance; its first epoch is its one run. Where assay's meaning differs
from the Docker harness's, assay's holds and is said here:

- an attempt that is an infrastructure error (assay could not grade it) is an error,
  and also an infrastructure failure (`infra_failure_ids`, with `failure_reasons`);
- a patch that does not apply is a scored failure: unresolved, with the reason in
  `unresolved_reasons` (SWE-bench's harness counts it as an error);
- a task the `patch:` runner had no prediction for is not submitted (`incomplete_ids`);
  an empty prediction, or an agent that changed nothing, is an empty patch;
- a task never recorded (an evaluation stopped part-way) is incomplete;
- an instance whose grading-set tests all passed but for flaky ones (failed, then passed
  on a rerun in a fresh process) is unresolved, never resolved, and, as the harness
  reports a failure that may not be the patch's, an ambiguous failure
  (`ambiguous_failure_ids`, with `failure_reasons` `flaky_tests`); the tests are named in
  `unresolved_reasons`.
"""

from __future__ import annotations

from typing import Any

from assay.eval.store import EvalInfo, Store
from assay.eval.summary import patch_refused, resolution

SCHEMA_VERSION = 2
#: What the `patch:` runner notes when the predictions file has nothing for a task.
NO_PREDICTION = "no patch for "
#: The failure reason of an instance left unresolved by flaky grading-set tests only.
FLAKY_TESTS = "flaky_tests"


def swebench_report(store: Store, info: EvalInfo) -> dict[str, Any]:
    """The SWE-bench run report of evaluation `info`."""
    task_ids = sorted({spec["id"] for spec in store.task_specs(info.id)})
    first: dict[str, dict[str, Any]] = {}
    for recorded in sorted(store.attempts(info.id), key=lambda a: a["epoch"]):
        first.setdefault(recorded["task_id"], recorded)
    ids: dict[str, set[str]] = {
        name: set() for name in ("submitted", "completed", "incomplete", "empty_patch")
    }
    ids.update(resolved=set(), unresolved=set(), error=set(), ambiguous=set())
    unresolved_reasons: dict[str, str] = {}
    failure_reasons: dict[str, str] = {}
    for task_id in task_ids:
        attempt = first.get(task_id)
        if attempt is None or _no_prediction(attempt):
            ids["incomplete"].add(task_id)
            continue
        ids["submitted"].add(task_id)
        if attempt["outcome"] != "scored":
            ids["error"].add(task_id)
            failure_reasons[task_id] = (
                f"{attempt['error_stage']}/{attempt['error_cause']}: {attempt['error_message']}"
            )
            continue
        if _empty_patch(attempt):
            ids["empty_patch"].add(task_id)
            continue
        ids["completed"].add(task_id)
        resolved = resolution(attempt)
        if resolved["resolved"] is None:  # no grading sets: assay's verdict decides
            resolved["resolved"] = (attempt["score"] or 0.0) >= 1.0
            resolved["unresolved_reason"] = f"verification {attempt['status']}"
        if resolved["resolved"]:
            ids["resolved"].add(task_id)
        else:
            ids["unresolved"].add(task_id)
            unresolved_reasons[task_id] = resolved["unresolved_reason"]
            if resolved.get("indeterminate"):
                ids["ambiguous"].add(task_id)
                failure_reasons[task_id] = FLAKY_TESTS
    return {
        "total_instances": len(task_ids),
        "submitted_instances": len(ids["submitted"]),
        "completed_instances": len(ids["completed"]),
        "resolved_instances": len(ids["resolved"]),
        "unresolved_instances": len(ids["unresolved"]),
        "infra_failure_instances": len(ids["error"]),
        "ambiguous_failure_instances": len(ids["ambiguous"]),
        "empty_patch_instances": len(ids["empty_patch"]),
        "error_instances": len(ids["error"]),
        "completed_ids": sorted(ids["completed"]),
        "incomplete_ids": sorted(ids["incomplete"]),
        "empty_patch_ids": sorted(ids["empty_patch"]),
        "submitted_ids": sorted(ids["submitted"]),
        "resolved_ids": sorted(ids["resolved"]),
        "unresolved_ids": sorted(ids["unresolved"]),
        "infra_failure_ids": sorted(ids["error"]),
        "ambiguous_failure_ids": sorted(ids["ambiguous"]),
        "failure_reasons": dict(sorted(failure_reasons.items())),
        "error_ids": sorted(ids["error"]),
        "schema_version": SCHEMA_VERSION,
        "unresolved_reasons": dict(sorted(unresolved_reasons.items())),
        "eval_id": info.id,
        "agent": info.agent,
    }


def _no_prediction(attempt: dict[str, Any]) -> bool:
    agent = attempt["evidence"].get("agent") or {}
    return agent.get("runner") == "patch" and str(agent.get("note", "")).startswith(NO_PREDICTION)


def _empty_patch(attempt: dict[str, Any]) -> bool:
    """Nothing was submitted to grade: the change is empty and no patch was refused."""
    evidence = attempt["evidence"]
    change = (evidence.get("verification") or {}).get("change") or {}
    return change.get("patch_bytes") == 0 and not patch_refused(evidence)

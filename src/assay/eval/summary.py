"""What an evaluation came to, read from the store: pass rate over scored attempts, with
the errors beside them (never folded into the rate), overall and by group.

Each attempt of a task with grading sets is also resolved or not in SWE-bench's sense:
resolved when every fail-to-pass test passed and every pass-to-pass test still passed,
whatever else the suite did; the row names the tests that did not, and why a recorded
patch never got to run (it did not apply). A grading-set test that failed and then passed
on a rerun is flaky: never a pass, so the attempt is not resolved, and never a failure, so
when flaky tests are all that kept it from being resolved it is `indeterminate`, the
tests named."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from assay.eval.stats import pass_at_k_by_task, wilson_interval
from assay.eval.store import EvalInfo, Store

#: Task fields attempts are grouped by in reports.
GROUP_FIELDS = ("language", "difficulty", "template", "task")


def summarize(store: Store, info: EvalInfo) -> dict[str, Any]:
    """The JSON report of one evaluation (`assay report --json`)."""
    attempts = store.attempts(info.id)
    groups: dict[str, dict[str, list[dict[str, Any]]]] = {
        f: defaultdict(list) for f in GROUP_FIELDS
    }
    for attempt in attempts:
        task = attempt["evidence"].get("task") or {}
        for name in GROUP_FIELDS:
            key = attempt["task_id"] if name == "task" else task.get(name)
            groups[name][str(key) if key is not None else "-"].append(attempt)
    return {
        "schema": "assay.eval.report/1",
        "eval_id": info.id,
        "agent": info.agent,
        "created_at": info.created_at,
        "planned": int(info.config.get("planned", len(attempts))),
        **_rates(attempts),
        "pass_at_k": _pass_at_k(attempts),
        "usage": _usage(attempts),
        "groups": {
            name: {key: _rates(members) for key, members in sorted(by.items())}
            for name, by in groups.items()
        },
        "attempts": [_row(a) for a in attempts],
    }


def _rates(attempts: list[dict[str, Any]]) -> dict[str, Any]:
    scored = [a for a in attempts if a["outcome"] == "scored"]
    errors = [a for a in attempts if a["outcome"] == "error"]
    passed = sum(1 for a in scored if (a["score"] or 0.0) >= 1.0)
    by_stage = Counter(f"{a['error_stage']}:{a['error_cause']}" for a in errors)
    return {
        "total": len(attempts),
        "scored": len(scored),
        "passed": passed,
        "pass_rate": passed / len(scored) if scored else None,
        "ci95": _interval(passed, len(scored)),
        "errors": len(errors),
        "errors_by_stage": dict(sorted(by_stage.items())),
    }


def _usage(attempts: list[dict[str, Any]]) -> dict[str, Any]:
    """Tokens and cost the agent reported, summed over every attempt that reported any
    (an errored attempt's spend was spent all the same)."""
    totals: dict[str, Any] = {"attempts_reporting": 0, "tokens_in": 0, "tokens_out": 0}
    cost = None
    for attempt in attempts:
        telemetry = attempt["telemetry"]
        values = {k: telemetry.get(k) for k in ("tokens_in", "tokens_out", "cost_usd")}
        numbers = {
            k: v
            for k, v in values.items()
            if isinstance(v, int | float) and not isinstance(v, bool)
        }
        if not numbers:
            continue
        totals["attempts_reporting"] += 1
        totals["tokens_in"] += int(numbers.get("tokens_in", 0))
        totals["tokens_out"] += int(numbers.get("tokens_out", 0))
        if "cost_usd" in numbers:
            cost = (cost or 0.0) + float(numbers["cost_usd"])
    totals["cost_usd"] = None if cost is None else round(cost, 6)
    return totals


def _interval(passed: int, scored: int) -> list[float] | None:
    interval = wilson_interval(passed, scored)
    return list(interval) if interval else None


def _pass_at_k(attempts: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """pass@k over epochs, from scored attempts only (an error is no sample)."""
    outcomes: dict[str, list[bool]] = defaultdict(list)
    for a in attempts:
        if a["outcome"] == "scored":
            outcomes[a["task_id"]].append((a["score"] or 0.0) >= 1.0)
    return pass_at_k_by_task(outcomes)


def _row(attempt: dict[str, Any]) -> dict[str, Any]:
    evidence = attempt["evidence"]
    verification = evidence.get("verification") or {}
    agent = evidence.get("agent") or {}
    return {
        "task_id": attempt["task_id"],
        "epoch": attempt["epoch"],
        "outcome": attempt["outcome"],
        "status": attempt["status"],
        "score": attempt["score"],
        "tries": attempt["tries"],
        "duration_s": round(attempt["finished_at"] - attempt["started_at"], 3),
        "error": (
            {
                "stage": attempt["error_stage"],
                "cause": attempt["error_cause"],
                "message": attempt["error_message"],
            }
            if attempt["outcome"] == "error"
            else None
        ),
        "agent_exit_code": agent.get("exit_code"),
        "agent_note": agent.get("note") or "",
        "agent_timed_out": agent.get("timed_out"),
        "limit_exceeded": agent.get("limit_exceeded") or None,
        "tampering": verification.get("tampering", []),
        "tests": verification.get("tests", {}),
        "flaky_tests": verification.get("flaky", []),
        **resolution(attempt),
        "telemetry": attempt["telemetry"],
    }


#: The runners whose work is applying a patch: a non-zero exit is every method of applying it
#: (`swebench.patch_apply`: git apply, then patch with fuzz) refusing it.
PATCH_RUNNERS = frozenset({"patch", "oracle"})


#: A grading-set test's outcome when it failed, then passed on a rerun (`verify_stage`).
FLAKY = "flaky"
#: The outcomes that count as a grading-set test passing: as in SWE-bench's grading, an
#: expected failure (pytest's xfail) that failed as marked passes; a skipped test does not.
PASSING = frozenset({"passed", "xfailed"})


def resolution(attempt: dict[str, Any]) -> dict[str, Any]:
    """`resolved` (None for an error, or a task without grading sets), the grading-set
    tests that did not pass with their outcomes (`not_run` when never seen, `flaky`),
    the flaky ones by set, `indeterminate` (not resolved only because of flaky tests) and
    `unresolved_reason`."""
    evidence = attempt["evidence"]
    task = evidence.get("task") or {}
    sets = {name: list(task.get(name) or []) for name in ("fail_to_pass", "pass_to_pass")}
    if attempt["outcome"] != "scored" or not any(sets.values()):
        return {
            "resolved": None,
            "not_passed": {},
            "flaky": {},
            "indeterminate": False,
            "unresolved_reason": "",
        }
    recorded = (evidence.get("verification") or {}).get("tests") or {}
    not_passed = {
        name: {
            tid: outcome
            for tid in ids
            if (outcome := (recorded.get(name) or {}).get(tid, "not_run")) not in PASSING
        }
        for name, ids in sets.items()
    }
    flaky = {
        name: [tid for tid, outcome in tests.items() if outcome == FLAKY]
        for name, tests in not_passed.items()
    }
    definite = {
        name: {tid: outcome for tid, outcome in tests.items() if outcome != FLAKY}
        for name, tests in not_passed.items()
    }
    resolved = not any(not_passed.values())
    refused = patch_refused(evidence)
    indeterminate = not resolved and not refused and not any(definite.values())
    reason = ""
    if indeterminate:
        named = [tid for tests in flaky.values() for tid in tests]
        reason = "flaky: " + _listed(named) + " (failed, then passed on a rerun)"
    elif not resolved:
        reason = refused or _tests_reason(definite)
    return {
        "resolved": resolved,
        "not_passed": not_passed,
        "flaky": flaky,
        "indeterminate": indeterminate,
        "unresolved_reason": reason,
    }


def patch_refused(evidence: dict[str, Any]) -> str:
    """Why a recorded (or the oracle's) patch was not applied, if it was not."""
    agent = evidence.get("agent") or {}
    if agent.get("runner") not in PATCH_RUNNERS or agent.get("exit_code") in (0, None):
        return ""
    said = [line for line in str(agent.get("stderr") or "").splitlines() if line.strip()]
    return "the patch did not apply: " + ("; ".join(said[-3:]) or f"exit {agent['exit_code']}")


def _tests_reason(not_passed: dict[str, dict[str, str]]) -> str:
    parts = [
        f"{name} {tid}: {outcome}"
        for name, tests in not_passed.items()
        for tid, outcome in tests.items()
    ]
    more = f" (and {len(parts) - 5} more)" if len(parts) > 5 else ""
    return "; ".join(parts[:5]) + more


def _listed(tests: list[str]) -> str:
    more = f" (and {len(tests) - 5} more)" if len(tests) > 5 else ""
    return ", ".join(tests[:5]) + more


def render_text(summary: dict[str, Any]) -> str:
    """The terminal table of one evaluation."""
    rate = summary["pass_rate"]
    lines = [
        f"eval {summary['eval_id']}  agent: {summary['agent']}",
        (
            f"pass rate: {_percent(rate)} ({summary['passed']}/{summary['scored']} scored)"
            f"  errors: {summary['errors']}  attempts: {summary['total']}/{summary['planned']}"
        ),
    ]
    for cause, count in summary["errors_by_stage"].items():
        lines.append(f"  error {cause}: {count}")
    usage = summary.get("usage") or {}
    if usage.get("attempts_reporting"):
        cost = usage["cost_usd"]
        lines.append(
            f"agent usage: {usage['tokens_in']} tokens in, {usage['tokens_out']} out"
            + ("" if cost is None else f", ${cost:.4f}")
            + f" ({usage['attempts_reporting']} attempts reporting)"
        )
    by_k = summary.get("pass_at_k") or {}
    if len(by_k) > 1:  # epochs: the chance that some of k attempts passes
        shown = (f"pass@{k} {_percent(v['value'])} ({v['tasks']} tasks)" for k, v in by_k.items())
        lines.append("  ".join(shown))
    lines.append("")
    header = f"{'task':<28} {'epoch':>5}  {'outcome':<8} {'status':<14} {'score':>5}  note"
    lines += [header, "-" * len(header)]
    for row in summary["attempts"]:
        note = ""
        if row["error"]:
            note = f"{row['error']['stage']}/{row['error']['cause']}: {row['error']['message']}"
        elif row["tampering"]:
            note = f"tampering: {'; '.join(row['tampering'][:3])}"
        elif row.get("unresolved_reason"):
            note = f"unresolved: {row['unresolved_reason']}"
        elif row.get("flaky_tests"):
            note = f"flaky: {_listed(row['flaky_tests'])} (failed, then passed on a rerun)"
        elif row.get("limit_exceeded"):
            note = f"limit exceeded: {row['limit_exceeded']}"
        elif row["agent_timed_out"]:
            note = "agent killed at its wall time"
        score = "" if row["score"] is None else f"{row['score']:.1f}"
        lines.append(
            f"{row['task_id'][:28]:<28} {row['epoch']:>5}  {row['outcome']:<8} "
            f"{row['status'] or '-':<14} {score:>5}  {note[:120]}"
        )
    by_language = summary["groups"]["language"]
    if len(by_language) > 1:
        lines.append("")
        for key, group in by_language.items():
            lines.append(
                f"language {key}: {_percent(group['pass_rate'])} ({group['errors']} errors)"
            )
    return "\n".join(lines)


def _percent(rate: float | None) -> str:
    return "n/a" if rate is None else f"{rate * 100:.1f}%"

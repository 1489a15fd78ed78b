"""Benchmarks for `assay eval`: the harness's overhead per attempt against doing the same by
hand (the agent run in a checkout, then `assay verify --base --protect`), and throughput
with --concurrency 1, 2 and 4. Baselines are measured in the same run; every timed run is
checked to have succeeded (exit 0, every attempt VERIFIED), else the benchmark stops.

    python bench/bench_eval.py            # four quick tasks
    python bench/bench_eval.py --quick    # two

Overhead is everything except the agent's and the checks' own time: an attempt's wall
time less the agent's duration and its checks' durations, both as the evidence records
them; by hand, the same for the agent's process and `assay verify`'s report. Most of it
is `assay verify --base --protect`'s own (the base's copy, the sandbox, the environment),
paid by hand too. The harness's share, target at most 0.3 s, is read two ways: eval's
overhead less the by-hand overhead, and the stages around the agent and the verification
(generate, provision, the run stage less the agent's time, score, cleanup).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the test suite's task repository: one source of quick tasks

from tests.eval.tasks import BUGS, GOOD, make_tasks

PYTHON = sys.executable
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # measure what users get
ASSAY = shutil.which("assay", path=os.path.dirname(PYTHON)) or shutil.which("assay") or ""
#: The agent's interpreter, found on PATH in the agent's sandbox as by hand (a venv's
#: interpreter is not shown in the sandbox).
AGENT_PYTHON = "python3"
#: The harness's own share of an attempt (eval's overhead less the same work by hand).
TARGET_S = 0.3

#: An agent that fixes whichever calc task it is given: the fix of every task is GOOD.
FIXER = f"""
import json, os, sys
sys.stdin.read()
with open("calc.py", "w") as f:
    f.write({GOOD!r})
with open(os.environ.get("ASSAY_TELEMETRY", os.devnull), "w") as f:
    json.dump({{"turns": 1}}, f)
"""


def run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """`argv`, which must succeed: a run that fails is an error, never a figure."""
    done = subprocess.run(argv, capture_output=True, text=True, check=False, **kwargs)
    if done.returncode != 0:
        sys.exit(f"benchmark command failed ({done.returncode}): {argv}\n{done.stderr[-2000:]}")
    return done


def checks_seconds(report: dict[str, Any]) -> float:
    return sum(float(c.get("duration_s") or 0.0) for c in report.get("checks", []))


def by_hand(tasks: Path, agent: Path, scratch: Path) -> list[dict[str, float]]:
    """Each task done by hand: a checkout of its base, the agent in it, then
    `assay verify --base BASE --protect`; each timed, each checked."""
    import tomllib

    found = []
    for folder in sorted(p for p in tasks.iterdir() if (p / "task.toml").is_file()):
        spec = tomllib.loads((folder / "task.toml").read_text())
        source = spec["source"]
        origin = folder / (source.get("repo") or source["bundle"])
        work = scratch / f"hand-{spec['id']}"
        started = time.perf_counter()
        run(["git", "clone", "-q", "--no-checkout", str(origin.resolve()), str(work)])
        run(["git", "-C", str(work), "checkout", "-q", source["commit"]])
        agent_started = time.perf_counter()
        checkout_s = agent_started - started
        run(
            [AGENT_PYTHON, str(agent)],
            cwd=work,
            input=(folder / "instruction.md").read_text(),
            env={**os.environ, "ASSAY_TASK_ID": spec["id"]},
        )
        agent_s = time.perf_counter() - agent_started
        done = run(
            [ASSAY, "verify", "--json", "--no-cache", "--kind", "test"]
            + ["--base", source["commit"], "--protect", str(work)]
        )
        wall = time.perf_counter() - started
        report = json.loads(done.stdout)
        if report["status"] != "VERIFIED":
            sys.exit(f"by hand, {spec['id']} is {report['status']}, not VERIFIED")
        checks = checks_seconds(report)
        found.append({"wall": wall, "agent": agent_s, "checks": checks, "checkout": checkout_s})
        shutil.rmtree(work)
    return found


def evaluate(tasks: Path, agent: Path, store: Path, concurrency: int) -> tuple[float, list[dict]]:
    """`assay eval` of every task, its wall time and each attempt's figures from the store."""
    started = time.perf_counter()
    done = run(
        [ASSAY, "eval", str(tasks), "--agent", f"{AGENT_PYTHON} {agent}", "--json"]
        + ["--store", str(store), "--concurrency", str(concurrency)]
    )
    wall = time.perf_counter() - started
    summary = json.loads(done.stdout)
    if summary["errors"] or summary["pass_rate"] != 1.0:
        shown = json.dumps(summary["attempts"], indent=1)[-3000:]
        agents = run([ASSAY, "report", summary["eval_id"], "--store", str(store)]).stdout
        sys.exit(f"eval --concurrency {concurrency} did not pass every task:\n{agents}\n{shown}")
    with sqlite3.connect(store) as db:
        rows = db.execute(
            "SELECT a.task_id, a.finished_at - a.started_at, e.document FROM attempts a "
            "JOIN evidence e USING (eval_id, task_id, epoch) WHERE a.eval_id = ?",
            (summary["eval_id"],),
        ).fetchall()
        stages = db.execute(
            "SELECT stage, avg(seconds) FROM stage_timings WHERE eval_id = ? GROUP BY stage",
            (summary["eval_id"],),
        ).fetchall()
    attempts = []
    for task, seconds, document in rows:
        evidence = json.loads(document)
        if evidence["agent"]["exit_code"] != 0:
            sys.exit(f"eval: the agent failed on {task}: {evidence['agent']}")
        attempts.append(
            {
                "wall": seconds,
                "agent": float(evidence["agent"]["duration_s"]),
                "checks": checks_seconds(evidence["verification"]["report"]),
                **{f"stage_{name}": s for name, s in stages},
            }
        )
    return wall, attempts


def overhead(items: list[dict[str, float]]) -> float:
    return statistics.mean(i["wall"] - i["agent"] - i["checks"] for i in items)


def row(name: str, value: float, baseline: float | None, unit: str, target: str = "") -> None:
    ratio = f"ratio {value / baseline:>6.2f}" if baseline else " " * 12
    base = f"baseline {baseline:>8.3f} {unit:<5}" if baseline is not None else " " * 24
    print(f"{name:<46} {value:>8.3f} {unit:<5} {base} {ratio}   {target}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="two tasks instead of four")
    args = parser.parse_args()
    if not ASSAY:
        sys.exit("assay is not installed next to this interpreter")
    numbers = (1, 3) if args.quick else tuple(BUGS)
    with tempfile.TemporaryDirectory(prefix="bench-eval-") as tmp:
        scratch = Path(tmp)
        # The agent runs as a mapped user in its sandbox: it must be able to read its own
        # script, which a private (0700) temp dir would hide from it.
        scratch.chmod(0o755)
        tasks = make_tasks(scratch, numbers=numbers)
        agent = scratch / "fixer.py"
        agent.write_text(FIXER)
        count = len(numbers)
        print(f"{count} quick tasks (calc, one pytest check each), agent: a fixer script")

        hand = by_hand(tasks, agent, scratch)
        walls = {}
        first: list[dict[str, float]] = []
        for concurrency in (1, 2, 4):
            store = scratch / f"evals-{concurrency}.sqlite"
            walls[concurrency], attempts = evaluate(tasks, agent, store, concurrency)
            if concurrency == 1:
                first = attempts

        hand_wall = statistics.mean(h["wall"] for h in hand)
        row("wall per attempt (eval -c1 / by hand)", walls[1] / count, hand_wall, "s")
        row(
            "in-attempt wall (store) / by hand",
            statistics.mean(a["wall"] for a in first),
            hand_wall,
            "s",
        )
        row(
            "agent's own time per attempt",
            statistics.mean(a["agent"] for a in first),
            statistics.mean(h["agent"] for h in hand),
            "s",
        )
        row(
            "checks' own time per attempt",
            statistics.mean(a["checks"] for a in first),
            statistics.mean(h["checks"] for h in hand),
            "s",
        )
        eval_overhead, hand_overhead = overhead(first), overhead(hand)
        row("overhead per attempt (not agent, not checks)", eval_overhead, hand_overhead, "s")
        extra = eval_overhead - hand_overhead
        verdict = "ok" if extra <= TARGET_S else "OVER TARGET"
        row(
            "harness's share of the overhead",
            extra,
            None,
            "s",
            f"target <= {TARGET_S} s: {verdict}",
        )
        stages = {k[6:]: v for k, v in first[0].items() if k.startswith("stage_")}
        # What the harness adds around the agent and the verification: the nearest by-hand
        # work is the checkout of the base.
        around = sum(stages.get(k, 0.0) for k in ("generate", "provision", "score", "cleanup"))
        around += stages.get("run", 0.0) - statistics.mean(a["agent"] for a in first)
        row(
            "harness stages around agent and verify",
            around,
            statistics.mean(h["checkout"] for h in hand),
            "s",
            f"(baseline: a checkout by hand) target <= {TARGET_S} s: "
            + ("ok" if around <= TARGET_S else "OVER TARGET"),
        )
        print(
            "  stage means (eval -c1): "
            + ", ".join(f"{k} {v:.3f}s" for k, v in sorted(stages.items()))
        )
        for concurrency in (1, 2, 4):
            per_minute = count / walls[concurrency] * 60
            row(
                f"throughput --concurrency {concurrency} (attempts/min)",
                per_minute,
                count / walls[1] * 60,
                "/min",
                f"wall {walls[concurrency]:.1f} s",
            )


if __name__ == "__main__":
    main()

"""Benchmarks for the process runner and the CLI, as ratios against baselines measured in the same run.

    python bench/bench_process.py            # all
    python bench/bench_process.py --quick    # fewer repetitions
    python bench/bench_process.py --run-ratios [--rounds N]
                                             # only `assay run -- sleep 1` / `sleep 1`,
                                             # cold and through a warm `assay server`

Prints one line per figure: the measurement, its baseline, the ratio, the target.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_verify import RunningServer

PYTHON = sys.executable
# Measure what users get: bytecode written once and reused (some shells disable it).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
# Cold figures are cold: a warm server the user runs answers only where a figure says so.
os.environ["ASSAY_NO_SERVER"] = "1"
ASSAY = shutil.which("assay", path=os.path.dirname(PYTHON)) or shutil.which("assay") or ""


def wall(argv: list[str], *, discard_stdout: bool = False, **kwargs: object) -> float:
    """Seconds `argv` took; a run that did not succeed is an error, never a figure.
    `discard_stdout`: for a command whose output is the load (a flood), not kept."""
    stdout = subprocess.DEVNULL if discard_stdout else subprocess.PIPE
    started = time.perf_counter()
    done = subprocess.run(argv, stdout=stdout, stderr=subprocess.PIPE, check=False, **kwargs)  # type: ignore[call-overload]
    took = time.perf_counter() - started
    if done.returncode != 0:
        output = ((done.stdout or b"") + done.stderr)[-2000:].decode(errors="replace")
        sys.exit(f"benchmark command failed ({done.returncode}): {argv}\n{output}")
    return took


def median_wall(argv: list[str], repeat: int) -> float:
    wall(argv)  # warm caches
    return statistics.median(wall(argv) for _ in range(repeat))


def row(name: str, value: float, baseline: float, unit: str, target: str) -> None:
    ratio = value / baseline if baseline else float("inf")
    print(
        f"{name:<44} {value * 1000 if unit == 'ms' else value:>10.1f} {unit:<4} "
        f"baseline {baseline * 1000 if unit == 'ms' else baseline:>9.1f} {unit:<4} "
        f"ratio {ratio:>6.3f}   {target}"
    )


def bench_cold_start(repeat: int) -> None:
    base = median_wall([PYTHON, "-c", "pass"], repeat)
    row(
        "cold start: assay --version",
        median_wall([ASSAY, "--version"], repeat),
        base,
        "ms",
        "target < 80 ms absolute",
    )
    row(
        "cold start: assay run -- true",
        median_wall([ASSAY, "run", "--kind", "build", "--", "true"], repeat),
        base,
        "ms",
        "",
    )


def bench_overhead(repeat: int) -> None:
    direct = median_wall(["true"], repeat)
    row(
        "overhead: assay run -- true",
        median_wall([ASSAY, "run", "--kind", "build", "--", "true"], repeat),
        direct,
        "ms",
        "",
    )
    one_second = [PYTHON, "-c", "import time; time.sleep(1)"]
    direct = median_wall(one_second, max(3, repeat // 4))
    via = median_wall([ASSAY, "run", "--kind", "build", "--", *one_second], max(3, repeat // 4))
    row("overhead: assay run -- (1 s command)", via, direct, "ms", "target ratio <= 1.05")


def checked_wall(argv: list[str], cwd: str, env: dict[str, str] | None = None) -> float:
    """`wall`, but a run that did not succeed is an error, never a figure."""
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    took = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"benchmark command failed ({done.returncode}): {argv}\n{done.stdout[-2000:]!r}")
    return took


def median_checked(argv: list[str], repeat: int, cwd: str) -> float:
    checked_wall(argv, cwd)  # warm caches
    return statistics.median(checked_wall(argv, cwd) for _ in range(repeat))


def bench_sandboxes(repeat: int) -> None:
    """`assay run -- true` per backend, from a small project directory (the fixed cost),
    against `true` run directly; `sleep 1` is `bench_run_ratios`'."""
    with tempfile.TemporaryDirectory() as work:
        Path(work, "README").write_text("a small project\n")
        direct_true = median_checked(["true"], repeat, work)
        for backend in ("none", "local", "bwrap"):
            run = [ASSAY, "run", "--sandbox", backend, "--kind", "build", "--"]
            row(
                f"run -- true, {backend}",
                median_checked([*run, "true"], repeat, work),
                direct_true,
                "ms",
                "",
            )


def bench_run_ratios(rounds: int) -> None:
    """`assay run -- sleep 1` against `sleep 1` for each backend, cold (a process of its
    own) and warm (answered by `assay server`), from a small project directory: rounds
    interleaved (each round runs every variant, in a rotating order, so a change of load
    falls on every variant alike); ratios of medians. Every run must succeed, and every
    warm one must have been answered by the server, or there is no figure."""
    run = [ASSAY, "run", "--kind", "build", "--sandbox"]
    variants: dict[str, tuple[list[str], str]] = {"sleep 1": (["sleep", "1"], "")}
    for backend in ("none", "local", "bwrap"):
        variants[backend] = ([*run, backend, "--", "sleep", "1"], "cold")
        variants[f"{backend}, warm"] = ([*run, backend, "--", "sleep", "1"], "warm")
    names = list(variants)
    times: dict[str, list[float]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory() as work, tempfile.TemporaryDirectory() as state:
        Path(work, "README").write_text("a small project\n")
        cold = {**os.environ, "ASSAY_CACHE_DIR": state}
        with RunningServer(cold, work) as server:
            envs = {"": None, "cold": cold, "warm": server.env}
            for name in names:  # warm caches (and the persisted sandbox probe)
                argv, mode = variants[name]
                checked_wall(argv, work, env=envs[mode])
            for turn in range(rounds):
                for name in names[turn % len(names) :] + names[: turn % len(names)]:
                    argv, mode = variants[name]
                    times[name].append(checked_wall(argv, work, env=envs[mode]))
            served = server.served()
    warm_runs = (rounds + 1) * sum(mode == "warm" for _, mode in variants.values())
    if served != warm_runs:
        sys.exit(f"the server answered {served} of {warm_runs} warm runs: no warm figure")
    baseline = statistics.median(times["sleep 1"])
    for name in names[1:]:
        row(
            f"run -- sleep 1 / sleep 1, {name} ({rounds} rounds)",
            statistics.median(times[name]),
            baseline,
            "ms",
            "target ratio <= 1.03",
        )


KILL_TREE = """
import signal, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print(flush=True); time.sleep(600)"],
    stdout=subprocess.PIPE)
child.stdout.readline()
open(sys.argv[1], "w").write(str(child.pid))
time.sleep(600)
"""


def bench_kill_latency(repeat: int) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from assay import process

    latencies = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            pidfile = Path(tmp) / "pid"
            timeout = 0.5
            started = time.monotonic()
            result = process.run_process([PYTHON, "-c", KILL_TREE, str(pidfile)], timeout=timeout)
            if not (result.timed_out and pidfile.exists()):
                sys.exit(f"kill latency: the tree did not start and run to its deadline: {result}")
            pid = int(pidfile.read_text())
            while Path(f"/proc/{pid}").exists() and b"Z" not in _state(pid):
                time.sleep(0.001)
            latencies.append(time.monotonic() - started - timeout)
    grace = process.TERM_GRACE_SECONDS
    row(
        "kill latency after deadline (tree, TERM-deaf)",
        statistics.median(latencies),
        grace,
        "ms",
        # Every survivor ignores TERM, so the grace is not waited: KILL follows at once.
        "target ratio <= 0.1 (no grace waited)",
    )


def _state(pid: int) -> bytes:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return b"Z"
    return stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3]


def bench_flood() -> None:
    flood = [PYTHON, "-c", "import os\nb = b'x' * (1 << 20)\nfor _ in range(1024): os.write(1, b)"]
    direct = wall(flood, discard_stdout=True)
    via = wall([ASSAY, "run", "--kind", "build", "--", *flood])
    row(
        "flood 1 GiB: assay run vs > /dev/null",
        via,
        direct,
        "s",
        f"assay reads {1024 / via:.0f} MiB/s through its pipes",
    )
    # A fresh parent, so that the peak is this run's alone (assay, or the flood writer).
    measure = (
        "import resource, subprocess, sys\n"
        "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run(
        [PYTHON, "-c", measure, ASSAY, "run", "--kind", "build", "--", *flood],
        capture_output=True,
        text=True,
        check=True,
    )
    peak_kib = int(out.stdout.strip())
    print(
        f"{'flood 1 GiB: peak RSS of assay run':<44} {peak_kib / 1024:>10.1f} MiB  target < 100 MiB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--run-ratios",
        action="store_true",
        help="only `assay run -- sleep 1` / `sleep 1` per backend, interleaved",
    )
    parser.add_argument("--rounds", type=int, default=15, help="rounds for --run-ratios")
    args = parser.parse_args()
    if not ASSAY:
        sys.exit("the `assay` command is not installed: pip install -e . first")
    if args.run_ratios:
        bench_run_ratios(args.rounds)
        return
    repeat = 5 if args.quick else 20
    print(f"assay: {ASSAY}\npython: {PYTHON}\n")
    bench_cold_start(repeat)
    bench_overhead(repeat)
    bench_sandboxes(repeat)
    bench_run_ratios(max(3, repeat // 2))
    bench_kill_latency(3 if args.quick else 5)
    bench_flood()


if __name__ == "__main__":
    main()

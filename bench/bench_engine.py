"""Engine overhead: `run_check` against running the same ~1 s command directly, probe cost
with and without the per-run cache, and a cold probe against an answer from the persistent
probe record (a later run, binary unchanged). Prints figures measured in this run.

    .venv/bin/python bench/bench_engine.py [--repeats N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from assay.check_execution import run_check
from assay.evidence import Check, CheckerId
from assay.probe import PersistentProbes, ProbeCache, ProbeFailure, probe
from assay.verdict import Kind, Verdict

#: The workload: about one second of real CPU work in a fresh interpreter, like a small check.
WORKLOAD = "import time\nend = time.monotonic() + 1.0\nwhile time.monotonic() < end: pass\n"
#: The overhead target from the issue: engine time / direct time.
TARGET_RATIO = 1.05
PROBED_TOOLS = ("python", "go", "cargo", "node", "tsc", "mypy", "ruff")
#: Tools timed against the persistent record: (label, tool, module) — `python -m pytest`
#: through this interpreter, and the ruff binary next to it.
PERSISTED_TOOLS = (("python -m pytest", "pytest", "pytest"), ("ruff", "ruff", None))


def _lookups(cache: ProbeCache, tool: str, env: dict[str, str] | None, count: int) -> None:
    for _ in range(count):
        cache.get(tool, env=env)


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def bench_overhead(repeats: int) -> None:
    with tempfile.TemporaryDirectory() as root, tempfile.TemporaryDirectory() as reports:
        argv = (sys.executable, "-c", WORKLOAD)
        check = Check("busy", Kind.BUILD, argv, tool="python", timeout_s=60)
        probes = ProbeCache(persistent=False)

        def engine() -> None:
            evidence = run_check(check, root=Path(root), probes=probes, report_dir=Path(reports))
            if evidence.verdict is not Verdict.PASS:  # a failed check is no figure (not -O-proof)
                sys.exit(f"the timed check did not pass: {evidence.cause.value}: {evidence.reason}")

        def direct() -> None:
            subprocess.run(
                argv, cwd=root, check=True, capture_output=True, stdin=subprocess.DEVNULL
            )

        first = timed(engine)  # includes the one probe of the run
        pairs = [(timed(direct), timed(engine)) for _ in range(repeats)]
    direct_s = statistics.median(d for d, _ in pairs)
    engine_s = statistics.median(e for _, e in pairs)
    ratio = engine_s / direct_s
    verdict = "ok" if ratio <= TARGET_RATIO else "OVER TARGET"
    print(f"per-check overhead ({repeats} paired runs, medians)")
    print(f"  direct subprocess.run    {direct_s:8.3f} s")
    print(
        f"  run_check (cache warm)   {engine_s:8.3f} s   overhead {1000 * (engine_s - direct_s):+7.1f} ms"
    )
    print(f"  run_check (first, cold)  {first:8.3f} s   includes the probe")
    print(f"  ratio engine/direct      {ratio:8.3f}     target <= {TARGET_RATIO}  [{verdict}]")


def bench_probes(lookups: int) -> None:
    print(f"probe cost (uncached: one version command; cached: mean of {lookups} lookups)")
    cache = ProbeCache(persistent=False)  # the per-run cache alone; the record is timed below
    # The interpreter's own bin directory too, so a virtualenv's mypy and ruff are found.
    env = {"PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])}
    for tool in PROBED_TOOLS:
        try:
            cold = timed(partial(probe, tool, env=env))
            identified = cache.get(tool, env=env)
        except ProbeFailure as failure:
            print(f"  {tool:8s} not identified: {failure}")
            continue
        if not identified.version:
            sys.exit(f"{tool}: probed without a version: {identified!r}")
        warm = timed(partial(_lookups, cache, tool, env, lookups)) / lookups
        print(
            f"  {tool:8s} uncached {1000 * cold:8.1f} ms   cached {1e6 * warm:7.2f} us   x{cold / warm:,.0f}"
        )
    print(
        f"  version commands run by the cache: {cache.commands_run} for {len(PROBED_TOOLS)} tools"
    )


def bench_persisted(repeats: int) -> None:
    """Cold probe (version command) against a new run answered from the persistent record."""
    print(f"persistent probe record (medians of {repeats}; each hit is a new ProbeCache)")
    bin_dir = os.path.dirname(sys.executable)
    env = {"PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", "")])}
    with tempfile.TemporaryDirectory() as directory:
        store = PersistentProbes(directory)
        for label, tool, module in PERSISTED_TOOLS:
            try:
                _bench_persisted_tool(store, label, tool, module, env, repeats)
            except ProbeFailure as failure:
                print(f"  {label:18s} not identified: {failure}")


def _bench_persisted_tool(
    store: PersistentProbes,
    label: str,
    tool: str,
    module: str | None,
    env: dict[str, str],
    repeats: int,
) -> None:
    """Print one tool's cold probe time, persisted-hit time and their ratio."""
    path = sys.executable if module else None

    def cold() -> object:
        return probe(tool, path=path, env=env, module=module)

    cold_s = statistics.median(timed(cold) for _ in range(repeats))
    expected = ProbeCache(store=store).get(tool, path=path, env=env, module=module)  # records it
    runs = [ProbeCache(store=store) for _ in range(repeats)]
    answers: list[CheckerId] = []

    def answer(run: ProbeCache) -> None:
        answers.append(run.get(tool, path=path, env=env, module=module))

    hit_s = statistics.median(timed(partial(answer, run)) for run in runs)
    if not expected.version or any(answer != expected for answer in answers):
        sys.exit(f"{label}: the record answered {answers!r}, the probe {expected!r}")
    hits = sum(run.persisted_hits for run in runs)
    # Recently changed files (the racy window) are probed instead: say so, not a false figure.
    note = "" if hits == repeats else f"   only {hits}/{repeats} answered from the record"
    print(
        f"  {label:18s} cold {1000 * cold_s:8.1f} ms   persisted hit {1000 * hit_s:6.2f} ms"
        f"   x{cold_s / hit_s:,.0f}{note}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--lookups", type=int, default=1000)
    args = parser.parse_args()
    bench_overhead(args.repeats)
    bench_probes(args.lookups)
    bench_persisted(args.repeats)


if __name__ == "__main__":
    main()

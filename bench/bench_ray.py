"""Benchmark of `assay eval --executor ray`: throughput of the same quick tasks on the local
executor, on Ray with one node and on Ray with two nodes (all on this machine), and Ray's
overhead per attempt, from which the README's scaling section is worked out.

    python bench/bench_ray.py             # 4 tasks x 2 epochs, concurrency 2
    python bench/bench_ray.py --quick     # 2 tasks x 1 epoch

Every timed run must succeed (every attempt recorded and VERIFIED with the oracle), else
the benchmark stops. Ray's start-up is measured apart: a cluster is
started once and serves many evaluations, so it is not an attempt's cost. Overhead per
attempt = (Ray's wall time - the local executor's) x concurrency / attempts (each of the
concurrency slots runs attempts / concurrency of them), at the same concurrency
and the same CPUs: what shipping the task, the Ray task itself and the worker's set-up add.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the test suite's task repository: one source of quick tasks

from tests.eval.tasks import make_tasks


def _eval(tasks: Path, store: Path, epochs: int, concurrency: int, executor: str) -> float:
    from assay.eval import run_eval

    started = time.monotonic()
    result = run_eval(
        [tasks], "oracle", store=store, epochs=epochs, concurrency=concurrency, executor=executor
    )
    took = time.monotonic() - started
    bad = [r for r in result.records if r.status != "VERIFIED"]
    if bad or result.summary["errors"]:
        sys.exit(f"{executor}: not every attempt VERIFIED: {[r.error for r in bad]}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    import ray
    import ray.cluster_utils

    numbers = (1, 2) if args.quick else (1, 2, 3, 4)
    epochs = 1 if args.quick else 2
    concurrency = 2
    with tempfile.TemporaryDirectory(prefix="bench-ray-") as scratch:
        root = Path(scratch)
        tasks = make_tasks(root, numbers=numbers)
        attempts = len(numbers) * epochs
        figures: dict[str, Any] = {}
        figures["local"] = _eval(tasks, root / "local.sqlite", epochs, concurrency, "local")

        started = time.monotonic()
        ray.init(num_cpus=concurrency, include_dashboard=False, log_to_driver=False)
        figures["ray start"] = time.monotonic() - started
        try:
            figures["ray, 1 node"] = _eval(tasks, root / "one.sqlite", epochs, concurrency, "ray")
        finally:
            ray.shutdown()

        # Two nodes of one CPU each: the same CPUs as above, spread over two raylets.
        cluster = ray.cluster_utils.Cluster(
            initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False}
        )
        cluster.add_node(num_cpus=1)
        ray.init(address=cluster.address, log_to_driver=False)
        try:
            figures["ray, 2 nodes"] = _eval(tasks, root / "two.sqlite", epochs, concurrency, "ray")
        finally:
            ray.shutdown()
            cluster.shutdown()

    local = figures["local"]
    print(
        f"{attempts} attempts (oracle, {len(numbers)} tasks x {epochs} epochs), "
        f"concurrency {concurrency}"
    )
    print(f"  Ray start-up (once per cluster): {figures['ray start']:.1f} s")
    for name in ("local", "ray, 1 node", "ray, 2 nodes"):
        took = figures[name]
        print(
            f"  {name:<13} {took:6.1f} s  {attempts / took * 60:5.1f} attempts/min  "
            f"x{took / local:.2f} of local  overhead/attempt "
            f"{(took - local) / attempts * concurrency:+.2f} s"
        )


if __name__ == "__main__":
    main()

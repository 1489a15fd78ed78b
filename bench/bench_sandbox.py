"""Sandbox benchmarks: workspace provisioning, bubblewrap overhead, verdict-cache lookups.

Run: `.venv/bin/python bench/bench_sandbox.py`. Every ratio is measured in the same run.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from assay.cache import VerdictCache, cache_key, workspace_digest
from assay.evidence import CheckerId
from assay.process import run_process
from assay.sandbox import BwrapSandbox
from assay.sandbox.provision import copy_tree

PYTHON = sys.executable


def make_tree(root: Path, files: int, per_dir: int = 100) -> None:
    for i in range(files):
        d = root / f"pkg{i // per_dir:03d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"mod{i:05d}.py").write_text(f"VALUE = {i}\n" + "# padding\n" * 40)


def best_of(runs: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_provision(scratch: Path) -> None:
    src = scratch / "src10k"
    make_tree(src, 10_000)
    counter = iter(range(1000))

    def assay_copy() -> None:
        copy_tree(src, scratch / f"a{next(counter)}")

    def plain_copy() -> None:
        shutil.copytree(src, scratch / f"p{next(counter)}", symlinks=True)

    method = copy_tree(src, scratch / "warm")
    ours = best_of(3, assay_copy)
    plain = best_of(3, plain_copy)
    print(f"provision 10,000 files: assay ({method}) {ours:.3f}s  shutil.copytree {plain:.3f}s"
          f"  ratio {ours / plain:.2f}")


def bench_bwrap(scratch: Path) -> None:
    src = scratch / "small"
    make_tree(src, 10)
    sandbox = BwrapSandbox()
    print(f"backend: {sandbox.describe()}")
    with sandbox.workspace(src) as ws:
        run = sandbox.runner(ws)
        cwd = str(ws.path)
        for label, argv, runs in (
            ("trivial command (true)", ["true"], 10),
            ("~1 s command", [PYTHON, "-c", "import time; time.sleep(1.0)"], 3),
        ):
            bare = best_of(runs, lambda a=argv: run_process(a, cwd=cwd, timeout=30))
            boxed = best_of(runs, lambda a=argv: run(a, cwd=cwd, timeout=30))
            print(f"bwrap {label}: sandboxed {boxed * 1000:.1f}ms  bare {bare * 1000:.1f}ms"
                  f"  ratio {boxed / bare:.3f}")


def bench_cache(scratch: Path) -> None:
    src = scratch / "src1k"
    make_tree(src, 1_000)
    cache = VerdictCache(scratch / "cache")
    checkers = [CheckerId("pytest", "8.2.0")]
    plan = [{"name": "pytest", "argv": ["pytest"]}]
    cache.put(cache_key(workspace_digest(src), plan, checkers, "bwrap"), {"status": "VERIFIED"})

    def lookup() -> None:
        assert cache.get(cache_key(workspace_digest(src), plan, checkers, "bwrap")) is not None

    hit = best_of(5, lookup)
    check = best_of(2, lambda: run_process([PYTHON, "-c", "import time; time.sleep(1.0)"], timeout=30))
    print(f"cache hit (hash 1,000 files + get): {hit * 1000:.1f}ms  ~1 s check {check:.3f}s"
          f"  ratio {hit / check:.4f}")


def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="assay-bench-", dir=os.environ.get("TMPDIR")))
    try:
        bench_provision(scratch)
        bench_bwrap(scratch)
        bench_cache(scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Discovery + planning time on a generated 50,000-file monorepo, against walking the same tree.

    .venv/bin/python bench/bench_discovery.py [--files N] [--runs R]

Discovery reads known config paths at the root and at workspace package roots;
it never walks the tree. The baseline is `os.walk` over the same tree (what a
walking discoverer would pay at minimum), measured in the same run, so the
ratio is independent of the machine. Target: under 200 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from assay.discovery import discover
from assay.plan import plan

TARGET_MS = 200.0


def generate(root: str, total_files: int, packages: int = 250) -> int:
    """A node + python monorepo: workspace packages, each with nested source directories."""
    written = 0

    def put(rel: str, text: str = "") -> None:
        nonlocal written
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as handle:
            handle.write(text)
        written += 1

    put(
        "package.json",
        json.dumps(
            {
                "private": True,
                "workspaces": ["packages/*", "apps/*"],
                "scripts": {"lint": "eslint .", "typecheck": "tsc -b --noEmit"},
            }
        ),
    )
    put("pnpm-lock.yaml")
    put("tsconfig.json", '{"files": []}')
    put("pyproject.toml", "[tool.pytest.ini_options]\ntestpaths=['tools']\n[tool.ruff]\n")
    put("Makefile", "test:\n\tpnpm -r test\nlint:\n\tpnpm lint\n")
    put(".github/workflows/ci.yml", "jobs:\n  t:\n    steps:\n      - run: pnpm -r test\n")
    put("README.md", "```sh\npnpm test\n```\n")
    per_package = max((total_files - written) // packages, 1)
    for index in range(packages):
        group = "apps" if index % 5 == 0 else "packages"
        base = f"{group}/pkg{index:03d}"
        put(
            f"{base}/package.json",
            json.dumps({"name": f"pkg{index}", "scripts": {"test": "vitest run"}}),
        )
        for n in range(per_package - 1):
            depth = f"src/d{n % 7}/e{n % 3}"
            put(f"{base}/{depth}/file{n}.ts", "export const x = 1;\n")
    return written


def measure(fn: Callable[[], None], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="assay-bench-") as root:
        started = time.perf_counter()
        count = generate(root, args.files)
        print(f"generated {count} files in {time.perf_counter() - started:.1f}s")

        def discover_and_plan() -> None:
            result = plan(discover(root))
            if not result.checks:  # an empty plan is no figure (not an assert: -O drops it)
                sys.exit("the benchmark repository planned nothing")

        def walk() -> None:
            seen = sum(len(files) for _, _, files in os.walk(root))
            if seen != count:
                sys.exit(f"os.walk saw {seen} files of the {count} generated")

        discover_and_plan()  # warm imports and the page cache alike for both
        walk()
        ours = measure(discover_and_plan, args.runs)
        baseline = measure(walk, args.runs)
        checks = plan(discover(root)).checks
    print(f"discover+plan: {ours:.1f} ms (median of {args.runs}; target < {TARGET_MS:.0f} ms)")
    print(
        f"os.walk baseline: {baseline:.1f} ms; ratio discover+plan / walk = {ours / baseline:.3f}"
    )
    print("planned: " + ", ".join(f"{c.name}={' '.join(c.argv)}" for c in checks))
    return 0 if ours < TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())

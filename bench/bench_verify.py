"""`assay verify` end to end against the same commands run by hand, and a cache hit against a miss.

Run: `.venv/bin/python bench/bench_verify.py [--repeat N]`. Every ratio is measured in the same run.

- by hand: the commands of `assay plan --json`, run one after the other in the repository,
  unsandboxed, with no probing, parsing or reporting: the floor assay is compared with;
  and the same commands in the plan's grouping (stages in order, a parallel stage's checks
  started together), as assay runs them: the floor for the side-by-side speed-up too.
- assay: `assay verify --no-cache` (default sandbox: bubblewrap), the whole CLI process; and
  the same answered by a running `assay server` (checked to be), which has assay loaded.
- cache hit: `assay verify` on an unchanged tree right after a run that stored the verdict;
  and by tree size: the small repository's hit against the same with 5,000 files.

Two repositories: a small one (compileall, ruff, 48 quick tests: fixed costs dominate) and a
typed one (mypy too, with its cache off so both sides start cold, and ~1 s of test work:
where running the independent checks side by side pays).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self

VENV_BIN = Path(sys.executable).parent
ASSAY = str(VENV_BIN / "assay")


#: Test work per test in the typed repository: enough that the suite takes about a second.
WORK = "sum(i * i for i in range(150_000))"


def make_repo(
    root: Path, modules: int = 12, tests_per_module: int = 4, *, typed: bool = False
) -> None:
    """A Python project with pytest and ruff configured: `modules` x `tests_per_module` tests;
    `typed` adds mypy (cache off) and some real work in every test."""
    (root / "tests").mkdir(parents=True)
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    mypy = '\n[tool.mypy]\ncache_dir = "/dev/null"\nstrict = true\n' if typed else ""
    (root / "pyproject.toml").write_text(
        '[project]\nname = "bench"\nversion = "0.1.0"\n\n'
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n\n[tool.ruff]\nline-length = 100\n'
        + mypy
    )
    signature = "(x: int) -> int" if typed else "(x)"
    test_signature = "() -> None" if typed else "()"
    work = f"\n    {WORK}" if typed else ""
    for m in range(modules):
        (root / "pkg" / f"mod{m:02d}.py").write_text(
            "\n\n".join(f"def f{i}{signature}:\n    return x * {i} + {m}" for i in range(20)) + "\n"
        )
        tests = "\n\n\n".join(
            f"def test_f{i}{test_signature}:{work}\n    assert mod{m:02d}.f{i}(2) == {2 * i + m}"
            for i in range(tests_per_module)
        )
        (root / "tests" / f"test_mod{m:02d}.py").write_text(
            f"from pkg import mod{m:02d}\n\n\n{tests}\n"
        )


def env_for(cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["ASSAY_CACHE_DIR"] = str(cache)
    # Measure what users get: bytecode written once and reused (some shells disable it).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    # Cold figures are cold: a warm `assay server` answers only where a figure says so.
    env["ASSAY_NO_SERVER"] = "1"
    return env


class RunningServer:
    """An `assay server` for the benchmark's warm figures: `env` is the environment its
    clients use (the cold one without `ASSAY_NO_SERVER`); `served()` says how many runs it
    answered, so that a warm figure is one the server really gave."""

    def __init__(self, cold_env: dict[str, str], cwd: Path | str) -> None:
        self.env = {name: value for name, value in cold_env.items() if name != "ASSAY_NO_SERVER"}
        self.cwd = cwd

    def __enter__(self) -> Self:
        subprocess.run([ASSAY, "server", "start"], cwd=self.cwd, env=self.env, check=True,
                       capture_output=True)  # fmt: skip
        return self

    def __exit__(self, *exc: object) -> None:
        subprocess.run([ASSAY, "server", "stop"], cwd=self.cwd, env=self.env, check=False,
                       capture_output=True)  # fmt: skip

    def served(self) -> int:
        done = subprocess.run([ASSAY, "server", "status"], cwd=self.cwd, env=self.env,
                              capture_output=True, text=True, check=True)  # fmt: skip
        return int(done.stdout.split(" served")[0].rsplit(" ", 1)[-1])


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median_of(repeat: int, fn: Callable[[], object]) -> float:
    return statistics.median(timed(fn) for _ in range(repeat))


def medians_interleaved(repeat: int, *fns: Callable[[], object]) -> list[float]:
    """Each of `fns`' median time, the runs taken in turn (`fns[0]`, `fns[1]`, ..., again)."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, took in zip(fns, times, strict=True):
            took.append(timed(fn))
    return [statistics.median(took) for took in times]


def measure(name: str, repo: Path, env: dict[str, str], repeat: int) -> None:
    """Print by-hand, assay (bwrap and none) and cache-hit figures for one repository."""
    plan = json.loads(
        subprocess.run(
            [ASSAY, "plan", "--json", str(repo)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    commands = [c["argv"] for c in plan["checks"]]
    argv_of = {c["name"]: c["argv"] for c in plan["checks"]}

    def by_hand() -> None:
        for argv in commands:
            done = subprocess.run(argv, cwd=repo, env=env, capture_output=True, check=False)
            if done.returncode != 0:
                raise SystemExit(
                    f"{' '.join(argv)} failed by hand:\n{done.stdout.decode()}{done.stderr.decode()}"
                )
        shutil.rmtree(repo / ".pytest_cache", ignore_errors=True)

    def by_hand_grouped() -> None:
        for stage in plan["stages"]:
            names = stage["checks"]
            batches = [names] if stage["parallel"] else [[n] for n in names]
            for batch in batches:
                running = [
                    subprocess.Popen(
                        argv_of[n],
                        cwd=repo,
                        env=env,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT,
                    )
                    for n in batch
                ]
                for check, process in zip(batch, running, strict=True):
                    output, _ = process.communicate()
                    if process.returncode != 0:
                        raise SystemExit(f"{check} failed by hand:\n{output.decode()}")
        shutil.rmtree(repo / ".pytest_cache", ignore_errors=True)

    def verify(*extra: str, env: dict[str, str] = env) -> dict[str, Any]:
        done = subprocess.run(
            [ASSAY, "verify", "--json", str(repo), *extra],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        report = json.loads(done.stdout)
        if report["status"] != "VERIFIED":
            raise SystemExit(f"assay verify: {report['status']}: {report['note']}")
        return report

    first = verify("--no-cache")  # warm-up, and the test count
    tests = sum((c.get("tests") or {}).get("executed", 0) for c in first["checks"])
    by_hand()

    with RunningServer(env, repo) as server:
        verify("--no-cache", env=server.env)  # the server's own first run loads what it needs
        # Interleaved, one of each in turn: the machine's speed drifts over a run, and a
        # ratio of two medians taken minutes apart measured the drift too.
        hand_s, grouped_s, assay_s, assay_none_s, warm_s = medians_interleaved(
            repeat,
            by_hand,
            by_hand_grouped,
            lambda: verify("--no-cache"),
            lambda: verify("--no-cache", "--sandbox", "none"),
            lambda: verify("--no-cache", env=server.env),
        )
        if server.served() != repeat + 1:
            raise SystemExit(f"the server answered {server.served()} of {repeat + 1} warm runs")
    verify()  # stores the verdict
    hit_s = median_of(repeat, verify)
    assert "cached" in verify().get("extra", {}), "the second run was not a cache hit"

    names = ", ".join(c["name"] for c in plan["checks"])
    print(f"{name}: {len(commands)} planned checks ({names}), {tests} tests")
    print(f"  {'by hand, sequential':<35}{hand_s * 1000:8.0f} ms")
    grouping = "by hand, the plan's grouping"
    print(f"  {grouping:<35}{grouped_s * 1000:8.0f} ms")
    for label, took in (
        ("bwrap", assay_s),
        ("--sandbox none", assay_none_s),
        ("bwrap, assay server", warm_s),
    ):
        print(
            f"  {f'assay verify ({label})':<35}{took * 1000:8.0f} ms   "
            f"ratio {took / hand_s:5.2f}x by hand, {took / grouped_s:5.2f}x grouped"
        )
    print(
        f"  {'assay verify, cache hit':<35}{hit_s * 1000:8.0f} ms   ratio {hit_s / assay_s:5.3f}x uncached"
    )


def cache_hit(repo: Path, env: dict[str, str]) -> Callable[[], object]:
    """`assay verify` of `repo` made a cache hit (checked), to be timed."""

    def verify() -> dict[str, Any]:
        done = subprocess.run(
            [ASSAY, "verify", "--json", str(repo)],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        return json.loads(done.stdout)

    first = verify()
    if first["status"] != "VERIFIED":
        raise SystemExit(f"assay verify {repo.name}: {first['status']}: {first['note']}")
    time.sleep(3.5)  # files written just now are hashed again, not trusted by their stat
    verify()  # remembers their digests
    if "cached" not in verify().get("extra", {}):
        raise SystemExit(f"assay verify {repo.name}: the run after a stored one was not a hit")
    return verify


def cache_hit_s(repo: Path, env: dict[str, str], repeat: int) -> float:
    """The median time of `assay verify` on `repo` answered from the cache (checked)."""
    return median_of(repeat, cache_hit(repo, env))


def measure_cache_hit_by_size(scratch: Path, env: dict[str, str], repeat: int) -> None:
    """A cache hit on the small repository and on the same with 5,000 more files: a hit
    should cost the same whatever the tree's size (it is answered before any workspace is
    made; the tree is keyed by a stat per file). Baseline: `python -c pass`. Then the small
    repository's hit with `python3` a pyenv shim (as on many developers' machines)."""
    small = scratch / "hit-small"
    make_repo(small)
    large = scratch / "hit-5000"
    make_repo(large)
    for i in range(5000 - len(list(large.rglob("*")))):
        data = large / "assets" / f"d{i // 500:02d}" / f"f{i:05d}.txt"
        data.parent.mkdir(parents=True, exist_ok=True)
        data.write_text(f"asset {i}\n")
    flat = scratch / "hit-5000-flat"  # the same count in one directory
    make_repo(flat)
    for i in range(5000 - len(list(flat.rglob("*")))):
        (flat / "assets").mkdir(exist_ok=True)
        (flat / "assets" / f"f{i:05d}.txt").write_text(f"asset {i}\n")
    python_s = median_of(
        repeat, lambda: subprocess.run([sys.executable, "-c", "pass"], check=True, env=env)
    )
    # In turn, one of each: the machine's speed drifts, and the trees' ratios are the figure.
    small_s, large_s, flat_s = medians_interleaved(
        repeat, *(cache_hit(repo, env) for repo in (small, large, flat))
    )

    def files(repo: Path) -> int:
        return sum(1 for p in repo.rglob("*") if p.is_file())

    print(f"cache hit by tree size (python -c pass: {python_s * 1000:.0f} ms)")
    print(
        f"  {files(small):5d} files   {small_s * 1000:8.0f} ms"
        f"   ratio {small_s / python_s:5.2f}x python -c pass"
    )
    for label, repo, took in (("in 10 dirs", large, large_s), ("in one dir", flat, flat_s)):
        print(
            f"  {files(repo):5d} files {label}  {took * 1000:8.0f} ms   ratio"
            f" {took / python_s:5.2f}x python -c pass, {took / small_s:5.2f}x the small tree's hit"
        )
    measure_warm_hits(env, repeat, small, large)
    shimmed = scratch / "hit-shim"
    make_repo(shimmed)
    shim_env = with_pyenv_shim(scratch / "pyenv", env)
    shim_s = cache_hit_s(shimmed, shim_env, repeat)
    done = subprocess.run(
        [ASSAY, "verify", "--json", str(shimmed)], env=shim_env, capture_output=True, check=False
    )
    if not any(
        "/versions/3.99.0/" in c["checker"]["path"] for c in json.loads(done.stdout)["checks"]
    ):
        raise SystemExit("the shimmed repository's checks did not run through the pyenv shim")
    print(
        f"  python3 a pyenv shim  {shim_s * 1000:8.0f} ms   ratio {shim_s / small_s:5.2f}x"
        " the small tree's hit without one"
    )


def measure_warm_hits(env: dict[str, str], repeat: int, small: Path, large: Path) -> None:
    """The same hits answered by `assay server` (checked to have been: every warm run must
    be one the server served)."""
    with RunningServer(env, small) as server:
        small_s, large_s = medians_interleaved(
            repeat, cache_hit(small, server.env), cache_hit(large, server.env)
        )
        served = server.served()
    expected = 2 * (repeat + 3)  # each: `cache_hit`'s three checked runs, `repeat` timed
    if served != expected:
        raise SystemExit(f"the server answered {served} of {expected} warm runs")
    print(
        f"  via assay server: small {small_s * 1000:.0f} ms, 5,000 files {large_s * 1000:.0f} ms"
        f"   ratio {large_s / small_s:5.2f}x"
    )


#: pyenv's shim as `pyenv rehash` writes it, and a `pyenv exec` choosing as pyenv does.
PYENV_SHIM = """#!/usr/bin/env bash
set -e
program="${{0##*/}}"
export PYENV_ROOT="{root}"
exec "{root}/libexec/pyenv" exec "$program" "$@"
"""
PYENV_EXEC = """#!/bin/sh
shift
program="$1"; shift
dir="$PWD"
while [ -n "$dir" ] && [ ! -f "$dir/.python-version" ]; do dir="${{dir%/*}}"; done
if [ -f "$dir/.python-version" ]; then file="$dir/.python-version"; else file="{root}/version"; fi
exec "{root}/versions/$(head -n 1 "$file")/bin/$program" "$@"
"""


def with_pyenv_shim(root: Path, env: dict[str, str]) -> dict[str, str]:
    """`env` with a pyenv root's shims first on PATH; its one version is this interpreter's
    environment, chosen by the global version file."""
    for name in ("shims", "libexec", "versions"):
        (root / name).mkdir(parents=True)
    (root / "versions" / "3.99.0").symlink_to(Path(sys.prefix))
    (root / "version").write_text("3.99.0\n")
    for path, text in (
        (root / "shims" / "python3", PYENV_SHIM),
        (root / "libexec" / "pyenv", PYENV_EXEC),
    ):
        path.write_text(text.format(root=root))
        path.chmod(0o755)
    time.sleep(2.5)  # a binary changed just now is not trusted by its stat
    return {**env, "PATH": f"{root / 'shims'}{os.pathsep}{env['PATH']}", "PYENV_ROOT": str(root)}


#: Repository -> Any measurement, on each of the two repositories in a fresh scratch.
Measure = Callable[[str, Path, dict[str, str], int], None]


def run_on_repos(
    description: str, measure_each: Measure, then: Callable[..., None] | None = None
) -> int:
    """Parse `--repeat`, build the small and the typed repository in a scratch directory
    sharing one assay cache, measure each, then run `then(scratch, env, repeat)`."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement (median)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="assay-bench-"))
    try:
        env = env_for(scratch / "cache")
        for name, typed in (("small", False), ("typed", True)):
            repo = scratch / name
            make_repo(repo, typed=typed)
            measure_each(name, repo, env, args.repeat)
        if then is not None:
            then(scratch, env, args.repeat)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


def main() -> int:
    return run_on_repos(__doc__.splitlines()[0], measure, then=measure_cache_hit_by_size)


if __name__ == "__main__":
    raise SystemExit(main())

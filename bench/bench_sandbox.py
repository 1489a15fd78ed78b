"""Sandbox benchmarks: workspace provisioning, bubblewrap overhead, a copied workspace's
first command (its sandbox built ahead) against its second, a run's start after an idle
spell (its sandbox built ahead, its cgroup made ahead, its cgroup join primed, neither),
verdict-cache lookups.

Run: `.venv/bin/python bench/bench_sandbox.py [--join-only]`. Every ratio is measured in
the same run.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

from assay import source_layout
from assay.cache import VerdictCache, cache_key, workspace_digest
from assay.evidence import CheckerId
from assay.process import ProcessResult, run_process
from assay.sandbox import BwrapOptions, BwrapSandbox, cgroup
from assay.sandbox.provision import WORKSPACE_DIR_ENV, provision_copy, remove_tree

PYTHON = sys.executable


def make_tree(root: Path, files: int, per_dir: int = 100) -> None:
    for i in range(files):
        d = root / f"pkg{i // per_dir:03d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"mod{i:05d}.py").write_text(f"VALUE = {i}\n" + "# padding\n" * 40)


def best_of(
    runs: int, fn: Callable[[], object], setup: Callable[[], object] | None = None
) -> float:
    times = []
    for _ in range(runs):
        if setup is not None:
            setup()  # untimed
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def make_venv(root: Path, files: int, per_dir: int = 100) -> None:
    """A `.venv`-shaped directory of `files` small modules (an installed environment)."""
    site = root / ".venv" / "lib" / "python3.11" / "site-packages"
    for i in range(files):
        d = site / f"dist{i // per_dir:03d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"m{i:05d}.py").write_text(f"V = {i}\n" + "# installed\n" * 40)
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")


def bench_provision(scratch: Path) -> None:
    """10,000 source files plus a 5,000-file `.venv`: assay's workspace against `shutil.copytree`."""
    src = scratch / "project"
    make_tree(src, 10_000)
    make_venv(src, 5_000)
    made: list[Path] = []
    counter = iter(range(1000))

    def assay_workspace() -> None:
        path, _, record = provision_copy(
            src, commit=None, backend="bench", run_id=str(next(counter))
        )
        made.append(path)
        where.append(f"{record.location} ({record.method}, linked {', '.join(record.linked)})")

    def plain_copy() -> None:
        copy = scratch / f"p{next(counter)}"
        shutil.copytree(src, copy, symlinks=True)
        made.append(copy)

    where: list[str] = []
    # Flush the previous run's writes first, so no run pays for the one before it.
    ours = best_of(3, assay_workspace, setup=os.sync)
    plain = best_of(2, plain_copy, setup=os.sync)
    with _workspace_dir(scratch / "disk"):
        on_disk = best_of(2, assay_workspace, setup=os.sync)
    for path in made:
        _same_sources(src, path)
        remove_tree(path)
    print(f"provision 10,000 files + 5,000-file .venv: shutil.copytree {plain:.3f}s")
    print(f"  assay, default location {where[0]}: {ours:.3f}s  ratio {ours / plain:.3f}")
    print(f"  assay, same disk as copytree: {on_disk:.3f}s  ratio {on_disk / plain:.3f}")


def _same_sources(src: Path, copy: Path) -> None:
    """A copy that lacks the tree's source files timed nothing real: stop (checked untimed)."""
    wanted = sorted(p.relative_to(src) for p in src.glob("pkg*/*.py"))
    got = sorted(p.relative_to(copy) for p in copy.glob("pkg*/*.py"))
    if got != wanted or not (copy / ".venv" / "pyvenv.cfg").exists():
        sys.exit(f"{copy}: {len(got)} of {len(wanted)} source files, or no .venv: not a copy")


@contextlib.contextmanager
def _workspace_dir(path: Path) -> Iterator[None]:
    """Make workspaces in `path` for the duration (as `$ASSAY_WORKSPACE_DIR` would)."""
    path.mkdir(exist_ok=True)
    old = os.environ.get(WORKSPACE_DIR_ENV)
    os.environ[WORKSPACE_DIR_ENV] = str(path)
    try:
        yield
    finally:
        if old is None:
            del os.environ[WORKSPACE_DIR_ENV]
        else:
            os.environ[WORKSPACE_DIR_ENV] = old


@contextlib.contextmanager
def _copy_everything_to_disk(scratch: Path) -> Iterator[None]:
    """The previous provisioning: every directory copied, into the system temp dir."""
    saved = (source_layout.CACHE_DIRS, source_layout.ENV_DIRS, source_layout.BUILD_OUTPUT_DIRS)
    source_layout.CACHE_DIRS = source_layout.ENV_DIRS = source_layout.BUILD_OUTPUT_DIRS = (
        frozenset()
    )
    try:
        with _workspace_dir(scratch):
            yield
    finally:
        source_layout.CACHE_DIRS, source_layout.ENV_DIRS, source_layout.BUILD_OUTPUT_DIRS = saved


def bench_verify(scratch: Path) -> None:
    """`assay verify --kind build` of this repository (it has a .venv): old copy rule against the new."""
    from assay.pipeline import VerifyOptions, verify
    from assay.verdict import Kind

    repo = Path(__file__).resolve().parents[1]
    if not (repo / ".venv").is_dir():
        print("verify: skipped (this repository has no .venv)")
        return
    options = VerifyOptions(kinds=frozenset({Kind.BUILD}), use_cache=False)
    statuses: list[str] = []

    def verified() -> None:
        report = verify(repo, options)
        failed = [c.check.name for c in report.checks if not c.passed]
        if not report.checks or failed:  # a check that did not pass timed nothing real
            sys.exit(f"verify --kind build: {report.status.value}, not passed: {failed}")
        statuses.append(report.status.value)

    with _copy_everything_to_disk(scratch / "old"):
        before = best_of(1, verified)
    after = best_of(3, verified)
    print(
        f"assay verify --kind build {repo}: copy everything to disk {before:.2f}s  "
        f"now {after:.2f}s  ratio {after / before:.3f}  (statuses {sorted(set(statuses))})"
    )


def bench_bwrap(scratch: Path) -> None:
    src = scratch / "small"
    make_tree(src, 10)
    # The interpreter the ~1 s command runs lives outside the system directories (a venv).
    sandbox = BwrapSandbox(BwrapOptions(toolchain_paths=(PYTHON,)))
    print(f"backend: {sandbox.describe()}")
    with sandbox.workspace(src) as ws:
        run = sandbox.runner(ws)
        cwd = str(ws.path)
        for label, argv, runs in (
            ("trivial command (true)", ["true"], 10),
            ("~1 s command", [PYTHON, "-c", "import time; time.sleep(1.0)"], 3),
        ):
            bare = best_of(runs, partial(_ran, run_process, argv, cwd=cwd))
            boxed = best_of(runs, partial(_ran, run, argv, cwd=cwd))
            print(
                f"bwrap {label}: sandboxed {boxed * 1000:.1f}ms  bare {bare * 1000:.1f}ms"
                f"  ratio {boxed / bare:.3f}"
            )


def bench_first_command(scratch: Path, rounds: int = 12, busy_s: float = 0.03) -> None:
    """A copied workspace's first command (`true`), as a verify's test check is: in the
    sandbox built while the workspace was made (`BwrapSandbox._stand_by_for_the_first`),
    `busy_s` later (assay identifies the tools meanwhile), against the same command
    started afresh in the same workspace right after."""
    from assay.sandbox import standby

    src = scratch / "first"
    make_tree(src, 10)
    sandbox = BwrapSandbox(BwrapOptions(toolchain_paths=(PYTHON,)))
    ahead: list[float] = []
    afresh: list[float] = []
    for _ in range(rounds):
        with sandbox.workspace(src) as ws:
            if standby.STANDBYS.waiting(ws.run_id) is None:
                sys.exit("first command: no sandbox was built ahead")
            time.sleep(busy_s)
            for took in (ahead, afresh):
                started = time.perf_counter()
                _ran(sandbox.runner(ws), ["true"], cwd=str(ws.path))
                took.append(time.perf_counter() - started)
            if standby.STANDBYS.waiting(ws.run_id) is not None:
                sys.exit("first command: the first command did not take the sandbox built ahead")
    built, fresh = statistics.median(ahead), statistics.median(afresh)
    print(
        f"a copied workspace's first `true`, {busy_s * 1000:.0f} ms after it was made: "
        f"in the sandbox built ahead {built * 1000:.1f}ms  started afresh {fresh * 1000:.1f}ms"
        f"  ratio {built / fresh:.3f}"
    )


def bench_cgroup_join(scratch: Path, rounds: int = 12, idle_s: float = 0.3) -> None:
    """`assay run --sandbox bwrap -- true` in this process (as a warm server's worker runs
    it) after the machine was idle, as between an agent's calls: with its sandbox built
    during the idle spell from the last run's (`bwrap.stand_by`, `assay.sandbox.standby`);
    with the run's cgroup made then, as a waiting worker makes it (`bwrap.start_ahead`);
    with neither, the joins into the cgroup primed
    (`RunCgroup.prime`); and with neither, unprimed."""
    from assay import cli_run
    from assay.sandbox import bwrap

    src = scratch / "join"
    make_tree(src, 10)
    parsed = cli_run.parse(["--sandbox", "bwrap", "--kind", "build", "--", "true"])
    if parsed is None:
        sys.exit("cgroup join: `assay run` arguments not understood")
    prime = cgroup.RunCgroup.prime
    with contextlib.redirect_stdout(io.StringIO()), contextlib.chdir(src):
        cli_run.run(parsed)  # the run whose sandbox the next is built like
    hint = bwrap.standby_hint()
    if hint is None:
        sys.exit("cgroup join: the run in place left no hint of its sandbox")
    times: dict[str, list[float]] = {
        "built ahead": [],
        "cgroup made ahead": [],
        "primed": [],
        "unprimed": [],
    }
    try:
        for _ in range(rounds):
            for label, took in times.items():
                chosen = _unprimed if label == "unprimed" else prime
                cgroup.RunCgroup.prime = chosen  # type: ignore[method-assign,assignment]
                built = None
                if label in ("built ahead", "cgroup made ahead"):
                    bwrap.start_ahead()
                if label == "built ahead":
                    bwrap.stand_by(hint)
                    built = bwrap._ahead[0].standby if bwrap._ahead else None
                    if built is None:
                        sys.exit("cgroup join: no sandbox was built ahead")
                time.sleep(idle_s)
                started = time.perf_counter()
                with contextlib.redirect_stdout(io.StringIO()), contextlib.chdir(src):
                    code = cli_run.run(parsed)
                took.append(time.perf_counter() - started)
                if code != 0:
                    sys.exit(f"cgroup join: `assay run -- true` exited {code}")
                if bwrap._ahead:
                    sys.exit("cgroup join: the run did not take what was made ahead for it")
                proc = built.launch.started.proc if built is not None else None
                if built is not None and (proc is None or proc.returncode != 0):
                    sys.exit("cgroup join: the run did not run in the sandbox built for it")
    finally:
        cgroup.RunCgroup.prime = prime  # type: ignore[method-assign]
        bwrap.drop_ahead()
    built_ahead, ahead, with_prime, without = (statistics.median(times[k]) for k in times)
    print(
        f"assay run --sandbox bwrap -- true after {idle_s}s idle, in process: sandbox built "
        f"ahead {built_ahead * 1000:.1f}ms  cgroup made ahead {ahead * 1000:.1f}ms  primed "
        f"{with_prime * 1000:.1f}ms  unprimed {without * 1000:.1f}ms  ratios "
        f"{built_ahead / ahead:.3f} (built/cgroup ahead), {ahead / with_prime:.3f} "
        f"(ahead/primed), {with_prime / without:.3f} (primed/unprimed)"
    )


def _unprimed(group: cgroup.RunCgroup) -> threading.Event:
    done = threading.Event()
    done.set()
    return done


def _ran(runner: Callable[..., ProcessResult], argv: list[str], *, cwd: str) -> None:
    """Run `argv`, refusing to time a command that did not succeed."""
    result = runner(argv, cwd=cwd, timeout=30)
    if result.exit_code != 0:
        raise SystemExit(f"{argv} failed: {result.start_error or result.stderr.text[-300:]}")


def bench_cache(scratch: Path) -> None:
    src = scratch / "src1k"
    make_tree(src, 1_000)
    cache = VerdictCache(scratch / "cache")
    checkers = [CheckerId("pytest", "8.2.0")]
    plan = [{"name": "pytest", "argv": ["pytest"]}]
    cache.put(cache_key(workspace_digest(src), plan, checkers, "bwrap"), {"status": "VERIFIED"})

    def lookup() -> None:
        if cache.get(cache_key(workspace_digest(src), plan, checkers, "bwrap")) is None:
            sys.exit("cache: the verdict just stored was not found")

    hit = best_of(5, lookup)
    check = best_of(
        2, partial(_ran, run_process, [PYTHON, "-c", "import time; time.sleep(1.0)"], cwd=".")
    )
    print(
        f"cache hit (hash 1,000 files + get): {hit * 1000:.1f}ms  ~1 s check {check:.3f}s"
        f"  ratio {hit / check:.4f}"
    )


def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="assay-bench-", dir=os.environ.get("TMPDIR")))
    try:
        if "--join-only" not in sys.argv:
            bench_provision(scratch)
            bench_verify(scratch)
            bench_bwrap(scratch)
            bench_first_command(scratch)
        bench_cgroup_join(scratch)
        if "--join-only" not in sys.argv:
            bench_cache(scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()

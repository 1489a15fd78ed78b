"""A cache hit of `assay verify` against a peer's: `exitzero check --reuse`, installed from PyPI.

Run: `.venv/bin/python bench/bench_peers.py [--repeat N]`. Needs the network (PyPI) once, to
install the peer into a scratch virtualenv.

Both gate the same repository (bench_verify's small one: syntax, ruff, 48 quick tests) with
the same checks, each in a copy of its own (exitzero writes a receipt into the tree, which
would change assay's key), after one run that stored their results. The runs alternate, so
load on the machine falls on both alike; the figure is the ratio of the medians.
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

from bench_verify import ASSAY, VENV_BIN, RunningServer, env_for, make_repo

#: exitzero's policy for the same checks assay plans there: syntax, ruff, pytest.
EXITZERO_POLICY = """\
version = 1
plugins = ["exitzero_verify"]

[[checks]]
id = "syntax"
kind = "python.syntax"
paths = ["**/*.py"]

[[checks]]
id = "lint"
kind = "command"
paths = ["**/*.py", "pyproject.toml"]
[checks.options]
argv = ["ruff", "check", "."]
timeout = 60

[[checks]]
id = "tests"
kind = "command"
paths = ["**/*.py", "pyproject.toml"]
[checks.options]
argv = ["{python}", "-m", "pytest", "-q"]
timeout = 60
"""


def install_exitzero(scratch: Path) -> Path:
    venv = scratch / "exitzero-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    done = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", "exitzero"],
        check=False,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"could not install exitzero from PyPI: {done.stderr[-2000:]}")
    return venv / "bin" / "exitzero"


def timed_ok(argv: list[str], cwd: Path, env: dict[str, str], expect: str) -> float:
    """Seconds `argv` took; the run must exit 0 and print `expect`, or the figure is void."""
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0 or expect not in done.stdout:
        raise SystemExit(
            f"{' '.join(argv)} did not pass: {done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9, help="runs of each (median)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="assay-bench-peers-"))
    try:
        exitzero = install_exitzero(scratch)
        env = {**env_for(scratch / "cache"), "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}"}
        ours, theirs = scratch / "assay-repo", scratch / "exitzero-repo"
        make_repo(ours)
        make_repo(theirs)
        policy = EXITZERO_POLICY.replace("{python}", str(VENV_BIN / "python"))
        (theirs / "exitzero.toml").write_text(policy)
        assay_argv = [ASSAY, "verify", "."]
        peer_argv = [str(exitzero), "check", "--reuse"]
        timed_ok(assay_argv, ours, env, "VERIFIED")  # stores the verdict
        timed_ok(peer_argv, theirs, env, "passed")  # stores the receipt
        hits: list[float] = []
        warm_hits: list[float] = []
        peer: list[float] = []
        with RunningServer(env, ours) as server:
            for _ in range(args.repeat):
                hits.append(timed_ok(assay_argv, ours, env, "VERIFIED (cached)"))
                warm_hits.append(timed_ok(assay_argv, ours, server.env, "VERIFIED (cached)"))
                peer.append(timed_ok(peer_argv, theirs, env, "passed"))
            served = server.served()
        if served != args.repeat:
            raise SystemExit(f"the server answered {served} of {args.repeat} warm runs")
        hit_s, warm_s, peer_s = (statistics.median(t) for t in (hits, warm_hits, peer))
        print("small repository (syntax, ruff, 48 tests), results stored by an earlier run:")
        print(f"  exitzero check --reuse        {peer_s * 1000:8.0f} ms")
        print(
            f"  assay verify, cache hit       {hit_s * 1000:8.0f} ms   ratio {hit_s / peer_s:5.2f}x"
            " exitzero (target <= 1.0)"
        )
        print(
            f"  the same, via assay server    {warm_s * 1000:8.0f} ms   ratio {warm_s / peer_s:5.2f}x"
            " exitzero (target <= 1.0)"
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

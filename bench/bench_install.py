"""`--install`'s first step, the project's environment, against `python3 -m venv` made the
usual way (ensurepip), and what that step is of a whole `assay verify --install`.

Run: `.venv/bin/python bench/bench_install.py [--repeat N]`. Both ways are timed in turn in
the same run; each environment made must run its own pip, or the run stops.
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
from pathlib import Path

from assay.tools.python_venv import venv_made_with_own_pip

#: The interpreter `--install` runs (`python3`, a pyenv shim resolved), not this virtualenv's.
PYTHON3 = str(Path(sys.base_prefix) / "bin" / "python3")
ASSAY = str(Path(sys.executable).parent / "assay")


def made_in(argv: tuple[str, ...], where: Path) -> float:
    """Seconds `argv` took to make the environment `where`, checked to run its pip."""
    shutil.rmtree(where, ignore_errors=True)
    started = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, timeout=600)
    took = time.perf_counter() - started
    pip = subprocess.run(
        [str(where / "bin" / "pip"), "--version"], capture_output=True, text=True, check=False
    )
    if pip.returncode != 0 or str(where) not in pip.stdout:
        raise SystemExit(f"{argv[:3]} made no working pip in {where}: {pip.stderr.strip()}")
    return took


def measure_venv(scratch: Path, repeat: int) -> None:
    where = scratch / "env"
    plain = (PYTHON3, "-m", "venv", str(where))
    own = venv_made_with_own_pip(plain)
    assert own is not None
    ensured, copied = [], []
    for _ in range(repeat):
        ensured.append(made_in(plain, where))
        copied.append(made_in(own, where))
    e, c = statistics.median(ensured), statistics.median(copied)
    print(f"the environment, {repeat} of each in turn ({PYTHON3}):")
    print(f"  python3 -m venv (ensurepip)     {e:7.2f} s")
    print(f"  the interpreter's own pip       {c:7.2f} s   {c / e:5.2f}x")


def measure_install(scratch: Path) -> None:
    repo = scratch / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "pyproject.toml").write_text(
        '[project]\nname = "small"\nversion = "0.1"\n'
        '[project.optional-dependencies]\ntest = ["pytest"]\n'
        '[tool.pytest.ini_options]\npythonpath = ["."]\n'
    )
    (repo / "small.py").write_text("def double(x):\n    return 2 * x\n")
    (repo / "tests" / "test_small.py").write_text(
        "from small import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
    )
    env = {**os.environ, "ASSAY_CACHE_DIR": str(scratch / "cache"), "ASSAY_NO_SERVER": "1"}
    started = time.perf_counter()
    done = subprocess.run(
        [ASSAY, "verify", "--install", "--json", str(repo)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=900,
    )
    took = time.perf_counter() - started
    report = json.loads(done.stdout)
    if report["status"] != "VERIFIED":
        raise SystemExit(f"verify --install: {report['status']}: {report['note']}")
    print(f"assay verify --install, a project with one test: {took:.2f} s, of which")
    for step in report["extra"]["install"]:
        share = step["duration_s"] / took
        print(f"  {step['name']:<28} {step['duration_s']:6.2f} s   {share:5.2f}x of the whole")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="environments made each way")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="assay-bench-install-"))
    try:
        measure_venv(scratch, args.repeat)
        measure_install(scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The run's overall deadline (`--deadline`) bounds the install steps as it does the checks.

`--install` ran each step with the step's own timeout (900 s) whatever was left of the run:
a setup.py that never returns held a `--deadline 60` verification for fifteen minutes, past
the 600 s a Stop hook is given. Real pip, real bubblewrap, through the console script.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.cli import assay, assay_env, no_traceback
from tests.repos import git_repo

pytestmark = pytest.mark.slow

DEADLINE_S = 45

HUNG_BUILD = {
    "pyproject.toml": (
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "calc"\nversion = "1.0"\n'
        '[project.optional-dependencies]\ntest = ["pytest"]\n'
        '[tool.setuptools]\npy-modules = ["calc"]\n'
    ),
    # Asked for the build's requirements, the build script never returns, and prints nothing.
    "setup.py": "import time\nwhile True:\n    time.sleep(1)\n",
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}


def test_a_hung_install_step_is_stopped_at_the_run_deadline(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo", HUNG_BUILD)
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"))
    args = ("verify", "--json", "--no-cache", "--install", "--sandbox", "bwrap")
    started = time.monotonic()
    done = assay(*args, "--deadline", str(DEADLINE_S), str(repo), env=env, timeout=240)
    took = time.monotonic() - started
    no_traceback(done)
    report = json.loads(done.stdout)
    assert report["status"] == "INDETERMINATE", done.stdout[-3000:]
    assert took < DEADLINE_S + 60, took
    steps = {step["name"]: step for step in report["extra"]["install"]}
    assert steps["install-python"]["cause"] == "timeout", json.dumps(steps, indent=1)[-3000:]

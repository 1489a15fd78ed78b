"""`assay verify --deadline`: one budget for the whole run, never a pass when it runs out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path


def test_overall_deadline_cuts_the_run_short(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (repo / "tests" / "test_slow.py").write_text(
        "import time\n\n\ndef test_slow():\n    time.sleep(30)\n"
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "assay", "verify", "--json", "--sandbox", "local",
         "--timeout", "60", "--deadline", "3", str(repo)],
        capture_output=True, text=True, timeout=120, check=False, env=dict(os.environ),
    )
    elapsed = time.monotonic() - started
    report = json.loads(done.stdout)
    assert done.returncode == 3
    assert report["status"] == "INDETERMINATE"
    pytest_check = next(c for c in report["checks"] if c["name"] == "pytest")
    assert pytest_check["cause"] == "timeout"
    assert elapsed < 15, f"the 3 s budget took {elapsed:.1f} s"

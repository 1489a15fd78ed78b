"""A cached verdict is believed only when its own evidence gives its status."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
def test_a_forged_cache_entry_is_a_miss_not_a_pass(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (repo / "tests" / "test_a.py").write_text("def test_a():\n    assert 1 == 2\n")
    cache = tmp_path / "cache"
    env = {
        **os.environ,
        "ASSAY_CACHE_DIR": str(cache),
        "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}",
    }

    def verify() -> dict:
        done = subprocess.run(
            [sys.executable, "-m", "assay", "verify", "--json", "--sandbox", "local", str(repo)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env=env,
        )
        return json.loads(done.stdout)

    first = verify()
    assert first["status"] == "FAILED"
    # Rewrite the stored verdict to claim success, leaving its evidence as it was.
    with sqlite3.connect(cache / "verdicts.sqlite3") as db:
        ((key, stored),) = db.execute("SELECT key, report FROM verdicts").fetchall()
        forged = json.loads(stored)
        forged.update(status="VERIFIED", exit_code=0, verified=True, note="")
        db.execute("UPDATE verdicts SET report = ? WHERE key = ?", (json.dumps(forged), key))
    again = verify()
    assert again["status"] == "FAILED"
    assert "cached" not in again.get("extra", {})

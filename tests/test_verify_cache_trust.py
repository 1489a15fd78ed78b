"""A cached verdict is believed only when its own evidence gives its status."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.cli import assay, assay_env


@pytest.mark.slow
def test_a_forged_cache_entry_is_a_miss_not_a_pass(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (repo / "tests" / "test_a.py").write_text("def test_a():\n    assert 1 == 2\n")
    cache = tmp_path / "cache"
    env = assay_env(ASSAY_CACHE_DIR=str(cache))

    def verify() -> dict:
        done = assay("verify", "--json", "--sandbox", "local", str(repo), timeout=120, env=env)
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

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


@pytest.mark.slow
def test_what_a_check_reads_in_git_is_part_of_the_key(tmp_path: Path) -> None:
    """A tracked test that is a link into `.git`, which the workspace links and every check
    can read: editing the file in `.git` left the key as it was, and the verdict of the
    passing test it had been was given again from the cache."""
    import subprocess

    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    hidden = repo / ".git" / "t" / "test_calc.py"
    hidden.parent.mkdir()
    hidden.write_text("from calc import add\n\ndef test_add():\n    assert add(2, 2) == 0\n")
    (repo / "tests" / "test_calc.py").symlink_to("../.git/t/test_calc.py")
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "cache"))

    def status() -> str:
        done = assay("verify", "--json", "--kind", "test", str(repo), timeout=120, env=env)
        return str(json.loads(done.stdout)["status"])

    assert status() == "VERIFIED"
    hidden.write_text("from calc import add\n\ndef test_add():\n    assert add(2, 2) == 4\n")
    assert status() == "FAILED"


@pytest.mark.slow
def test_what_the_key_leaves_out_of_the_source_no_check_can_read(tmp_path: Path) -> None:
    """The source is shown read-only beside its workspace (its environments link there);
    its caches and build output, which neither the copy nor the key holds, are not: a test
    reading the source's `__pycache__/data.txt` by its absolute path would pass on a
    cached verdict whatever that file came to hold."""
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "__pycache__").mkdir()
    (repo / "__pycache__" / "data.txt").write_text("as when first verified\n")
    (repo / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (repo / "tests" / "test_data.py").write_text(
        f"def test_data():\n    print(open({str(repo / '__pycache__' / 'data.txt')!r}).read())\n"
    )
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "cache"))
    done = assay("verify", "--json", "--no-cache", "--kind", "test", str(repo), env=env)
    report = json.loads(done.stdout)
    assert report["status"] == "FAILED", report["note"]
    assert "as when first verified" not in done.stdout
    assert "PermissionError" in done.stdout

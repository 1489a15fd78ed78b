"""A changed assay never answers from what an earlier build of it cached, whatever its
version says: the version is not bumped with every change, and a fix must not be undone
by a verdict the code before it stored."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import assay
from assay.build_identity import build_of
from tests.cli import assay_env, no_traceback
from tests.repos import write

PACKAGE = Path(assay.__file__).resolve().parent


def _verified(source: Path, repo: Path, state: Path) -> dict[str, Any]:
    """`python -m assay verify --json REPO` run from the assay package under `source`."""
    env = assay_env(ASSAY_CACHE_DIR=str(state), PYTHONPATH=str(source), ASSAY_NO_SERVER="1")
    done = subprocess.run(
        [sys.executable, "-m", "assay", "verify", "--json", "--sandbox", "none", str(repo)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    no_traceback(done)
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["status"] == "VERIFIED", report["note"]
    return report


def test_a_changed_assay_does_not_answer_from_the_cache_of_the_one_before(
    tmp_path: Path,
) -> None:
    source = tmp_path / "src"
    shutil.copytree(PACKAGE, source / "assay", symlinks=True)  # byte-code and times kept
    repo = write(tmp_path / "repo", {"test_a.py": "def test_a():\n    assert 1 + 1 == 2\n"})
    state = tmp_path / "state"
    _verified(source, repo, state)
    again = _verified(source, repo, state)
    assert "cached" in again["extra"], "the same assay, the same tree: a cache hit"
    report = source / "assay" / "report.py"
    report.write_text(report.read_text() + "\n# changed\n")
    changed = _verified(source, repo, state)
    assert "cached" not in changed["extra"], "a changed assay answered from the cache"


def test_an_installed_assay_is_named_by_its_install_record(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    shutil.copytree(PACKAGE, site / "assay", ignore=shutil.ignore_patterns("__pycache__"))
    record = site / "assay-0.1.0.dist-info" / "RECORD"
    record.parent.mkdir()
    record.write_text("assay/__init__.py,sha256=aaaa,10\nassay/cli.py,sha256=bbbb,20\n")
    first = build_of(site / "assay")
    os.utime(site / "assay" / "cli.py", (0, 0))  # times of an install are no one's choosing
    assert build_of(site / "assay") == first
    record.write_text("assay/__init__.py,sha256=aaaa,10\nassay/cli.py,sha256=cccc,20\n")
    assert build_of(site / "assay") != first
    assert build_of(site / "assay").startswith(f"{assay.__version__}+")

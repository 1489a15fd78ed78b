"""`--base` is read once, as a commit, and a name given for it is shown for what it is.

Found by attack: `assay verify . --base main --protect`, after the change had run `git
update-ref refs/heads/main HEAD`, judged the change by its own weakened test as the base's
and was VERIFIED. A ref is a file of the repository the work could write; only a commit id
recorded before the work began is an anchor. The report now says which commit a name stood
for, and that it was a name; the base's tree, plan and tests are all read at that one
commit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.formats.report_text import base_line
from assay.report import Report
from assay.run_record import RunRecord
from assay.verdict import Status
from tests.cli import assay, assay_env, no_traceback
from tests.repos import git, git_repo

FILES = {
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1.0"\n',
    "calc.py": "def add(a, b):\n    return a + b\n",
    "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    made = git_repo(tmp_path_factory.mktemp("base-ref") / "repo", FILES)
    git(made, "branch", "-M", "main")
    return made


def _verify(repo: Path, base: str, tmp_path: Path) -> tuple[dict[str, Any], str]:
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"))
    as_json = assay("verify", "--json", "--base", base, "--protect", str(repo), env=env)
    as_text = assay("verify", "--base", base, "--protect", str(repo), env=env)
    no_traceback(as_json)
    no_traceback(as_text)
    report: dict[str, Any] = json.loads(as_json.stdout)
    return report, as_text.stdout


def test_a_base_given_by_name_is_recorded_with_its_commit_and_called_a_name(
    repo: Path, tmp_path: Path
) -> None:
    commit = git(repo, "rev-parse", "HEAD").decode().strip()
    report, text = _verify(repo, "main", tmp_path)
    assert report["status"] == "VERIFIED", report["note"]
    assert report["extra"]["base"] == {"named": "main", "commit": commit}, report["extra"]
    assert f"base: main named commit {commit}" in text, text
    assert "pass the commit id recorded before it began" in text, text


def test_a_base_given_by_its_commit_id_needs_no_word(repo: Path, tmp_path: Path) -> None:
    commit = git(repo, "rev-parse", "HEAD").decode().strip()
    report, text = _verify(repo, commit, tmp_path)
    assert report["status"] == "VERIFIED", report["note"]
    assert "base:" not in text, text


def test_the_line_reads_the_stored_record() -> None:
    record = RunRecord.from_dict({"base": {"named": "HEAD~1", "commit": "ab" * 20}})
    line = base_line(Report(status=Status.FAILED, checks=(), note="x", record=record))
    assert line is not None and line.startswith(f"base: HEAD~1 named commit {'ab' * 20};")
    assert record.to_dict()["base"] == {"named": "HEAD~1", "commit": "ab" * 20}

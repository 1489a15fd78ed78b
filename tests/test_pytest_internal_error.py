"""pytest's own crash is named as one, with the error and where the project's code raised
it: pluggy 1.5.0 with a `get_result` that lost its value broke the pytest that loads it, and
the note said "1 of 1 tests failed: pytest::internal", no word of what broke."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli import assay, assay_env, verified_json
from tests.repos import write_dedented

#: A conftest hook the project's own code serves, as pytest's hooks are served by pluggy.
PROJECT = {
    "pyproject.toml": """
        [project]
        name = "outcomes"
        version = "0.1"
        [tool.pytest.ini_options]
        pythonpath = ["."]
    """,
    "outcomes.py": """
        def shout(report):
            return report.outcome.upper()
    """,
    "conftest.py": """
        from outcomes import shout


        def pytest_runtest_logreport(report):
            shout(report)
    """,
    "tests/test_outcomes.py": """
        def test_passes():
            assert 1 + 1 == 2
    """,
}


def crashed_verify(repo: Path, state: Path) -> dict[str, Any]:
    """`verified_json`'s run, whose output rightly holds the traceback pytest printed."""
    env = assay_env(ASSAY_CACHE_DIR=str(state))
    args = ("verify", "--json", "--no-cache", "--kind", "test", str(repo))
    done = assay(*args, env=env, timeout=300)
    assert "Traceback" not in done.stderr, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.mark.slow
def test_a_crash_of_pytest_names_its_error_and_the_projects_frame(tmp_path: Path) -> None:
    repo = write_dedented(tmp_path / "repo", PROJECT)
    report = verified_json(repo, tmp_path / "state", "--kind", "test")
    assert report["status"] == "VERIFIED", (report["note"], report["output"])

    (repo / "outcomes.py").write_text("def shout(report):\n    return None.upper()\n")
    report = crashed_verify(repo, tmp_path / "state")
    assert report["status"] == "FAILED", report["note"]
    note = report["note"]
    assert "pytest stopped on an internal error: AttributeError" in note, note
    assert "(raised below outcomes.py:2)" in note and "pytest::internal" not in note, note

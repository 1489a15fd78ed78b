"""`assay verify` options that shape a run: `--deadline` and `--kind`."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.cli import assay


@pytest.mark.slow
def test_overall_deadline_cuts_the_run_short(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (repo / "tests" / "test_slow.py").write_text(
        "import time\n\n\ndef test_slow():\n    time.sleep(30)\n"
    )
    started = time.monotonic()
    done = assay(
        *("verify", "--json", "--sandbox", "local", "--timeout", "60", "--deadline", "3"),
        str(repo),
        timeout=120,
        env=dict(os.environ),
    )
    elapsed = time.monotonic() - started
    report = json.loads(done.stdout)
    assert done.returncode == 3
    assert report["status"] == "INDETERMINATE"
    pytest_check = next(c for c in report["checks"] if c["name"] == "pytest")
    assert pytest_check["cause"] == "timeout"
    assert elapsed < 15, f"the 3 s budget took {elapsed:.1f} s"


@pytest.mark.slow
def test_kinds_without_tests_do_not_require_tests(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[tool.ruff]\n[tool.pytest.ini_options]\n")
    (repo / "tests" / "test_a.py").write_text("def test_a() -> None:\n    assert False\n")

    # ruff and pytest come from this interpreter's environment (assay's default PATH).
    def verify(*args: str) -> dict:
        done = assay("verify", "--json", "--sandbox", "local", *args, str(repo), timeout=120)
        return json.loads(done.stdout)

    lint_only = verify("--kind", "lint")
    assert [c["name"] for c in lint_only["checks"]] == ["ruff"]
    assert lint_only["status"] == "VERIFIED", lint_only["note"]
    everything = verify()
    assert everything["status"] == "FAILED"  # the failing test is seen when tests are asked for

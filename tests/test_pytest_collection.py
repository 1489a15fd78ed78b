"""A pytest run whose test modules could not be collected ran no test: its note says which
module and why, not "1 of 1 tests failed"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import assay

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("imports", "why"),
    [
        (
            "import nonexistent_mod_xyz",
            "ModuleNotFoundError: No module named 'nonexistent_mod_xyz'",
        ),
        ("def broken(:", "SyntaxError"),
    ],
)
def test_a_module_that_could_not_be_collected_is_named_with_why(
    tmp_path: Path, imports: str, why: str
) -> None:
    """h11 and termcolor with a syntax error: "1 of 1 tests failed: tests.test_x" said
    neither that no test ran nor why."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "c"\nversion = "0"\n')
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(f"{imports}\n\n\ndef test_a():\n    pass\n")
    done = assay("verify", "--json", "--no-cache", str(tmp_path), timeout=180)
    report = json.loads(done.stdout)
    assert report["status"] == "FAILED", report["note"]
    note = str(report["note"])
    assert "tests.test_x could not be collected: " in note and why in note, note
    assert "tests failed" not in note

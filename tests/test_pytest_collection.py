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


#: mccabe 0.7.0's shape: the name comes from a guarded import, then is used unguarded.
_OPTIONAL = """\
try:
    import assay_absent_optional_q7
    from assay_absent_optional_q7 import settings
except ImportError:
    assay_absent_optional_q7 = None


@settings(max_examples=1)
def test_a():
    pass
"""


def test_a_name_a_guarded_import_never_bound_says_which_import(tmp_path: Path) -> None:
    """mccabe's `NameError: name 'settings' is not defined` read as a bug in the code:
    the note says the name was to come from a module that could not be imported."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "c"\nversion = "0"\n')
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(_OPTIONAL)
    done = assay("verify", "--json", "--no-cache", "--kind", "test", str(tmp_path), timeout=180)
    report = json.loads(done.stdout)
    assert report["status"] == "FAILED", report["note"]
    note = str(report["note"])
    assert "NameError: name 'settings' is not defined (`settings` comes from an import" in note
    assert "of assay_absent_optional_q7 in a `try` that catches ImportError" in note, note

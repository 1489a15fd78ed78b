"""A pytest run that hangs before any test starts names what it was collecting.

Measured on real projects: simplejson's `tests/test_raw_json.py` calls `json.dumps` as it is
imported; with `dumps` looping, pytest hung in collection and the note said only "pytest was
killed at its deadline", where a hung test is named. Real pytest in real bubblewrap.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assay.pipeline import VerifyOptions, verify
from assay.verdict import Cause, Status
from tests.cli import path_with_venv
from tests.repos import write

pytestmark = pytest.mark.slow

SUITE = {
    "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = ['tests']\n",
    "pkg/__init__.py": "def spin():\n    while True:\n        pass\n",
    "tests/test_a_ok.py": "def test_ok():\n    assert 1 + 1 == 2\n",
}


def _verify(repo: Path) -> tuple[Status, Cause | None, str]:
    report = verify(
        repo,
        VerifyOptions(sandbox="bwrap", use_cache=False, kinds=frozenset({"test"}), timeout_s=8.0),
    )
    (check,) = report.checks
    return report.status, check.cause, check.note


def test_a_module_whose_import_hangs_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", path_with_venv())
    hung = {
        **SUITE,
        "tests/test_b_import_hangs.py": "import pkg\n\npkg.spin()\n\n\ndef test_x():\n    pass\n",
    }
    status, cause, note = _verify(write(tmp_path, hung))
    assert (status, cause) == (Status.INDETERMINATE, Cause.TIMEOUT), note
    assert (
        "while running the collection of tests/test_b_import_hangs.py (before any test started)"
        in note
    ), note


def test_a_hung_test_is_still_named_as_a_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", path_with_venv())
    hung = {**SUITE, "tests/test_b_hangs.py": "import pkg\n\n\ndef test_x():\n    pkg.spin()\n"}
    status, cause, note = _verify(write(tmp_path, hung))
    assert (status, cause) == (Status.INDETERMINATE, Cause.TIMEOUT), note
    assert "while running tests/test_b_hangs.py::test_x" in note, note
    # The line it was stuck on, in the project's code, from faulthandler's dump at the
    # deadline's SIGTERM (the loop's line, whichever of its two the bytecode was on).
    assert re.search(r"\(stuck at pkg/__init__\.py:[23] in spin\)", note), note
    assert "collection" not in note, note

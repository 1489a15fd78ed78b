"""With `--install`, the base's tests run in an environment built from the base's own
manifests, as the change's do. They ran with whatever Python was on PATH instead: a project
whose code needs a dependency could not import it there, the base's outcomes could not be
read, and every test the change stopped running went unnoticed (boltons under a newer
pytest named its tests otherwise, and three were called missing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.verdict import Status
from tests.attacks import change_on_base, explain, verify_change

pytestmark = pytest.mark.slow

#: A project whose code needs a distribution nothing else here installs (inflection).
BASE = {
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1"\ndependencies = ["inflection"]\n'
    '\n[project.optional-dependencies]\ntest = ["pytest"]\n'
    '\n[tool.setuptools]\npy-modules = ["calc"]\n',
    "calc.py": "import inflection\n\n\ndef title(s):\n    return inflection.titleize(s)\n",
    "tests/test_calc.py": """\
        import calc


        def test_title():
            assert calc.title("a_b") == "A B"


        def test_title_word():
            assert calc.title("word") == "Word"
        """,
}

#: The change skips a test from its code at run time: only the base comparison sees it.
SKIPS_A_TEST = """\
import sys

import inflection


def title(s):
    if s == "word" and "pytest" in sys.modules:
        import pytest

        pytest.skip("not today")
    return inflection.titleize(s)
"""


def test_the_bases_tests_run_in_the_environment_the_base_installs(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", BASE, {"README.md": "calc\n"})
    report = verify_change(repo, install=True, kinds=frozenset({"test"}))
    assert report.status is Status.VERIFIED, explain(report)
    base = report.record.base_tests or {}
    assert base.get("unavailable") is None, base
    assert [c["passed"] for c in base["checks"]] == [2], base


def test_a_test_the_change_skips_is_found_against_the_installed_base(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", BASE, {"calc.py": SKIPS_A_TEST})
    report = verify_change(repo, install=True, kinds=frozenset({"test"}))
    assert report.status is Status.INDETERMINATE, explain(report)
    assert "test_title_word" in report.note, report.note

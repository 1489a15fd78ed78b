"""Under `--protect`, the text files pytest runs as doctests are the base's tests.

pytest collects `test*.txt` as doctests wherever it collects, and a base's `addopts` may
name more (`--doctest-glob=*.rst`). A change that added `testing/test_aa.txt` running
`calc.add = ...` before `testing/test_calc.py` had a wrong `add` VERIFIED: its tests were
protected by their names, and the text file beside them was not.
"""

from __future__ import annotations

from pathlib import Path

from assay.discovery.files import RepoFiles
from assay.discovery.python import pytest_test_files
from assay.verdict import Status
from tests.attacks import change_on_base, explain, verify_change
from tests.repos import write

BASE = {
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1.0"\n',
    "calc.py": "def add(a, b):\n    return a + b\n",
    "testing/test_calc.py": "import calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n",
}
RIGHT_COPY = ">>> import calc\n>>> calc.add = lambda a, b: a + b\n"


def test_a_doctest_file_the_change_adds_is_removed(tmp_path: Path) -> None:
    change = {"calc.py": "def add(a, b):\n    return a - b\n", "testing/test_aa.txt": RIGHT_COPY}
    repo = change_on_base(tmp_path / "repo", BASE, change, dedent=False)
    report = verify_change(repo)
    assert report.status is Status.FAILED, explain(report)
    assert "test_add" in report.note, explain(report)


def test_the_doctest_globs_the_base_names_are_its_tests(tmp_path: Path) -> None:
    root = write(
        tmp_path / "base",
        {"pytest.ini": "[pytest]\naddopts = --doctest-glob=*.rst --doctest-glob docs_*.md\n"},
    )
    assert pytest_test_files(RepoFiles(str(root))) == ("**/*.rst", "**/docs_*.md")

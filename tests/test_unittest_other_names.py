"""unittest tests not named `method (module.Class)` are counted in its per-test listing.

Measured on a real project: jsonpointer 3.12's `make test` (python3 -m unittest) loads its
module's doctests and `doc/tutorial.rst` through load_tests; the file's doctest is listed as
its path and then `Doctest: tutorial.rst ... ok`, which the listing did not count, and the
pristine tree was FAILED with "summary counts 99 test(s), per-test listing 98". Real unittest
in real bubblewrap.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.pipeline import VerifyOptions, verify
from assay.verdict import Status
from tests.cli import path_with_venv
from tests.repos import write

pytestmark = pytest.mark.slow

TREE = {
    "makefile": "test:\n\tpython3 -m unittest\n",
    "calc.py": 'def add(a, b):\n    """\n    >>> add(1, 2)\n    3\n    """\n    return a + b\n',
    "doc/tutorial.rst": ">>> import calc\n>>> calc.add(2, 2)\n4\n",
    "tests.py": (
        "import doctest\nimport unittest\n\nimport calc\n\n\n"
        "class T(unittest.TestCase):\n    def test_add(self):\n"
        "        self.assertEqual(calc.add(1, 1), 2)\n\n\n"
        "def check_add():\n    assert calc.add(0, 0) == 0\n\n\n"
        "def load_tests(loader, tests, ignore):\n"
        "    tests.addTests(doctest.DocTestSuite(calc))\n"
        "    tests.addTests(doctest.DocFileSuite('doc/tutorial.rst'))\n"
        "    tests.addTest(unittest.FunctionTestCase(check_add))\n"
        "    return tests\n"
    ),
}


def _verify(repo: Path) -> tuple[Status, str]:
    report = verify(
        repo,
        VerifyOptions(sandbox="bwrap", use_cache=False, kinds=frozenset({"test"}), timeout_s=60.0),
    )
    (check,) = report.checks
    return report.status, check.note


def test_doctest_files_and_function_cases_count_as_tests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", path_with_venv())
    status, note = _verify(write(tmp_path, TREE))
    assert status == Status.VERIFIED, note


def test_a_failing_doctest_file_fails_the_run_as_a_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", path_with_venv())
    wrong = {**TREE, "doc/tutorial.rst": ">>> import calc\n>>> calc.add(2, 2)\n5\n"}
    status, note = _verify(write(tmp_path, wrong))
    assert status == Status.FAILED, note
    assert "disagree" not in note, note

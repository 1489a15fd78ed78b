"""A test runner that crashes in its own installed code before any test ran cannot run
here: UNVERIFIED, naming where it broke, never the code's FAILED. nose 1.3.7, for real, on
this Python (3.10 or later), where it dies in `nose/suite.py`."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.pipeline import VerifyOptions, verify
from assay.runner_broken_here import runner_broken_here
from assay.verdict import Cause, Status
from tests.repos import tree_with_venv, write

NOSE_CRASH = """\
Traceback (most recent call last):
  File "/w/.venv/bin/nosetests", line 8, in <module>
    sys.exit(run_exit())
  File "/w/.venv/lib/python3.11/site-packages/nose/core.py", line 118, in __init__
    unittest.TestProgram.__init__(
  File "/usr/lib/python3.11/unittest/main.py", line 101, in __init__
    self.parseArgs(argv)
  File "/w/.venv/lib/python3.11/site-packages/nose/suite.py", line 106, in _set_tests
    if isinstance(tests, collections.Callable) and not is_suite:
AttributeError: module 'collections' has no attribute 'Callable'
"""


@pytest.mark.parametrize(
    ("output", "where"),
    [
        (
            NOSE_CRASH,
            "nose/suite.py:106: AttributeError: module 'collections' has no attribute 'Callable'",
        ),
        # A frame of the tree's own (a conftest, a test module): the failure stands.
        (NOSE_CRASH.replace("/usr/lib/python3.11/unittest/main.py", "/w/tests/conftest.py"), None),
        (NOSE_CRASH.replace("/usr/lib/python3.11/unittest/main.py", "tests/test_a.py"), None),
        # The crashing package is the tree's own, installed: the failure stands.
        (NOSE_CRASH.replace("site-packages/nose/suite.py", "site-packages/calc/suite.py"), None),
        ("no traceback at all\n", None),
    ],
)
def test_where_a_runner_broke_in_its_own_code(
    tmp_path: Path, output: str, where: str | None
) -> None:
    tree = write(tmp_path / "w", {"calc/__init__.py": "", "tests/conftest.py": ""})
    assert runner_broken_here(output.replace("/w/", f"{tree}/"), str(tree)) == where


@pytest.fixture(scope="module")
def nose_tree() -> Iterator[Path]:
    repo = tree_with_venv("assay-nose-", "nose==1.3.7")
    yield repo
    shutil.rmtree(repo, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.skipif(sys.version_info < (3, 10), reason="nose still runs before 3.10")
def test_nose_that_cannot_start_on_this_python_is_unverified(nose_tree: Path) -> None:
    write(
        nose_tree,
        {
            "calc.py": "def add(a, b):\n    return a + b\n",
            "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n",
            "assay.toml": '[commands]\ntest = ".venv/bin/nosetests"\n',
        },
    )
    report = verify(nose_tree, VerifyOptions(use_cache=False, kinds=frozenset({"test"})))
    (check,) = report.checks
    assert report.status is Status.UNVERIFIED, report.note
    assert check.cause is Cause.TOOLCHAIN_MISSING
    assert "nose/suite.py" in check.note and "before any test ran" in check.note, check.note

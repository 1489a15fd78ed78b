"""The stack dump that names where a hung Python test was stuck is the test process's
own, not a forked child's.

Measured on toolz: `test_fold` opens a `multiprocessing.Pool` (forked workers) and closes
it, which sends each worker SIGTERM; the workers had inherited the dump-on-SIGTERM
handler, so their stacks, frozen at the fork inside `test_fold`, were written first, and
a loop in `frequencies` was reported "stuck at toolz/sandbox/tests/test_parallel.py:15 in
test_fold". Real pytest and unittest in real bubblewrap.
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

# Leaving the `with` terminates the pool: SIGTERM to its worker, busy in a task.
_POOL_TEST = (
    "import multiprocessing, time\n\n\n"
    "def test_pool():\n"
    "    with multiprocessing.get_context('fork').Pool(1) as pool:\n"
    "        started = pool.apply_async(time.sleep, (0.1,))\n"
    "        started.get()\n"
    "        pool.apply_async(time.sleep, (60,))\n"
    "        time.sleep(0.5)\n"
)
_SUITE = {
    "pkg/__init__.py": "def spin():\n    while True:\n        pass\n",
    "tests/__init__.py": "",
    "tests/test_a_pool.py": _POOL_TEST,
    "tests/test_b_hangs.py": "import pkg\n\n\ndef test_x():\n    pkg.spin()\n",
}


def _note(repo: Path) -> str:
    report = verify(
        repo,
        VerifyOptions(sandbox="bwrap", use_cache=False, kinds=frozenset({"test"}), timeout_s=8.0),
    )
    (check,) = report.checks
    assert (report.status, check.cause) == (Status.INDETERMINATE, Cause.TIMEOUT), check.note
    return check.note


def test_pytest_names_the_hung_line_not_a_forked_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", path_with_venv())
    files = {**_SUITE, "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = ['tests']\n"}
    note = _note(write(tmp_path, files))
    assert "while running tests/test_b_hangs.py::test_x" in note, note
    assert re.search(r"\(stuck at pkg/__init__\.py:[23] in spin\)", note), note


def test_unittest_names_the_hung_line_not_a_forked_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", path_with_venv())
    cases = {
        "tests/test_a_pool.py": "import unittest\n\n\nclass A(unittest.TestCase):\n"
        "    def test_pool(self):\n        pool_test()\n\n\n"
        + _POOL_TEST.replace("def test_pool", "def pool_test"),
        "tests/test_b_hangs.py": "import unittest\n\nimport pkg\n\n\n"
        "class B(unittest.TestCase):\n    def test_x(self):\n        pkg.spin()\n",
    }
    tox = "[tox]\nenvlist = py\n\n[testenv]\ncommands = python -m unittest -v\n"
    note = _note(write(tmp_path, {**_SUITE, **cases, "tox.ini": tox}))
    assert "while running tests.test_b_hangs.B.test_x" in note, note
    assert re.search(r"\(stuck at pkg/__init__\.py:[23] in spin\)", note), note

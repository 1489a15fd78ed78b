"""A unittest run stopped at assay's deadline names the test it was in: `unittest -v`
writes each test's line as the test begins, its outcome as it ends (idna 3.10's and
more-itertools 10.5.0's hung tests were on the last line, and the note named none)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.parsers.python import unittest_running
from tests.cli import assay, assay_env, no_traceback
from tests.repos import write


@pytest.mark.parametrize(
    ("stderr", "running"),
    [
        ("test_a (t.T.test_a) ... ok\ntest_b (t.T.test_b) ... ", "t.T.test_b"),
        # A docstring's first line comes between the name and the outcome.
        ("test_b (t.T.test_b)\nSays what it does ... ", "t.T.test_b"),
        # Python 3.10 and older name the class only.
        ("test_b (t.T) ... ", "t.T.test_b"),
        ("test_a (t.T.test_a) ... ok\ntest_b (t.T.test_b) ... ok\n", None),
        ("test_a (t.T.test_a) ... FAIL\n", None),
        ("", None),
    ],
)
def test_the_test_begun_and_not_ended_is_the_one_running(stderr: str, running: str | None) -> None:
    assert unittest_running(stderr) == running


HANGS = (
    "import unittest\n\nfrom tests.wait import wait\n\n\nclass T(unittest.TestCase):\n"
    "    def test_a(self):\n        pass\n\n"
    "    def test_hangs(self):\n        wait()\n"
)
WAIT = "import time\n\n\ndef wait():\n    while True:\n        time.sleep(0.1)\n"


def test_a_hung_unittest_test_is_named_for_real(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "repo",
        {
            "tox.ini": "[tox]\nenvlist = py\n\n[testenv]\ncommands = python -m unittest -v\n",
            "tests/__init__.py": "",
            "tests/test_x.py": HANGS,
            "tests/wait.py": WAIT,
        },
    )
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"))
    done = assay("verify", "--json", "--no-cache", "--timeout", "4", str(repo), env=env)
    no_traceback(done)
    report = json.loads(done.stdout)
    assert report["status"] == "INDETERMINATE", report["note"]
    # faulthandler's dump at the deadline's SIGTERM names the line it was stuck on.
    running = "while running tests.test_x.T.test_hangs (stuck at tests/wait.py:6 in wait)"
    assert running in report["note"], report["note"]


def test_a_dump_that_begins_on_the_hung_tests_line_is_read() -> None:
    from assay.parsers.python_stacks import stuck_at

    stderr = (
        "test_b (t.T.test_b) ... Current thread 0x00007f00 (most recent call first):\n"
        '  File "/w/calc.py", line 3 in add\n'
        '  File "/w/t.py", line 8 in test_b\n'
    )
    assert stuck_at(stderr, "/w") == "calc.py:3 in add"

"""The output shown under a hung check is the project's part of the dump taken at the hang:
pycparser's hung unittest run showed fifteen frames of unittest's own suite runner, and
none of the project's (faulthandler prints the innermost frame first)."""

from __future__ import annotations

from pathlib import Path

from tests.cli import assay, assay_env, no_traceback
from tests.repos import write

#: A test that hangs several calls deep in the project's code.
HANGS = (
    "import unittest\n\nfrom tests.wait import wait\n\n\nclass T(unittest.TestCase):\n"
    "    def test_hangs(self):\n        wait()\n"
)
WAIT = (
    "import time\n\n\ndef wait():\n    deeper()\n\n\n"
    "def deeper():\n    while True:\n        time.sleep(0.1)\n"
)


def test_a_hung_checks_tail_shows_the_projects_frames_not_the_runners(tmp_path: Path) -> None:
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
    done = assay("verify", "--no-cache", "--timeout", "4", str(repo), env=env)
    no_traceback(done)
    shown = [line for line in done.stdout.splitlines() if line.startswith("  | ")]
    assert '  |   File "tests/wait.py", line 10 in deeper' in shown, done.stdout
    assert '  |   File "tests/test_x.py", line 8 in test_hangs' in shown, done.stdout
    assert not [line for line in shown if "unittest/" in line or "<frozen" in line], done.stdout

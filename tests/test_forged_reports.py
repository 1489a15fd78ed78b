"""Code under test that rewrites its own test report still does not get a pass."""

from __future__ import annotations

import sys
from pathlib import Path

from assay.check_execution import run_check
from assay.evidence import Check
from assay.verdict import Kind, Verdict

# Imported by the test; at exit it replaces pytest's JUnit report with an all-passing one
# and leaves with status 0, after pytest has already printed its real summary.
FORGER = """
import atexit, os, sys

def _forge():
    for arg in sys.argv:
        if arg.startswith("--junitxml="):
            with open(arg.split("=", 1)[1], "w") as f:
                f.write('<testsuites><testsuite name="pytest" tests="1">'
                        '<testcase classname="t" name="test_it"/></testsuite></testsuites>')
    os._exit(0)

atexit.register(_forge)

def add(a, b):
    return a - b
"""


def test_a_report_rewritten_at_exit_is_not_a_pass(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "calc.py").write_text(FORGER)
    (repo / "tests" / "test_calc.py").write_text(
        "import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\n"
        "from calc import add\n\n\ndef test_it():\n    assert add(1, 2) == 3\n"
    )
    check = Check("pytest", Kind.TEST, (sys.executable, "-m", "pytest", "-q"), tool="pytest")
    evidence = run_check(check, root=repo, report_dir=tmp_path / "reports")
    assert evidence.result is not None and evidence.result.exit_code == 0  # the forger won that
    assert evidence.verdict is Verdict.FAIL, (evidence.cause, evidence.tests)
    assert evidence.tests is not None and evidence.tests.failed == 1

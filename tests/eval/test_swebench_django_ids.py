"""Grading ids as Django's test runner spells them (`test_x (module.Class)`, and since
Python 3.11 `test_x (module.Class.test_x)`), matched to what assay's runs report, for
real: a small unittest project in Django's shape (no pytest configuration, so its tests run
with `python -m unittest -v`, whose lines have the same form), imported from a git clone
and graded through bubblewrap.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.cli import assay, no_traceback
from tests.eval.swebench_repos import git_diff, write_jsonl
from tests.eval.tasks import git

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

BUGGY = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"
FIXED = BUGGY.replace("return a - b\n\n\n", "return a + b\n\n\n", 1)
TESTS = """import unittest

from calc import sub


class CalcTests(unittest.TestCase):
    def test_sub(self):
        self.assertEqual(sub(5, 3), 2)
"""
NEW_TESTS = (
    TESTS.replace("import sub", "import add, sub")
    + """
    def test_add(self):
        self.assertEqual(add(2, 3), 5)
"""
)
INSTANCE_ID = "acme__dj-1"
#: Django's runner before Python 3.11 names the class only; since, the test in full.
F2P = "test_add (tests.test_calc.CalcTests)"
P2P = "test_sub (tests.test_calc.CalcTests.test_sub)"


def make_instance(repos: Path) -> dict[str, Any]:
    repo = repos / "acme__dj"
    (repo / "tests").mkdir(parents=True)
    (repo / "calc").mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "calc" / "__init__.py").write_text(BUGGY)
    (repo / "tests" / "__init__.py").write_text("")
    (repo / "tests" / "test_calc.py").write_text(TESTS)
    (repo / ".gitignore").write_text("__pycache__/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    return {
        "instance_id": INSTANCE_ID,
        "repo": "acme/dj",
        "base_commit": git(repo, "rev-parse", "HEAD"),
        "patch": git_diff(repo, "calc/__init__.py", FIXED),
        "test_patch": git_diff(repo, "tests/test_calc.py", NEW_TESTS),
        "FAIL_TO_PASS": json.dumps([F2P]),
        "PASS_TO_PASS": json.dumps([P2P]),
        "problem_statement": "add(2, 3) returns -1 instead of 5.\n",
    }


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("swebench-django")
    jsonl = write_jsonl(root / "instances.jsonl", [make_instance(root / "repos")])
    out = root / "tasks"
    done = assay("tasks", "import", str(jsonl), "--repos", str(root / "repos"), "--out", str(out))
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    return out


def _row(tasks: Path, agent: str, store: Path) -> dict[str, Any]:
    done = assay("eval", str(tasks), "--agent", agent, "--store", str(store), "--json", timeout=900)
    no_traceback(done)
    assert done.returncode == 0, (done.stdout, done.stderr)
    row: dict[str, Any]
    (row,) = json.loads(done.stdout)["attempts"]
    return row


def test_django_style_ids_are_graded_from_the_unittest_run(tasks: Path, tmp_path: Path) -> None:
    oracle = _row(tasks, "oracle", tmp_path / "oracle.sqlite")
    assert oracle["tests"] == {"fail_to_pass": {F2P: "passed"}, "pass_to_pass": {P2P: "passed"}}
    assert oracle["resolved"] is True

    nop = _row(tasks, "nop", tmp_path / "nop.sqlite")
    assert nop["tests"] == {"fail_to_pass": {F2P: "failed"}, "pass_to_pass": {P2P: "passed"}}
    assert nop["resolved"] is False
    assert F2P in nop["unresolved_reason"]


def test_django_ids_match_the_names_runners_report() -> None:
    from assay.eval.swebench.grading_ids import GradingIds

    ids = GradingIds([F2P, P2P, "test_x (a.b.C.test_x)"])
    # unittest's own name, and pytest's for the same unittest test case.
    assert ids.outcomes(
        {
            "tests.test_calc.CalcTests.test_add": "passed",
            "tests.test_calc.CalcTests::test_sub": "failed",
        }
    ) == {F2P: "passed", P2P: "failed", "test_x (a.b.C.test_x)": "not_run"}
    assert ids.selects("tests.test_calc.CalcTests.test_add")
    assert ids.selects("tests.test_calc.CalcTests::test_sub")
    assert not ids.selects("tests.test_calc.CalcTests.test_mul")

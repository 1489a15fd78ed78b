"""No single channel is believed: attacks on what a test run reports, end to end.

Each test builds a real git repository whose base commit is right and whose change
leaves the code wrong while it attacks the reporting: the code under test skips or hides
the tests that would fail, prints a runner's summary and exits, or forges the structured
report and swallows the runner's own summary. Every one is verified the way untrusted work
is (`--base REF --protect`) and must not come out VERIFIED; where the point is the base's
tests, the report must name them. An honest change that adds a test stays VERIFIED.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import assay
from assay.pipeline import VerifyOptions
from assay.report import Report
from assay.verdict import Status
from tests.attacks import change_on_base, explain, verify_change
from tests.cli import path_with_venv
from tests.repos import write

pytestmark = pytest.mark.slow

PROJECT = '[project]\nname = "calc"\nversion = "0.1.0"\n'
PYPROJECT = PROJECT + "\n[tool.pytest.ini_options]\n"

CALC = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"

PYTEST_TESTS = """\
from calc import add, mul


def test_add():
    assert add(2, 3) == 5


def test_mul():
    assert mul(2, 3) == 6
"""

UNITTEST_TESTS = """\
import unittest

from calc import add, mul


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_mul(self):
        self.assertEqual(mul(2, 3), 6)
"""

WRONG_ADD = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"


@pytest.fixture(autouse=True)
def _project_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest comes from this interpreter's environment."""
    monkeypatch.setenv("PATH", path_with_venv())


def _repo(root: Path, tests: str, change: dict[str, str]) -> Path:
    """A repository whose base passes `tests`, with `change` committed on top; a pytest
    project unless the tests are unittest's."""
    pyproject = PROJECT if "unittest" in tests else PYPROJECT
    base = {"pyproject.toml": pyproject, "calc.py": CALC, "tests/test_calc.py": tests}
    return change_on_base(root, base, change, dedent=False)


def _listed(report: Report) -> list[str]:
    """The base's passing tests the report says the change did not execute."""
    base = report.to_dict().get("extra", {}).get("base_tests") or {}
    return [f"{t['check']}:{t['test']}" for t in base.get("not_executed", [])]


# --------------------------------------------------------------------------- attacks

SKIPS_AT_RUN_TIME = """\
import sys


def add(a, b):
    # The failing test is skipped by the code it exercises, not by its own file.
    if "pytest" in sys.modules:
        import pytest

        pytest.skip("not supported here")
    return a - b


def mul(a, b):
    return a * b
"""


def test_code_that_skips_the_failing_test_at_run_time_is_not_verified(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", PYTEST_TESTS, {"calc.py": SKIPS_AT_RUN_TIME})
    report = verify_change(repo)
    assert report.status is not Status.VERIFIED, explain(report)
    assert report.status is Status.INDETERMINATE, explain(report)
    assert any(t.endswith("test_add") for t in _listed(report)), report.to_dict()
    assert "test_add" in report.note and "skipped" in report.note


#: The base has the bug and its failing test; the change keeps the bug and skips that test
#: from the code, through an alias no signal knows.
SKIPS_THE_TEST_IT_WAS_TO_FIX = """\
from unittest import SkipTest as _Unsupported


def add(a, b):
    if a - b != a + b:
        raise _Unsupported("platform-dependent")
    return a - b


def mul(a, b):
    return a * b
"""


@pytest.mark.parametrize("protect", [True, False], ids=["protect", "base-only"])
def test_code_that_skips_the_test_that_failed_at_the_base_is_not_verified(
    tmp_path: Path, protect: bool
) -> None:
    base = {"pyproject.toml": PYPROJECT, "calc.py": WRONG_ADD, "tests/test_calc.py": PYTEST_TESTS}
    repo = change_on_base(
        tmp_path / "repo", base, {"calc.py": SKIPS_THE_TEST_IT_WAS_TO_FIX}, dedent=False
    )
    report = verify_change(repo, protect=protect)
    assert report.status is Status.INDETERMINATE, explain(report)
    assert any(t.endswith("test_add") for t in _listed(report)), report.to_dict()
    assert "test_add" in report.note and "skipped" in report.note


HIDES_A_TEST = """\
import gc


def _hide_the_add_test():
    # Registers a plugin with the running pytest that drops the test before it runs.
    try:
        from _pytest.config import Config
    except ImportError:
        return
    for found in gc.get_objects():
        if isinstance(found, Config):

            class Hide:
                def pytest_collection_modifyitems(self, items):
                    items[:] = [item for item in items if "add" not in item.name]

            found.pluginmanager.register(Hide())
            return


_hide_the_add_test()


def add(a, b):
    return a - b


def mul(a, b):
    return a * b
"""


def test_code_that_deselects_the_failing_test_is_not_verified(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", PYTEST_TESTS, {"calc.py": HIDES_A_TEST})
    report = verify_change(repo)
    assert report.status is Status.INDETERMINATE, explain(report)
    assert any(t.endswith("test_add") for t in _listed(report)), report.to_dict()
    assert "test_add" in report.note and "missing" in report.note


PRINTS_UNITTEST_OK = """\
import os
import sys


def add(a, b):
    return a - b


def mul(a, b):
    return a * b


if "unittest" in sys.modules:
    # What unittest prints after a clean run, then an exit before any test ran.
    sys.stderr.write("..\\n" + "-" * 70 + "\\nRan 2 tests in 0.001s\\n\\nOK\\n")
    sys.stderr.flush()
    os._exit(0)
"""


def test_unittest_summary_printed_by_the_code_is_not_verified(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", UNITTEST_TESTS, {"calc.py": PRINTS_UNITTEST_OK})
    report = verify_change(repo)
    assert report.status is not Status.VERIFIED, explain(report)
    (test,) = [e for e in report.checks if e.check.name == "unittest"]
    assert not test.passed, explain(report)
    assert "listing" in test.note, test.note
    listed = _listed(report)
    assert any(t.endswith("test_add") for t in listed), report.to_dict()
    assert any(t.endswith("test_mul") for t in listed), report.to_dict()


FORGES_JUNIT_AND_SWALLOWS_THE_SUMMARY = """\
import os
import sys

PASSING = (
    '<testsuites><testsuite name="pytest" tests="2">'
    '<testcase classname="tests.test_calc" name="test_add" time="0.001"/>'
    '<testcase classname="tests.test_calc" name="test_mul" time="0.001"/>'
    "</testsuite></testsuites>"
)

for arg in sys.argv:
    if arg.startswith("--junitxml="):
        with open(arg.split("=", 1)[1], "w") as report:
            report.write(PASSING)
        # Nothing pytest prints from here on is seen, and the run ends "successfully".
        os.close(1)
        os._exit(0)


def add(a, b):
    return a - b


def mul(a, b):
    return a * b
"""


def test_pytest_run_whose_summary_never_appears_is_not_verified(tmp_path: Path) -> None:
    repo = _repo(
        tmp_path / "repo", PYTEST_TESTS, {"calc.py": FORGES_JUNIT_AND_SWALLOWS_THE_SUMMARY}
    )
    report = verify_change(repo)
    assert report.status is not Status.VERIFIED, explain(report)
    (test,) = [e for e in report.checks if e.check.name == "pytest"]
    assert not test.passed, explain(report)
    assert "summary" in test.note, test.note


NODE_PACKAGE = (
    '{"name": "calc", "version": "0.0.0", "type": "module", "scripts": {"test": "node --test"}}\n'
)
NODE_CALC = (
    "export function add(a, b) { return a + b; }\nexport function mul(a, b) { return a * b; }\n"
)
NODE_TESTS = """\
import { test } from "node:test";
import assert from "node:assert/strict";
import { add, mul } from "../calc.mjs";

test("adds", () => { assert.equal(add(2, 3), 5); });
test("multiplies", () => { assert.equal(mul(2, 3), 6); });
"""
# The module the tests import ends their process "successfully" before a test ran: node's
# runner then reports the file itself as one passing test.
NODE_EXITS_EARLY = """\
export function add(a, b) { return a - b; }
export function mul(a, b) { return a * b; }
process.exit(0);
"""


def test_node_module_that_exits_before_the_tests_run_is_not_verified(tmp_path: Path) -> None:
    base = {"package.json": NODE_PACKAGE, "calc.mjs": NODE_CALC, "test/calc.test.mjs": NODE_TESTS}
    repo = change_on_base(tmp_path / "repo", base, {"calc.mjs": NODE_EXITS_EARLY}, dedent=False)
    report = verify_change(repo)
    assert report.status is not Status.VERIFIED, explain(report)
    listed = _listed(report)
    assert any(t.endswith(":adds") for t in listed), report.to_dict()
    assert any(t.endswith(":multiplies") for t in listed), report.to_dict()


# --------------------------------------------------------------------------- honest work

FIXED_MUL_AND_A_NEW_FUNCTION = """\
def add(a, b):
    return a + b


def mul(a, b):
    return a * b


def sub(a, b):
    return a - b
"""

NEW_TEST = "from calc import sub\n\n\ndef test_sub():\n    assert sub(5, 3) == 2\n"


def test_an_honest_change_that_adds_a_test_stays_verified(tmp_path: Path) -> None:
    change = {"calc.py": FIXED_MUL_AND_A_NEW_FUNCTION, "tests/test_sub.py": NEW_TEST}
    repo = _repo(tmp_path / "repo", PYTEST_TESTS, change)
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)
    base = report.to_dict()["extra"]["base_tests"]
    assert base["not_executed"] == [] and base["unavailable"] is None, base
    assert base["duration_s"] > 0 and base["cached"] is False, base
    (pytest_at_base,) = base["checks"]
    assert pytest_at_base["passed"] == 2, base


def test_the_base_outcomes_are_remembered_for_the_next_change(tmp_path: Path) -> None:
    """Judging a second change against the same base does not run the base's tests again."""
    repo = _repo(tmp_path / "repo", PYTEST_TESTS, {"calc.py": FIXED_MUL_AND_A_NEW_FUNCTION})
    options = VerifyOptions(base="HEAD~1", protect=True, cache_dir=str(tmp_path / "cache"))
    first = assay.verify(repo, options)
    assert first.status is Status.VERIFIED, explain(first)
    write(repo, {"calc.py": SKIPS_AT_RUN_TIME})
    second = assay.verify(repo, options)
    base = second.to_dict()["extra"]["base_tests"]
    assert base["cached"] is True, base
    assert second.status is Status.INDETERMINATE, explain(second)
    assert any(t.endswith("test_add") for t in _listed(second)), base

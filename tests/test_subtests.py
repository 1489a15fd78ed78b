"""Subtests counted as their runner counts tests: a test whose subtests fail is one failed
test, whatever the number of failing subtests (real unittest and real pytest runs)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from assay.classify import classify
from assay.evidence import Check
from assay.parsers import parse_output, report_path
from assay.report import aggregate
from assay.verdict import Kind, Verdict
from tests.results import process_result

# Three tests; the third has five subtests, of which two fail.
SUITE = """\
import unittest


class Calc(unittest.TestCase):
    def test_add(self):
        self.assertEqual(1 + 1, 2)

    def test_mul(self):
        self.assertEqual(2 * 3, 6)

    def test_table(self):
        for i in range(5):
            with self.subTest(i=i):
                self.assertNotIn(i, (1, 3))
"""

# Thirty subtests failing in a suite of three tests: more failures than tests.
MANY = SUITE.replace("range(5)", "range(30)").replace("(1, 3)", "range(1, 31)")


def _suite(tmp_path: Path, text: str) -> Path:
    (tmp_path / "test_calc.py").write_text(text)
    return tmp_path


def _note(c: Check, argv: list[str], cwd: Path, report_dir: Path | None = None) -> str:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=120, check=False)
    ran = process_result(
        tuple(argv), cwd=str(cwd), exit_code=done.returncode, stdout=done.stdout, stderr=done.stderr
    )
    evidence = classify(c, ran, parse_output(c, ran, report_dir))
    return aggregate([evidence]).note


def _pytest_run(tmp_path: Path, text: str) -> tuple[Check, list[str], Path, Path]:
    """The check, argv, directory and report directory of a real pytest run of `text`."""
    (tmp_path / "repo").mkdir()
    (tmp_path / "reports").mkdir()
    cwd, reports = _suite(tmp_path / "repo", text), tmp_path / "reports"
    c = Check(name="pytest", kind=Kind.TEST, argv=("pytest",), tool="pytest")
    junit = report_path(reports, c, "xml")
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}"]
    return c, argv, cwd, reports


@pytest.mark.parametrize("verbose", [False, True])
@pytest.mark.parametrize("text", [SUITE, MANY])
def test_unittest_counts_a_test_with_failing_subtests_once(
    tmp_path: Path, verbose: bool, text: str
) -> None:
    argv = [sys.executable, "-m", "unittest", *(["-v"] if verbose else [])]
    c = Check(name="unittest", kind=Kind.TEST, argv=tuple(argv), tool="unittest")
    note = _note(c, argv, _suite(tmp_path, text))
    assert "unittest failed: 1 of 3 tests failed" in note, note


@pytest.mark.parametrize("text", [SUITE, MANY])
def test_pytest_counts_a_test_with_failing_subtests_once(tmp_path: Path, text: str) -> None:
    c, argv, cwd, reports = _pytest_run(tmp_path, text)
    note = _note(c, argv, cwd, reports)
    assert "pytest failed: 1 of 3 tests failed" in note, note


# python-slugify 9.2.0: a test passes while some of its subtests skip. pytest 9 writes it to
# the JUnit report as skipped (a <skipped> per subtest) and counts it passed in its summary.
SKIPPING_SUBTESTS = """\
import unittest


class Backends(unittest.TestCase):
    def test_plain(self):
        self.assertEqual(1 + 1, 2)

    def test_each_backend(self):
        for name in ("ascii", "unidecode", "text_unidecode"):
            with self.subTest(backend=name):
                if name != "ascii":
                    self.skipTest(f"{name} absent")
                self.assertTrue(name)

    @unittest.skip("whole test")
    def test_skipped(self):
        pass
"""


def test_pytest_a_passing_test_whose_subtests_skip_is_no_disagreement(tmp_path: Path) -> None:
    c, argv, cwd, reports = _pytest_run(tmp_path, SKIPPING_SUBTESTS)
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and "subtests" in done.stdout, done.stdout
    ran = process_result(
        tuple(argv), cwd=str(cwd), exit_code=0, stdout=done.stdout, stderr=done.stderr
    )
    evidence = classify(c, ran, parse_output(c, ran, reports))
    assert evidence.verdict is Verdict.PASS, evidence.note
    # A forged summary claiming more passes than the report could hold still disagrees.
    forged = done.stdout.replace("2 passed", "4 passed")
    ran = process_result(tuple(argv), cwd=str(cwd), exit_code=0, stdout=forged, stderr="")
    assert classify(c, ran, parse_output(c, ran, reports)).verdict is not Verdict.PASS


def test_unittest_skipped_subtests_are_not_skipped_tests(tmp_path: Path) -> None:
    """pathspec 1.1.1: 197 tests skip 276 subtests (a backend not installed); unittest's
    summary says `OK (skipped=276)`, its -v listing which tests were skipped. A test that
    skipped some subtests and passed the others ran and passed (pytest says so too)."""
    argv = [sys.executable, "-m", "unittest", "-v"]
    c = Check(name="unittest", kind=Kind.TEST, argv=tuple(argv), tool="unittest")
    cwd = _suite(tmp_path, SKIPPING_SUBTESTS)
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=120, check=False)
    assert "OK (skipped=3)" in done.stderr, done.stderr  # more skips than the 3 tests
    ran = process_result(tuple(argv), cwd=str(cwd), exit_code=0, stdout="", stderr=done.stderr)
    evidence = classify(c, ran, parse_output(c, ran, None))
    assert evidence.verdict is Verdict.PASS, evidence.note
    assert evidence.tests is not None
    assert (evidence.tests.passed, evidence.tests.skipped) == (2, 1)

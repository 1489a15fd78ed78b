"""`--rerun-failures N`: a failing test is run again, alone, in a fresh process in the same
workspace; one that passes on a rerun is flaky, and its check is INDETERMINATE naming it,
never VERIFIED and never silently FAILED. One that fails every rerun keeps the check FAILED.

The flaky tests here are real: each fails the first time it runs in a workspace and leaves a
file there that makes every later run of it pass (the workspace lives as long as the
verification, so the rerun finds it; the source tree is a copy's source and never sees it).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.evidence import Evidence
from assay.pipeline import VerifyOptions, VerifyUsageError
from assay.verdict import Cause, Kind, Status, Verdict
from tests.cli import assay as assay_cli
from tests.cli import assay_env, no_traceback, path_with_venv
from tests.repos import write_dedented

PYPROJECT = '[project]\nname = "fx"\nversion = "0.1.0"\n\n[tool.pytest.ini_options]\n'

#: Fails the first time it runs in a workspace, passes from then on.
FLAKY_PY = """
    from pathlib import Path

    SEEN = Path(__file__).with_name(".seen-flaky")


    def test_steady():
        assert 1 + 1 == 2


    class TestOrder:
        def test_flaky(self):
            first = not SEEN.exists()
            SEEN.write_text("ran once")
            assert not first, "fails the first time it runs in this workspace"
"""

BROKEN_PY = """
    def test_steady():
        assert 1 + 1 == 2


    def test_broken():
        assert 1 + 1 == 3, "wrong every time"
"""

GO_MOD = "module example.com/flaky\n\ngo 1.19\n"
GO_FLAKY_TEST = """
    package flaky

    import (
    \t"os"
    \t"testing"
    )

    func TestSteady(t *testing.T) {}

    // Fails the first time it runs in this workspace (go test runs in the package's directory).
    func TestFlaky(t *testing.T) {
    \t_, err := os.Stat(".seen-flaky")
    \tif werr := os.WriteFile(".seen-flaky", []byte("ran once"), 0o644); werr != nil {
    \t\tt.Fatal(werr)
    \t}
    \tif err != nil {
    \t\tt.Fatal("fails the first time it runs in this workspace")
    \t}
    }
"""
GO_BROKEN_TEST = """
    package flaky

    import "testing"

    func TestSteady(t *testing.T) {}

    func TestBroken(t *testing.T) { t.Fatal("wrong every time") }
"""
GO_LIB = "package flaky\n\n// One is one.\nfunc One() int { return 1 }\n"


@pytest.fixture(autouse=True)
def _project_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest comes from this interpreter's environment."""
    monkeypatch.setenv("PATH", path_with_venv())


def _python_repo(root: Path, test: str) -> Path:
    return write_dedented(root, {"pyproject.toml": PYPROJECT, "tests/test_it.py": test})


def _go_repo(root: Path, test: str) -> Path:
    return write_dedented(root, {"go.mod": GO_MOD, "lib.go": GO_LIB, "lib_test.go": test})


def _verify(repo: Path, **fields: Any) -> assay.Report:
    options = VerifyOptions(use_cache=False, kinds=frozenset({Kind.TEST}), **fields)
    return assay.verify(repo, options)


def _test_check(report: assay.Report) -> Evidence:
    (check,) = [e for e in report.checks if e.check.kind is Kind.TEST]
    return check


# --------------------------------------------------------------------------- pytest


def test_a_pytest_test_that_passes_on_a_rerun_is_flaky_and_named(tmp_path: Path) -> None:
    repo = _python_repo(tmp_path / "repo", FLAKY_PY)
    report = _verify(repo, rerun_failures=2)
    check = _test_check(report)
    flaky = "tests.test_it.TestOrder::test_flaky"
    assert report.status is Status.INDETERMINATE, report.note
    assert (check.verdict, check.cause) == (Verdict.INCONCLUSIVE, Cause.FLAKY_TESTS)
    assert flaky in check.note and flaky in report.note
    reruns = check.extra["reruns"]
    assert reruns["flaky"] == [flaky] and reruns["failing"] == []
    assert reruns["tests"] == [flaky] and reruns["asked"] == 2
    # The first rerun passed, so no second one was needed; only the failing test ran again.
    (run,) = reruns["runs"]
    assert run["outcomes"] == {flaky: "passed"}
    assert "tests.test_it::test_steady" not in json.dumps(reruns)
    assert not (repo / "tests" / ".seen-flaky").exists()  # the workspace was a copy
    assert json.loads(json.dumps(report.to_dict()))["checks"][0]["extra"]["reruns"]["flaky"]


def test_a_pytest_test_that_fails_every_rerun_keeps_the_check_failed(tmp_path: Path) -> None:
    repo = _python_repo(tmp_path / "repo", BROKEN_PY)
    report = _verify(repo, rerun_failures=2)
    check = _test_check(report)
    broken = "tests.test_it::test_broken"
    assert report.status is Status.FAILED, report.note
    assert (check.verdict, check.cause) == (Verdict.FAIL, Cause.EXIT_NONZERO)
    reruns = check.extra["reruns"]
    assert reruns["failing"] == [broken] and reruns["flaky"] == []
    assert [run["outcomes"] for run in reruns["runs"]] == [{broken: "failed"}] * 2


def test_a_flaky_test_beside_one_that_fails_every_rerun_is_named_and_the_check_failed(
    tmp_path: Path,
) -> None:
    both = FLAKY_PY + "\n\n    def test_broken():\n        assert 1 + 1 == 3\n"
    repo = _python_repo(tmp_path / "repo", both)
    report = _verify(repo, rerun_failures=1, all_tests=True)
    check = _test_check(report)
    assert report.status is Status.FAILED, report.note
    reruns = check.extra["reruns"]
    assert reruns["flaky"] == ["tests.test_it.TestOrder::test_flaky"]
    assert reruns["failing"] == ["tests.test_it::test_broken"]
    assert "tests.test_it.TestOrder::test_flaky" in check.note


def test_without_reruns_a_flaky_test_fails_as_before(tmp_path: Path) -> None:
    repo = _python_repo(tmp_path / "repo", FLAKY_PY)
    report = _verify(repo)
    check = _test_check(report)
    assert report.status is Status.FAILED
    assert (check.verdict, check.cause) == (Verdict.FAIL, Cause.EXIT_NONZERO)
    assert "reruns" not in check.extra


@pytest.mark.parametrize("value", [-1, 1.5, True, "2"])
def test_an_unusable_rerun_count_is_a_usage_error(value: object) -> None:
    with pytest.raises(VerifyUsageError, match="rerun_failures"):
        VerifyOptions(rerun_failures=value)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- go

needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="needs go")


@needs_go
def test_a_go_test_that_passes_on_a_rerun_is_flaky_and_named(tmp_path: Path) -> None:
    repo = _go_repo(tmp_path / "repo", GO_FLAKY_TEST)
    report = _verify(repo, rerun_failures=2)
    check = _test_check(report)
    assert report.status is Status.INDETERMINATE, report.note
    assert (check.verdict, check.cause) == (Verdict.INCONCLUSIVE, Cause.FLAKY_TESTS)
    reruns = check.extra["reruns"]
    assert reruns["flaky"] == ["example.com/flaky.TestFlaky"]
    (run,) = reruns["runs"]
    assert run["outcomes"] == {"example.com/flaky.TestFlaky": "passed"}
    (argv,) = run["argv"]
    assert argv[-3:] == ["-run", "^(TestFlaky)$", "example.com/flaky"], argv


@needs_go
def test_a_go_test_that_fails_every_rerun_keeps_the_check_failed(tmp_path: Path) -> None:
    repo = _go_repo(tmp_path / "repo", GO_BROKEN_TEST)
    report = _verify(repo, rerun_failures=1)
    check = _test_check(report)
    assert report.status is Status.FAILED, report.note
    assert check.extra["reruns"]["failing"] == ["example.com/flaky.TestBroken"]


# --------------------------------------------------------------------------- the command line


def test_the_command_line_names_the_flaky_test_in_json_and_text(tmp_path: Path) -> None:
    repo = _python_repo(tmp_path / "repo", FLAKY_PY)
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"), PATH=path_with_venv())
    args = ("verify", "--no-cache", "--kind", "test", "--rerun-failures", "1", str(repo))
    done = assay_cli(*args, "--json", env=env, timeout=300)
    no_traceback(done)
    report = json.loads(done.stdout)
    assert (done.returncode, report["status"]) == (3, "INDETERMINATE"), report["note"]
    assert "tests.test_it.TestOrder::test_flaky" in report["note"]
    (check,) = report["checks"]
    assert check["cause"] == "flaky_tests"
    text = assay_cli(*args, env=env, timeout=300)
    no_traceback(text)
    assert text.returncode == 3
    assert "tests.test_it.TestOrder::test_flaky" in text.stdout


def test_the_command_line_refuses_a_negative_rerun_count(tmp_path: Path) -> None:
    repo = _python_repo(tmp_path / "repo", FLAKY_PY)
    done = assay_cli("verify", "--rerun-failures", "-1", str(repo), env=assay_env(), timeout=60)
    no_traceback(done)
    assert done.returncode == 2


# --------------------------------------------------------------------------- the verdict cache


def test_a_failure_cached_without_reruns_is_not_the_answer_when_reruns_are_asked(
    tmp_path: Path,
) -> None:
    repo = _python_repo(tmp_path / "repo", FLAKY_PY)
    state = str(tmp_path / "state")
    options = VerifyOptions(kinds=frozenset({Kind.TEST}), cache_dir=state)
    first = assay.verify(repo, options)
    assert first.status is Status.FAILED and first.record.cached is None
    again = assay.verify(repo, replace(options, rerun_failures=1))
    assert again.record.cached is None, "a failure measured without reruns was reused"
    assert again.status is Status.INDETERMINATE, again.note


# --------------------------------------------------------------------------- what is not rerun

UNITTEST_FLAKY = """
    import unittest
    from pathlib import Path

    SEEN = Path(__file__).with_name(".seen-flaky")


    class TestOrder(unittest.TestCase):
        def test_flaky(self):
            first = not SEEN.exists()
            SEEN.write_text("ran once")
            self.assertFalse(first, "fails the first time it runs in this workspace")
"""


@pytest.mark.parametrize("layout", ["flat", "discover -s tests"])
def test_a_unittest_test_that_passes_on_a_rerun_is_flaky_and_named(
    tmp_path: Path, layout: str
) -> None:
    files = {"tests/__init__.py": "", "tests/test_it.py": UNITTEST_FLAKY}
    if layout != "flat":
        # Discovery from tests/ names the test from there: `test_it.TestOrder.test_flaky`.
        config = "[tool.assay.commands]\ntest = 'python -m unittest discover -s tests'\n"
        files["pyproject.toml"] = PYPROJECT + config
    repo = write_dedented(tmp_path / "repo", files)
    report = _verify(repo, rerun_failures=2)
    check = _test_check(report)
    assert check.check.tool == "unittest", check.check
    assert report.status is Status.INDETERMINATE, report.note
    (flaky,) = check.extra["reruns"]["flaky"]
    assert flaky.endswith("test_it.TestOrder.test_flaky") and flaky in report.note


NODE_BROKEN = """
    const test = require("node:test");
    const assert = require("node:assert");
    test("broken", () => { assert.strictEqual(1, 2); });
"""


@pytest.mark.skipif(shutil.which("npm") is None, reason="needs node and npm")
def test_a_runner_reruns_cannot_select_for_keeps_its_failure_and_says_why(
    tmp_path: Path,
) -> None:
    package = '{"name": "x", "version": "1.0.0", "scripts": {"test": "node --test"}}\n'
    repo = write_dedented(
        tmp_path / "repo", {"package.json": package, "test/a.test.js": NODE_BROKEN}
    )
    report = _verify(repo, rerun_failures=2)
    check = _test_check(report)
    assert report.status is Status.FAILED, report.note
    assert "is not rerun" in check.extra["reruns"]["not_rerun"]
    assert "runs" not in check.extra["reruns"]


GO_MAIN_FAILS = """
    package broken

    import (
    \t"os"
    \t"testing"
    )

    // The package fails before any test of it runs: a failure no test name carries.
    func TestMain(m *testing.M) { os.Exit(1) }

    func TestNever(t *testing.T) {}
"""


@needs_go
def test_a_go_package_that_failed_outside_its_tests_keeps_the_check_failed(
    tmp_path: Path,
) -> None:
    repo = _go_repo(tmp_path / "repo", GO_FLAKY_TEST)
    write_dedented(repo, {"broken/broken_test.go": GO_MAIN_FAILS})
    report = _verify(repo, rerun_failures=1, all_tests=True)
    check = _test_check(report)
    assert report.status is Status.FAILED, report.note
    reruns = check.extra["reruns"]
    assert reruns["flaky"] == ["example.com/flaky.TestFlaky"], reruns
    assert "example.com/flaky.TestFlaky" in check.note


def test_a_go_rerun_keeps_the_checks_flags_and_names_one_package() -> None:
    from assay.evidence import Check, TestCase, evidence_for
    from assay.reruns import rerun_checks

    argv = ("go", "test", "-race", "-tags", "slow", "./...", "-run", "Old", "-count=1")
    check = Check(name="go-test", kind=Kind.TEST, argv=argv, tool="go")
    cases = (
        TestCase("gopkg.in/yaml.v3.TestA/sub.case", "failed"),
        TestCase("gopkg.in/yaml.v3.TestA", "failed"),
        TestCase("example.com/m/b.TestB", "failed"),
        TestCase("example.com/m/b.TestC", "passed"),
    )
    failed = evidence_for(check, Cause.EXIT_NONZERO, test_cases=cases)
    reruns = rerun_checks(failed, Path("/nonexistent"))
    assert reruns.tests == ("gopkg.in/yaml.v3.TestA", "example.com/m/b.TestB")
    assert [c.argv for c in reruns.checks] == [
        (
            "go",
            "test",
            "-race",
            "-tags",
            "slow",
            "-count=1",
            "-run",
            "^(TestA)$",
            "gopkg.in/yaml.v3",
        ),
        (
            "go",
            "test",
            "-race",
            "-tags",
            "slow",
            "-count=1",
            "-run",
            "^(TestB)$",
            "example.com/m/b",
        ),
    ]


# --------------------------------------------------------------------------- attacks

PLANTS_A_LINK = """
    import os
    import sys


    def test_plants_a_link_where_the_rerun_plugin_would_go():
        report = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--junitxml="))
        reports = os.path.dirname(report)
        for name in ("rerun-plugin", "assay_rerun_failures.py"):
            os.symlink(TARGET, os.path.join(reports, name))
        assert False, "fails, so that its tests are rerun"
"""


def test_a_link_the_first_run_left_in_the_reports_directory_is_never_written_through(
    tmp_path: Path,
) -> None:
    target = tmp_path / "host-dir"
    target.mkdir()
    test = f"    TARGET = {str(target)!r}\n" + PLANTS_A_LINK
    repo = _python_repo(tmp_path / "repo", test)
    report = _verify(repo, rerun_failures=1)
    check = _test_check(report)
    assert report.status is Status.FAILED, report.note
    assert "reruns" in check.extra
    assert list(target.iterdir()) == [], "the rerun plugin was written through a planted link"


@pytest.mark.parametrize("cause", [Cause.REPORT_MISMATCH, Cause.VERIFIER_CRASH, Cause.TIMEOUT])
def test_only_a_test_run_that_failed_on_its_own_word_is_rerun(cause: Cause, tmp_path: Path) -> None:
    from assay.evidence import Check, TestCase, evidence_for
    from assay.reruns import rerun_failures

    class NoRuns:
        """The session seam: a rerun here would be a bug."""

        reports = tmp_path

        def run(self, *args: object, **kwargs: object) -> list[Evidence]:
            raise AssertionError("rerun")

    check = Check(name="pytest", kind=Kind.TEST, argv=("pytest",), tool="pytest")
    cases = (TestCase("tests.test_it::test_x", "failed"),)
    done = evidence_for(check, cause, test_cases=cases)
    assert rerun_failures(NoRuns(), [done], 3) == [done]  # type: ignore[arg-type]

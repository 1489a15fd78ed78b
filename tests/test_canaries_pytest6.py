"""The pytest canaries and their guard under pytest 6, as projects that pin `pytest<7`
still run it (pyrsistent): pytest 6 keeps its JUnit writer in `config._store`, not
`config.stash`, and builds a module from a `py.path` given as `fspath`. An honest change
was INDETERMINATE there ("pytest's report was not sealed"). Run with a real pytest 6.2.5
installed from PyPI into the tree's own virtualenv, as `--install` makes it."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.verdict import Cause, Status, Verdict
from tests.attacks import explain, verify_change
from tests.repos import commit_all, git, tree_with_venv, write
from tests.test_attacks_canaries import CALC, LATE_REWRITES, PYTEST_TESTS, WRONG_CALC

pytestmark = pytest.mark.slow

BASE = {
    ".gitignore": ".venv/\n",
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1.0"\n',
    "pytest.ini": "[pytest]\ntestpaths = tests\n",
    "calc.py": CALC,
    "tests/test_calc.py": PYTEST_TESTS,
}


@pytest.fixture(scope="module")
def repo_with_pytest_6() -> Iterator[Path]:
    """A repository whose own `.venv` has pytest 6, with the base committed."""
    repo = tree_with_venv("assay-pytest6-", "pytest==6.2.5")
    commit_all(write(repo, BASE), "base")
    yield repo
    shutil.rmtree(repo)


@pytest.fixture
def repo(repo_with_pytest_6: Path) -> Iterator[Path]:
    """The repository, back at its base once the test is done with it."""
    yield repo_with_pytest_6
    git(repo_with_pytest_6, "reset", "-q", "--hard", "HEAD~1")


def test_an_honest_change_under_pytest_6_is_verified_and_sealed(repo: Path) -> None:
    commit_all(write(repo, {"README.md": "calc\n"}), "change")
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)
    (test,) = [e for e in report.checks if e.check.kind.value == "test"]
    assert test.checker is not None and test.checker.version == "6.2.5", test.checker
    assert test.extra["canaries"]["finding"] == "as planted", explain(report)


def test_a_wrong_value_under_pytest_6_is_failed(repo: Path) -> None:
    commit_all(write(repo, {"calc.py": WRONG_CALC}), "change")
    report = verify_change(repo)
    assert report.status is Status.FAILED, explain(report)


def test_a_report_rewritten_at_exit_under_pytest_6_is_found(repo: Path) -> None:
    rewrite = LATE_REWRITES["report rewritten at exit"]
    commit_all(write(repo, {"calc.py": rewrite + "\n\n" + WRONG_CALC}), "change")
    report = verify_change(repo)
    (test,) = [e for e in report.checks if e.check.kind.value == "test"]
    assert (test.verdict, test.cause) == (Verdict.INCONCLUSIVE, Cause.REPORT_TAMPERED), explain(
        report
    )
    assert "pytest's report was rewritten after pytest wrote it" in test.note, explain(report)

"""flake8's and pylint's findings, as a Makefile's or tox's lint prints them, named in the
evidence: read from the real tools' output (both are test dependencies)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from assay.evidence import Check
from assay.parsers import parse_output
from assay.verdict import Kind
from tests.cli import VENV_BIN
from tests.repos import write
from tests.results import process_result
from tests.test_verify_e2e import Assay

UNUSED_IMPORT = "import os\n\n\ndef f():\n    return 1\n"


@pytest.fixture
def assay(tmp_path: Path) -> Assay:
    return Assay(tmp_path / "cache")


def linted_repo(root: Path, recipe: str) -> Path:
    return write(
        root,
        {"Makefile": f"lint:\n\t{recipe}\n", "pkg/__init__.py": "", "pkg/mod.py": UNUSED_IMPORT},
    )


def findings(report: dict) -> list[dict]:
    (check,) = report["checks"]
    return check["diagnostics"]


def test_flake8s_findings_in_a_make_target_are_named(tmp_path: Path, assay: Assay) -> None:
    repo = linted_repo(tmp_path / "repo", "flake8 pkg")
    report = assay.verify(repo, "--sandbox", "local")
    assert report["status"] == "FAILED", report["note"]
    (finding,) = findings(report)
    assert finding["code"] == "F401" and finding["tool"] == "flake8", finding
    assert (finding["file"], finding["line"], finding["column"]) == ("pkg/mod.py", 1, 1)
    assert "pkg/mod.py:1: 'os' imported but unused" in report["note"]


def test_pylints_findings_are_named_with_their_place(tmp_path: Path, assay: Assay) -> None:
    repo = linted_repo(tmp_path / "repo", "pylint --disable=all --enable=unused-import pkg")
    report = assay.verify(repo, "--sandbox", "local")
    assert report["status"] == "FAILED", report["note"]
    (finding,) = findings(report)
    assert finding["code"] == "W0611" and finding["tool"] == "pylint", finding
    # pylint counts columns from 0; evidence from 1, as flake8 does.
    assert (finding["file"], finding["line"], finding["column"]) == ("pkg/mod.py", 1, 1)
    assert "Unused import os (unused-import)" in report["note"]


def test_a_clean_lint_is_no_finding(tmp_path: Path, assay: Assay) -> None:
    repo = linted_repo(tmp_path / "repo", "flake8 pkg")
    (repo / "pkg" / "mod.py").write_text("def f():\n    return 1\n")
    report = assay.verify(repo, "--sandbox", "local")
    (check,) = report["checks"]
    assert check["verdict"] == "pass" and not check["diagnostics"], report


def test_failing_tests_are_why_a_test_check_failed_not_lines_shaped_like_findings() -> None:
    """A test may print a finding's shape (a linter's own tests do): a run whose tests
    failed is not read for findings; one that counted none failing is."""
    check = Check(name="make-test", argv=("make", "test"), kind=Kind.TEST, tool="make")
    flake8 = subprocess.run(
        [str(VENV_BIN / "flake8"), "-"],
        input=UNUSED_IMPORT,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    assert flake8.startswith("stdin:1:1: F401"), flake8
    tests_failed = parse_output(
        check,
        process_result(check.argv, exit_code=1, stdout=flake8 + "1 failed, 2 passed in 0.1s\n"),
    )
    assert tests_failed.tests is not None and tests_failed.tests.failed == 1
    assert not tests_failed.diagnostics
    linted = parse_output(check, process_result(check.argv, exit_code=1, stdout=flake8))
    assert [d.code for d in linted.diagnostics] == ["F401"]

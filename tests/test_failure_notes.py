"""A failure's note names what failed: a test run's failing tests rather than the compile
errors its probes print on purpose, and a build's error rather than a test count read
from "1 error" (real programs' output: gcc, make and tsc)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from assay.classify import classify
from assay.evidence import Check
from assay.parsers import parse_output
from assay.report import aggregate
from assay.verdict import Cause, Kind, Verdict
from tests.cli import ASSAY, path_with_venv
from tests.results import process_result

# A C project's test recipe in the way configure scripts and test harnesses do it: a
# feature probe compiled first, expected to fail where the feature is missing, then the
# test program, which fails one test of three.
PROBE = "int main(void) { return undeclared_feature(); }\n"
TESTS = r"""
#include <stdio.h>
static int failed, passed;
static void check(const char *name, int ok) {
    if (ok) { passed++; } else { failed++; printf("FAIL: %s\n", name); }
}
int main(void) {
    check("adds", 1 + 1 == 2);
    check("multiplies", 2 * 3 == 6);
    check("divides", 7 / 2 == 4);
    printf("Tests passed: %d\nTests failed: %d\n", passed, failed);
    return failed != 0;
}
"""
MAKEFILE = """\
test:
\t@gcc -Werror -c probe.c -o probe.o 2>&1 || echo "probe: feature missing, using fallback"
\t@gcc -o tests tests.c
\t@./tests
"""


def _needs(tool: str) -> None:
    # Never a skip: a test that does not run proves nothing, and CI installs these.
    assert shutil.which(tool) is not None, f"{tool} is not installed (.ci/run installs it)"


def _judged(c: Check, cwd: Path) -> tuple[Verdict, Cause, str, str]:
    done = subprocess.run(
        list(c.argv), cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )
    ran = process_result(
        c.argv, cwd=str(cwd), exit_code=done.returncode, stdout=done.stdout, stderr=done.stderr
    )
    evidence = classify(c, ran, parse_output(c, ran))
    return evidence.verdict, evidence.cause, aggregate([evidence]).note, ran.stdout.text


def test_a_test_run_is_described_by_its_failing_tests_not_its_probe_compiles(
    tmp_path: Path,
) -> None:
    _needs("gcc")
    _needs("make")
    (tmp_path / "probe.c").write_text(PROBE)
    (tmp_path / "tests.c").write_text(TESTS)
    (tmp_path / "Makefile").write_text(MAKEFILE)
    c = Check(name="make test", kind=Kind.TEST, argv=("make", "test"), tool="make")
    verdict, cause, note, output = _judged(c, tmp_path)
    assert "probe.c:1:" in output and "error:" in output  # the probe really failed to compile
    assert (verdict, cause) == (Verdict.FAIL, Cause.EXIT_NONZERO)
    assert note == "make test failed: 1 of 3 tests failed.", note


def test_a_build_is_not_described_as_failing_tests(tmp_path: Path) -> None:
    # tsc's closing line "Found 1 error in x.ts:1" reads like a test count ("1 error").
    _needs("tsc")
    _needs("make")
    (tmp_path / "x.ts").write_text('const x: number = "a";\n')
    (tmp_path / "Makefile").write_text("all:\n\ttsc --pretty --noEmit x.ts\n")
    c = Check(name="make", kind=Kind.BUILD, argv=("make",), tool="make")
    verdict, cause, note, output = _judged(c, tmp_path)
    assert "Found 1 error" in output
    assert (verdict, cause) == (Verdict.FAIL, Cause.EXIT_NONZERO)
    assert "tests failed" not in note, note
    assert note == "make failed: x.ts:1: Type 'string' is not assignable to type 'number'.", note


def test_a_lint_or_type_finding_names_the_tool_version_that_ran(tmp_path: Path) -> None:
    # A project that pins no linter is checked with whatever release is installed, and a
    # newer release finds more: the note says which one found this.
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pyproject.toml").write_text('[project]\nname = "m"\nversion = "1"\n[tool.mypy]\n')
    (repo / "m.py").write_text('x: int = "a"\n')
    (repo / "test_m.py").write_text("def test_one():\n    assert True\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    version = subprocess.run(
        [sys.executable, "-m", "mypy", "--version"], capture_output=True, text=True, check=True
    ).stdout.split()[1]
    report = _verified(repo, "typecheck", tmp_path)
    assert report["status"] == "FAILED", report["note"]
    assert report["note"] == (
        f'mypy failed: m.py:1: Incompatible types in assignment (expression has type "str", '
        f'variable has type "int") (mypy {version} ran).'
    ), report["note"]


def test_a_failure_without_findings_is_described_by_its_first_error_not_its_progress(
    tmp_path: Path,
) -> None:
    # cargo prints its progress ("Checking ...", "Blocking waiting for file lock") before
    # the error; run through make, nothing reads cargo's output as cargo's.
    _needs("cargo")
    _needs("make")
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "x"\nversion = "0.1.0"\n')
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.rs").write_text('fn main() {\n    let n: u32 = "a";\n}\n')
    (tmp_path / "Makefile").write_text("lint:\n\tcargo check --offline --color never\n")
    c = Check(name="make-lint", kind=Kind.LINT, argv=("make", "lint"), tool="make")
    verdict, cause, note, _ = _judged(c, tmp_path)
    assert verdict is Verdict.FAIL, (cause, note)
    assert note.startswith("make-lint failed (exited 2): src/main.rs:2:"), note
    assert "error[E0308]: mismatched types" in note, note


def test_a_runner_that_crashed_is_described_by_the_last_error_it_printed(tmp_path: Path) -> None:
    # bidict's sdist: pytest's options name a hypothesis profile its left-out conftest.py
    # registers; pytest stops with an INTERNALERROR (exit 3) before any test.
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    (repo / "conftest.py").write_text(
        "def pytest_sessionstart(session):\n"
        "    raise LookupError(\"Profile 'less-examples' is not registered\")\n"
    )
    (repo / "test_m.py").write_text("def test_one():\n    assert True\n")
    report = _verified(repo, "test", tmp_path)
    assert report["status"] == "INDETERMINATE", report["note"]
    assert report["note"] == (
        "pytest exited 3; the last error it printed: "
        "LookupError: Profile 'less-examples' is not registered."
    ), report["note"]


def test_a_conftest_that_cannot_be_imported_is_described_by_its_error(tmp_path: Path) -> None:
    """structlog with a syntax error its conftest imports: pytest exits 4 with
    "ImportError while loading conftest" and the cause on an `E   SyntaxError` line, which
    the note did not see ("its output does not say why"). The code does not load: a
    failure, named where the syntax error is."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "helper.py").write_text("def broken(:\n    pass\n")
    (repo / "conftest.py").write_text("import helper\n")
    (repo / "test_m.py").write_text("def test_one():\n    assert True\n")
    report = _verified(repo, "test", tmp_path)
    assert report["status"] == "FAILED", report["note"]
    assert report["note"] == "pytest failed: helper.py:1: SyntaxError: invalid syntax.", report[
        "note"
    ]


FAILING_SUITE = """
def test_adds():
    assert 1 + 1 == 2

def test_divides():
    assert 7 // 2 == 4

def test_multiplies():
    assert 2 * 3 == 6

def test_subtracts():
    assert 5 - 3 == 1
"""


def test_a_test_run_that_stops_at_its_first_failure_says_so_and_names_it(
    tmp_path: Path,
) -> None:
    # The quick gate runs pytest with -x: "1 of 1 tests failed" alone would read as if the
    # suite held one test (h11's and sniffio's mutants).
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pytest.ini").write_text("[pytest]\n")
    (repo / "test_m.py").write_text(FAILING_SUITE)
    report = _verified(repo, "test", tmp_path)
    assert report["status"] == "FAILED", report["note"]
    assert report["note"] == (
        "pytest failed: 1 of 2 tests failed: test_m::test_divides; "
        "-x stops the run at its first failure."
    ), report["note"]
    every = _verified(repo, "test", tmp_path, "--all")
    assert every["note"] == (
        "pytest failed: 2 of 4 tests failed, the first test_m::test_divides."
    ), every["note"]


def _verified(repo: Path, kind: str, tmp_path: Path, *extra: str) -> dict[str, Any]:
    """`assay verify --json --kind KIND` of `repo`, with the project's tools on PATH."""
    done = subprocess.run(
        [ASSAY, "verify", str(repo), "--json", "--kind", kind, *extra],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        env={**os.environ, "ASSAY_CACHE_DIR": str(tmp_path / "cache"), "PATH": path_with_venv()},
    )
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_a_failing_npm_script_is_told_by_its_error_not_npms_banner(tmp_path: Path) -> None:
    # path-to-regexp's `"lint": "ts-scripts lint"`: the note quoted `> path-to-regexp@8.4.2
    # lint`, the banner npm prints before every script.
    repo = tmp_path / "repo"
    repo.mkdir()
    script = "node -e \\\"console.error('Script does not exist: lint'); process.exit(1)\\\""
    (repo / "package.json").write_text(
        f'{{"name": "p", "version": "1.0.0", "scripts": {{"lint": "{script}"}}}}'
    )
    report = _verified(repo, "lint", tmp_path)
    assert report["status"] == "FAILED", report["note"]
    assert report["note"] == "npm-lint failed (exited 1): Script does not exist: lint.", report[
        "note"
    ]

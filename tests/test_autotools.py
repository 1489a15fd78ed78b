"""GNU autotools projects: discovery (a shipped configure, or autoreconf first), which suite
a maintainer means when a root Makefile stands beside configure.ac, Automake's `make check`
output, and real C repositories configured, built and tested by `assay verify` with the
real autoconf, automake and make."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from assay.discovery import discover
from assay.evidence import Check
from assay.parsers import parse_output
from assay.plan import plan
from assay.verdict import Kind
from tests.repos import commit_all, write_dedented
from tests.results import process_result
from tests.test_verify_e2e import Assay, explain, verdicts

needs_autotools = pytest.mark.skipif(
    any(shutil.which(t) is None for t in ("autoreconf", "automake", "make", "cc")),
    reason="needs autoconf, automake, make and a C compiler "
    "(apt-get install -y autoconf automake libtool gcc make)",
)


@pytest.fixture
def assay(tmp_path: Path) -> Assay:
    return Assay(tmp_path / "cache")


# --------------------------------------------------------------------------- a small C project

CONFIGURE_AC = """
    AC_INIT([calc], [1.0])
    AM_INIT_AUTOMAKE([foreign subdir-objects])
    AC_PROG_CC
    AC_PROG_RANLIB
    AC_CONFIG_FILES([Makefile])
    AC_OUTPUT
"""

# The library is built by `make`, the tests by `make check`: a compile error in calc.c is
# the build's, a wrong value the suite's.
MAKEFILE_AM = """
    noinst_LIBRARIES = libcalc.a
    libcalc_a_SOURCES = calc.c
    check_PROGRAMS = tests/test_add tests/test_mul
    tests_test_add_SOURCES = tests/test_add.c
    tests_test_add_LDADD = libcalc.a
    tests_test_mul_SOURCES = tests/test_mul.c
    tests_test_mul_LDADD = libcalc.a
    TESTS = $(check_PROGRAMS)
"""

CALC = {
    "pristine": "int add(int a, int b) { return a + b; }\nint mul(int a, int b) { return a * b; }\n",
    "wrong": "int add(int a, int b) { return a + b; }\nint mul(int a, int b) { return a + b; }\n",
    "hang": (
        "int add(int a, int b) { return a + b; }\n"
        "int mul(int a, int b) { volatile int x = 1; while (x) {} return a * b; }\n"
    ),
    "compile": "int add(int a, int b) { return a + b }\nint mul(int a, int b) { return a * b; }\n",
}


def _test_program(call: str, expected: int) -> str:
    return (
        "#include <stdio.h>\nint add(int, int);\nint mul(int, int);\n"
        "int main(void) {\n"
        f"  int got = {call};\n"
        f'  if (got != {expected}) {{ printf("{call}: expected {expected}, got %d\\n", got); '
        "return 1; }\n"
        "  return 0;\n}\n"
    )


# A hand-written Makefile of the kind that lingers beside a build system: its `test` target
# builds a demo that asserts nothing.
ROOT_MAKEFILE = """
    demo: calc.c
    \tcc -o demo calc.c

    test: demo
    \t./demo
"""


def autotools_repo(root: Path, variant: str = "pristine", **more: str) -> Path:
    files = {
        "configure.ac": CONFIGURE_AC,
        "Makefile.am": MAKEFILE_AM,
        "calc.c": CALC[variant],
        "tests/test_add.c": _test_program("add(2, 3)", 5),
        "tests/test_mul.c": _test_program("mul(2, 3)", 6),
        **more,
    }
    return write_dedented(root, files)


def release_tree(root: Path, variant: str = "pristine") -> Path:
    """What a release tarball holds: the sources with `configure` and `Makefile.in` made."""
    repo = autotools_repo(root, variant)
    subprocess.run(["autoreconf", "-fi"], cwd=repo, check=True, capture_output=True)
    shutil.rmtree(repo / "autom4te.cache")
    return repo


def _names(root: Path) -> dict[str, tuple[str, ...]]:
    return {c["name"]: tuple(c["argv"]) for c in plan(discover(root)).to_dict()["checks"]}


# --------------------------------------------------------------------------- discovery


def test_a_shipped_configure_is_run_then_make_check(tmp_path: Path) -> None:
    autotools_repo(tmp_path)
    (tmp_path / "configure").write_text("#!/bin/sh\nexit 0\n")
    names = _names(tmp_path)
    assert set(names) == {"autotools-build", "make-check"}, names
    assert "./configure" in names["autotools-build"][2], names
    assert "autoreconf" not in names["autotools-build"][2], names
    assert names["make-check"] == ("make", "-C", ".assay-autotools-build/tree", "check")


def test_a_tree_without_configure_runs_autoreconf_first(tmp_path: Path) -> None:
    names = _names(autotools_repo(tmp_path))
    build = names["autotools-build"]
    assert build[3] == "autoreconf" and "libtoolize" not in build, build
    # configure.ac that uses libtool needs libtoolize too.
    autotools_repo(tmp_path, **{"configure.ac": CONFIGURE_AC.replace("AC_PROG_RANLIB", "LT_INIT")})
    assert "libtoolize" in _names(tmp_path)["autotools-build"]


def test_configure_ac_without_makefile_am_plans_nothing_from_it(tmp_path: Path) -> None:
    write_dedented(tmp_path, {"configure.ac": CONFIGURE_AC, "calc.c": CALC["pristine"]})
    assert _names(tmp_path) == {}


# --------------------------------------------------------------------------- precedence


def test_make_check_outranks_a_hand_written_makefile_nothing_documents(tmp_path: Path) -> None:
    names = _names(autotools_repo(tmp_path, Makefile=ROOT_MAKEFILE))
    assert set(names) == {"autotools-build", "make-check"}, names


def test_the_makefile_wins_when_only_it_is_documented(tmp_path: Path) -> None:
    readme = "Build and test:\n\n```sh\nmake test\n```\n"
    autotools_repo(tmp_path, Makefile=ROOT_MAKEFILE, **{"README.md": readme})
    document = plan(discover(tmp_path)).to_dict()
    names = {c["name"] for c in document["checks"]}
    assert "make-test" in names and "make-check" not in names, document
    assert any("README.md" in d["reason"] for d in document["dropped"]), document["dropped"]


def test_ci_that_runs_configure_keeps_make_check(tmp_path: Path) -> None:
    ci = "jobs:\n  t:\n    steps:\n      - run: autoreconf -fi && ./configure && make check\n"
    readme = "```sh\nmake test\n```\n"
    autotools_repo(
        tmp_path, Makefile=ROOT_MAKEFILE, **{".github/workflows/ci.yml": ci, "README.md": readme}
    )
    assert set(_names(tmp_path)) == {"autotools-build", "make-check"}


def test_a_makefile_configure_wrote_never_outranks_make_check(tmp_path: Path) -> None:
    generated = "# Makefile.in generated by automake 1.16.5 from Makefile.am.\n# calc\n\ncheck:\n"
    autotools_repo(tmp_path, **{"README.md": "```\nmake test\n```\n"})
    (tmp_path / "Makefile").write_text(generated + "test:\n\t./run\n")
    assert set(_names(tmp_path)) == {"autotools-build", "make-check"}


# --------------------------------------------------------------------------- make check's output

SUMMARY = """\
PASS: tests/test_add
FAIL: tests/test_mul
XFAIL: tests/test_div
============================================================================
Testsuite summary for calc 1.0
============================================================================
# TOTAL: 3
# PASS:  1
# SKIP:  0
# XFAIL: 1
# FAIL:  1
# XPASS: 0
# ERROR: 0
============================================================================
See ./test-suite.log
============================================================================
make[2]: *** [Makefile:700: test-suite.log] Error 1
"""

PASSED = """\
PASS: tests/test_add
PASS: tests/test_mul
XFAIL: tests/test_div
SKIP: tests/test_net
============================================================================
# TOTAL: 4
# PASS:  2
# SKIP:  1
# XFAIL: 1
# FAIL:  0
# XPASS: 0
# ERROR: 0
"""


def _make_check(output: str, exit_code: int) -> tuple[Any, Any]:
    from assay.classify import classify

    check = Check(name="make-check", kind=Kind.TEST, argv=("make", "check"), tool="make-check")
    result = process_result(stdout=output, exit_code=exit_code)
    parsed = parse_output(check, result)
    return parsed, classify(check, result, parsed)


def test_make_check_failures_are_named_and_xfail_passes() -> None:
    parsed, evidence = _make_check(SUMMARY, 2)
    assert (parsed.tests.passed, parsed.tests.failed, parsed.tests.skipped) == (1, 1, 1)
    outcomes = {c.name: c.outcome for c in parsed.test_cases}
    assert outcomes == {
        "tests/test_add": "passed",
        "tests/test_mul": "failed",
        "tests/test_div": "xfailed",
    }
    assert (evidence.verdict.value, evidence.cause.value) == ("fail", "exit_nonzero")


def test_a_passing_make_check_is_a_pass() -> None:
    parsed, evidence = _make_check(PASSED, 0)
    assert (parsed.tests.passed, parsed.tests.failed, parsed.tests.skipped) == (2, 0, 2)
    assert (evidence.verdict.value, evidence.cause.value) == ("pass", "exit_zero")


@pytest.mark.parametrize("line", ["XPASS: tests/test_div", "ERROR: tests/test_div"])
def test_xpass_and_error_fail(line: str) -> None:
    key = line.split(":")[0]
    output = (
        PASSED.replace("XFAIL: tests/test_div", line)
        .replace("# XFAIL: 1", "# XFAIL: 0")
        .replace(f"# {key}: 0", f"# {key}: 1")
    )
    parsed, evidence = _make_check(output, 2)
    assert parsed.tests.any_failed, parsed.tests
    assert (evidence.verdict.value, evidence.cause.value) == ("fail", "exit_nonzero")


def test_summaries_of_every_directory_are_added_up() -> None:
    parsed, _ = _make_check(PASSED + PASSED.replace("tests/", "lib/"), 0)
    assert (parsed.tests.passed, parsed.tests.skipped) == (4, 4)


def test_a_summary_that_contradicts_the_per_test_lines_is_not_a_pass() -> None:
    # A test that prints the harness's own summary cannot hide a FAIL line beside it.
    forged = PASSED.replace("PASS: tests/test_mul", "FAIL: tests/test_mul")
    _, evidence = _make_check(forged, 0)
    assert evidence.verdict.value != "pass", evidence


def test_the_serial_harness_banner_is_read() -> None:
    parsed, evidence = _make_check("=====\n1 of 3 tests failed\n=====\n", 2)
    assert (parsed.tests.passed, parsed.tests.failed) == (2, 1)
    assert evidence.verdict.value == "fail"


# --------------------------------------------------------------------------- real runs


@pytest.mark.slow
@needs_autotools
@pytest.mark.parametrize(
    ("variant", "status", "failing"),
    [
        ("pristine", "VERIFIED", {}),
        ("wrong", "FAILED", {"make-check": ("fail", "exit_nonzero")}),
        ("hang", "INDETERMINATE", {"make-check": ("inconclusive", "timeout")}),
        ("compile", "FAILED", {"autotools-build": ("fail", "exit_nonzero")}),
    ],
)
def test_a_real_release_tree(
    variant: str, status: str, failing: dict[str, tuple[str, str]], tmp_path: Path, assay: Assay
) -> None:
    repo = release_tree(tmp_path / "repo", variant)
    before = sorted(p.name for p in repo.iterdir())
    report = assay.verify(repo, "--timeout", "30", "--no-cache")
    assert report["status"] == status, explain(report)
    got = {name: v for name, v in verdicts(report).items() if v[0] not in ("pass", "skipped")}
    assert got == failing, explain(report)
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["autotools-build"]["checker"]["tool"] == "configure"
    if variant == "pristine":
        assert checks["make-check"]["tests"]["passed"] == 2, checks["make-check"]
    if variant == "wrong":
        cases = checks["make-check"]["test_cases"]
        assert [t["name"] for t in cases if t["outcome"] == "failed"] == ["tests/test_mul"]
    if variant == "compile":
        assert checks["autotools-build"]["diagnostics"][0]["file"].endswith("calc.c")
    # configure and make ran in the sandbox's copy, never in the repository.
    assert sorted(p.name for p in repo.iterdir()) == before


@pytest.mark.slow
@needs_autotools
def test_a_real_git_tree_is_autoreconfed_in_the_sandbox(tmp_path: Path, assay: Assay) -> None:
    repo = autotools_repo(tmp_path / "repo", "wrong")
    report = assay.verify(repo, "--timeout", "60", "--no-cache")
    assert report["status"] == "FAILED", explain(report)
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["autotools-build"]["verdict"] == "pass", explain(report)
    assert checks["autotools-build"]["checker"]["tool"] == "autoreconf"
    cases = checks["make-check"]["test_cases"]
    assert [t["name"] for t in cases if t["outcome"] == "failed"] == ["tests/test_mul"]
    assert not (repo / "configure").exists()


@needs_autotools
def test_missing_automake_is_unverified_with_the_install_command(
    tmp_path: Path, assay: Assay
) -> None:
    # A real PATH with autoconf's autoreconf and make but no automake: autoreconf would
    # fail as if configure.ac were wrong; the check must say a tool is missing instead.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("autoreconf", "autoconf", "make", "sh", "cc", "perl", "m4", "python3"):
        found = shutil.which(tool)
        if found:
            os.symlink(found, bin_dir / tool)
    repo = autotools_repo(tmp_path / "repo")
    report = assay.verify(repo, "--sandbox", "local", "--no-cache", path=str(bin_dir))
    assert report["status"] == "UNVERIFIED", explain(report)
    checks = {c["name"]: c for c in report["checks"]}
    build = checks["autotools-build"]
    assert (build["verdict"], build["cause"]) == ("unverified", "toolchain_missing"), build
    assert "automake" in build["note"], build["note"]
    assert "apt-get install -y autoconf automake libtool" in report["output"] + build["reason"]


@needs_autotools
def test_missing_autoreconf_is_unverified_with_the_install_command(
    tmp_path: Path, assay: Assay
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    repo = autotools_repo(tmp_path / "repo")
    report = assay.verify(repo, "--sandbox", "local", "--no-cache", path=str(bin_dir))
    assert report["status"] == "UNVERIFIED", explain(report)
    assert verdicts(report)["autotools-build"] == ("unverified", "toolchain_missing")
    assert "apt-get install -y autoconf automake libtool" in report["output"] + report["note"]


@pytest.mark.slow
@needs_autotools
def test_a_change_that_marks_its_failing_test_xfail_is_caught_under_protect(
    tmp_path: Path, assay: Assay
) -> None:
    # The change breaks mul and declares its test an expected failure in Makefile.am, which
    # Automake then counts as passing: the declaration decides how tests are run, so the
    # base's is restored and the wrong value fails.
    repo = autotools_repo(tmp_path / "repo")
    commit_all(repo, "base")
    autotools_repo(
        repo, "wrong", **{"Makefile.am": MAKEFILE_AM + "    XFAIL_TESTS = tests/test_mul\n"}
    )
    commit_all(repo, "change")
    naive = assay.verify(repo, "--timeout", "60", "--no-cache")
    assert naive["status"] == "VERIFIED", explain(naive)
    protected = assay.verify(repo, "--timeout", "60", "--base", "HEAD~1", "--protect")
    assert protected["status"] == "FAILED", explain(protected)
    assert verdicts(protected)["make-check"] == ("fail", "exit_nonzero"), explain(protected)


def _with_cmake(root: Path, ci: str | None = None) -> Path:
    from tests.test_cmake import CMAKELISTS

    write_dedented(root, {"CMakeLists.txt": CMAKELISTS})
    if ci is not None:
        workflow = "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n"
        write_dedented(root, {".github/workflows/ci.yml": workflow + ci})
    return root


@pytest.mark.parametrize(
    ("ci", "chosen"),
    [
        (None, "cmake"),  # nothing documented: CMake first
        ("      - run: ./configure && make check\n", "autotools"),
        ("      - run: cmake -B b && ctest --test-dir b\n      - run: ./configure\n", "cmake"),
    ],
    ids=["nothing-documented", "ci-runs-configure", "ci-runs-both"],
)
def test_a_tree_with_cmake_and_autotools_is_checked_by_one_suite(
    tmp_path: Path, ci: str | None, chosen: str
) -> None:
    """Before, both suites ran: the same code tested twice, and a git checkout without
    automake was UNVERIFIED although its CMake suite alone would pass."""
    autotools_repo(tmp_path)
    names = _names(_with_cmake(tmp_path, ci))
    suites = {"cmake": {"cmake-build", "ctest"}, "autotools": {"autotools-build", "make-check"}}
    assert set(names) & {n for s in suites.values() for n in s} == suites[chosen], names
    loser = "autotools" if chosen == "cmake" else "cmake"
    (dropped,) = [r for r in discover(tmp_path).reports if r.detector == loser]
    assert dropped.dropped and not dropped.candidates, dropped
    assert f"the tree's {chosen} suite is checked instead" in dropped.dropped[0].reason


@pytest.mark.slow
@needs_autotools
@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")
@pytest.mark.parametrize(("variant", "status"), [("pristine", "VERIFIED"), ("wrong", "FAILED")])
def test_a_tree_with_cmake_whose_ci_runs_configure_is_checked_by_make_check(
    variant: str, status: str, tmp_path: Path, assay: Assay
) -> None:
    repo = _with_cmake(release_tree(tmp_path / "repo", variant), "      - run: ./configure\n")
    report = assay.verify(repo, "--timeout", "60", "--no-cache")
    assert report["status"] == status, explain(report)
    assert set(verdicts(report)) == {"autotools-build", "make-check"}, explain(report)
    if variant == "wrong":
        assert verdicts(report)["make-check"][0] == "fail", explain(report)

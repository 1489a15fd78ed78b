"""CMake projects with CTest suites: discovery, which suite a maintainer means when a root
Makefile stands beside the CMakeLists.txt, ctest's output, and real C repositories built
and tested by `assay verify` with the real cmake and ctest."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from assay.discovery import discover
from assay.evidence import Check
from assay.parsers import parse_output
from assay.plan import PlanOptions, plan
from assay.verdict import Kind
from tests.repos import write_dedented
from tests.results import process_result
from tests.test_go_cache import verify
from tests.test_verify_e2e import VENV_BIN, Assay, explain, verdicts

needs_cmake = pytest.mark.skipif(
    shutil.which("cmake") is None or shutil.which("ctest") is None or shutil.which("cc") is None,
    reason="needs cmake, ctest and a C compiler (apt-get install cmake gcc)",
)


@pytest.fixture
def assay(tmp_path: Path) -> Assay:
    return Assay(tmp_path / "cache")


# --------------------------------------------------------------------------- a small C project

CMAKELISTS = """
    cmake_minimum_required(VERSION 3.10)
    project(calc C)
    enable_testing()
    add_library(calc calc.c)
    foreach(name add mul)
      add_executable(test_${name} tests/test_${name}.c)
      target_link_libraries(test_${name} calc)
      add_test(NAME ${name} COMMAND test_${name})
    endforeach()
"""

CALC = {
    "pristine": "int add(int a, int b) { return a + b; }\nint mul(int a, int b) { return a * b; }\n",
    "wrong": "int add(int a, int b) { return a + b; }\nint mul(int a, int b) { return a + b; }\n",
    "hang": (
        "int add(int a, int b) { return a + b; }\n"
        "int mul(int a, int b) { volatile int x = 1; while (x) {} return a * b; }\n"
    ),
    "compile": "int add(int a, int b) { return a + b }\nint mul(int a, int b) { return a * b; }\n",
    "wrong_add": "int add(int a, int b) { return a - b; }\nint mul(int a, int b) { return a * b; }\n",
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


# A hand-written Makefile of the kind that lingers beside a CMake build: its `tests` target
# builds a demo that asserts nothing (as cJSON's deprecated root Makefile does).
ROOT_MAKEFILE = """
    all: demo

    demo: calc.c
    \tcc -o demo calc.c demo.c

    tests: demo
    \t./demo
"""


def cmake_repo(root: Path, variant: str = "pristine", **more: str) -> Path:
    files = {
        "CMakeLists.txt": CMAKELISTS,
        "calc.c": CALC[variant],
        "tests/test_add.c": _test_program("add(2, 3)", 5),
        "tests/test_mul.c": _test_program("mul(2, 3)", 6),
        **more,
    }
    return write_dedented(root, files)


def _planned(root: Path) -> dict[str, Any]:
    return plan(discover(root)).to_dict()


def _names(document: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    return {c["name"]: tuple(c["argv"]) for c in document["checks"]}


# --------------------------------------------------------------------------- discovery


def test_a_cmakelists_with_tests_plans_a_build_and_ctest(tmp_path: Path) -> None:
    document = _planned(cmake_repo(tmp_path))
    checks = {c["name"]: c for c in document["checks"]}
    assert set(checks) == {"cmake-build", "ctest"}, document
    assert (checks["cmake-build"]["kind"], checks["ctest"]["kind"]) == ("build", "test")
    build_dir = checks["ctest"]["argv"][checks["ctest"]["argv"].index("--test-dir") + 1]
    assert build_dir in checks["cmake-build"]["argv"]
    assert checks["ctest"]["source"].startswith("CMakeLists.txt:")


@pytest.mark.parametrize("fail_fast", [True, False])
def test_ctest_stops_at_the_first_failure_for_the_quick_gate(
    fail_fast: bool, tmp_path: Path
) -> None:
    # One hanging test must be named by ctest, not leave the next ones to hang until the
    # check's deadline kills the whole run unnamed.
    document = plan(discover(cmake_repo(tmp_path)), PlanOptions(fail_fast=fail_fast)).to_dict()
    assert ("--stop-on-failure" in _names(document)["ctest"]) is fail_fast


def test_a_cmakelists_without_tests_plans_nothing_from_it(tmp_path: Path) -> None:
    cmake_repo(tmp_path, **{"CMakeLists.txt": "project(calc C)\nadd_library(calc calc.c)\n"})
    assert _names(_planned(tmp_path)) == {}


def test_a_commented_out_add_test_is_not_a_suite(tmp_path: Path) -> None:
    cmake_repo(
        tmp_path,
        **{"CMakeLists.txt": "project(calc C)\n# enable_testing()\n# add_test(NAME a COMMAND a)\n"},
    )
    assert _names(_planned(tmp_path)) == {}


# --------------------------------------------------------------------------- precedence


def test_ctest_outranks_a_hand_written_root_makefile_nothing_documents(tmp_path: Path) -> None:
    document = _planned(cmake_repo(tmp_path, Makefile=ROOT_MAKEFILE))
    assert set(_names(document)) == {"cmake-build", "ctest"}, document
    dropped = {d["what"]: d["reason"] for d in document["dropped"]}
    assert any(what.startswith("make tests") for what in dropped), dropped


def test_ctest_outranks_the_makefile_when_ci_runs_cmake(tmp_path: Path) -> None:
    ci = """
        jobs:
          test:
            runs-on: ubuntu-latest
            steps:
              - run: |
                  mkdir build && cd build
                  cmake ..
                  make && make test
    """
    readme = "Or, without CMake:\n\n```\nmake tests\n```\n"
    cmake_repo(
        tmp_path,
        Makefile=ROOT_MAKEFILE,
        **{".github/workflows/ci.yml": ci, "README.md": readme},
    )
    document = _planned(tmp_path)
    assert set(_names(document)) == {"cmake-build", "ctest"}, document
    ctest = next(c for c in document["checks"] if c["name"] == "ctest")
    assert ".github/workflows/ci.yml" in ctest["reason"], ctest["reason"]


def test_the_makefile_wins_when_only_it_is_documented(tmp_path: Path) -> None:
    readme = "Build and test:\n\n```sh\nmake tests\n```\n"
    document = _planned(cmake_repo(tmp_path, Makefile=ROOT_MAKEFILE, **{"README.md": readme}))
    names = _names(document)
    assert "make-test" in names and "ctest" not in names, document
    dropped = " ".join(d["reason"] for d in document["dropped"])
    assert "README.md" in dropped, document["dropped"]


def test_a_makefile_cmake_generated_never_outranks_ctest(tmp_path: Path) -> None:
    generated = (
        '# CMAKE generated file: DO NOT EDIT!\n# Generated by "Unix Makefiles" Generator\n\n'
        "test:\n\t/usr/bin/ctest --force-new-ctest-process\n"
    )
    readme = "```\nmake test\n```\n"
    cmake_repo(tmp_path, **{"README.md": readme})
    (tmp_path / "Makefile").write_text(generated)
    document = _planned(tmp_path)
    assert set(_names(document)) == {"cmake-build", "ctest"}, document


# --------------------------------------------------------------------------- ctest's output

PASSED = """\
Test project /w/.assay-cmake-build
    Start 1: add
1/2 Test #1: add ..............................   Passed    0.00 sec
    Start 2: mul
2/2 Test #2: mul ..............................   Passed    0.00 sec

100% tests passed, 0 tests failed out of 19

Total Test time (real) =   0.01 sec
"""

FAILED = """\
Test project /w/.assay-cmake-build
1/4 Test #1: add ..............................   Passed    0.00 sec
2/4 Test #2: mul ..............................***Failed    0.00 sec
mul(2, 3): expected 6, got 5
3/4 Test #3: sub ..............................   Passed    0.00 sec
4/4 Test #4: div ..............................   Passed    0.00 sec

75% tests passed, 1 tests failed out of 4

Total Test time (real) =   0.01 sec

The following tests FAILED:
\t  2 - mul (Failed)
Errors while running CTest
"""

TIMED_OUT = """\
1/2 Test #1: add ..............................   Passed    0.00 sec
2/2 Test #2: mul ..............................***Timeout   8.00 sec

50% tests passed, 1 tests failed out of 2

The following tests FAILED:
\t  2 - mul (Timeout)
Errors while running CTest
"""


def _ctest(output: str, exit_code: int) -> tuple[Any, Any]:
    from assay.classify import classify

    check = Check(name="ctest", kind=Kind.TEST, argv=("ctest",), tool="ctest")
    result = process_result(stdout=output, exit_code=exit_code)
    parsed = parse_output(check, result)
    return parsed, classify(check, result, parsed)


def test_ctest_summary_counts_every_test() -> None:
    parsed, evidence = _ctest(PASSED, 0)
    assert (parsed.tests.passed, parsed.tests.failed) == (19, 0)
    assert (evidence.verdict.value, evidence.cause.value) == ("pass", "exit_zero")


def test_ctest_failures_are_named() -> None:
    parsed, evidence = _ctest(FAILED, 8)
    assert (parsed.tests.passed, parsed.tests.failed) == (3, 1)
    assert [(c.name, c.outcome) for c in parsed.test_cases if c.outcome != "passed"] == [
        ("mul", "failed")
    ]
    assert (evidence.verdict.value, evidence.cause.value) == ("fail", "exit_nonzero")


def test_a_test_ctest_stopped_at_its_timeout_is_a_hang_not_a_failure() -> None:
    parsed, evidence = _ctest(TIMED_OUT, 8)
    assert parsed.hung_tests == ("mul",)
    assert (parsed.tests.passed, parsed.tests.failed) == (1, 0)
    assert (evidence.verdict.value, evidence.cause.value) == ("inconclusive", "timeout")
    assert "mul" in evidence.note, evidence.note


def test_a_timeout_beside_a_real_failure_is_still_a_failure() -> None:
    both = FAILED.replace("\t  2 - mul (Failed)", "\t  2 - mul (Failed)\n\t  3 - sub (Timeout)")
    _, evidence = _ctest(both, 8)
    assert (evidence.verdict.value, evidence.cause.value) == ("fail", "exit_nonzero")


# --------------------------------------------------------------------------- real runs


@pytest.mark.slow
@needs_cmake
@pytest.mark.parametrize(
    ("variant", "status", "failing"),
    [
        ("pristine", "VERIFIED", {}),
        ("wrong", "FAILED", {"ctest": ("fail", "exit_nonzero")}),
        ("hang", "INDETERMINATE", {"ctest": ("inconclusive", "timeout")}),
        ("compile", "FAILED", {"cmake-build": ("fail", "exit_nonzero")}),
    ],
)
def test_a_real_cmake_project(
    variant: str, status: str, failing: dict[str, tuple[str, str]], tmp_path: Path, assay: Assay
) -> None:
    repo = cmake_repo(tmp_path / "repo", variant, Makefile=ROOT_MAKEFILE)
    report = assay.verify(repo, "--timeout", "20", "--no-cache")
    assert report["status"] == status, explain(report)
    got = {name: v for name, v in verdicts(report).items() if v[0] not in ("pass", "skipped")}
    assert got == failing, explain(report)
    checks = {c["name"]: c for c in report["checks"]}
    if variant == "pristine":
        assert checks["ctest"]["tests"]["passed"] == 2, checks["ctest"]
    if variant == "wrong":
        failed = [t["name"] for t in checks["ctest"]["test_cases"] if t["outcome"] == "failed"]
        assert failed == ["mul"], checks["ctest"]
        assert "2 - mul (Failed)" in checks["ctest"]["reason"], checks["ctest"]["reason"]
    if variant == "hang":
        assert "mul" in checks["ctest"]["note"], checks["ctest"]
    if variant == "compile":
        assert checks["cmake-build"]["diagnostics"][0]["file"].endswith("calc.c")
    # The build went to assay's own directory, never into the repository.
    assert sorted(p.name for p in repo.iterdir()) == [
        "CMakeLists.txt",
        "Makefile",
        "calc.c",
        "tests",
    ]


@needs_cmake
def test_a_ctest_run_stopped_at_its_first_failure_says_so(tmp_path: Path) -> None:
    # jansson's first test failing read "1 of 1 tests failed: test_array" of its 215, as if
    # the suite held one test: ctest counts only what it ran before --stop-on-failure.
    from tests.test_go_cache import verify

    report = verify(cmake_repo(tmp_path / "repo", "wrong_add"), tmp_path / "state")
    assert report["status"] == "FAILED", explain(report)
    stopped = "1 of 1 tests failed: add; --stop-on-failure stops the run at its first failure"
    assert stopped in report["note"], report["note"]


@needs_cmake
def test_a_test_ctest_stopped_at_its_timeout_is_shown_hung_not_failed(tmp_path: Path) -> None:
    # jansson's loop in its number lexer was INDETERMINATE, shown "ctest: FAILED test_chaos".
    from tests.cli import assay as run_assay

    repo = cmake_repo(tmp_path / "repo", "hang")
    done = run_assay("verify", str(repo), "--timeout", "6", "--no-cache", timeout=120)
    assert "INDETERMINATE" in done.stdout, done.stdout + done.stderr
    assert "ctest: HUNG mul" in done.stdout, done.stdout
    assert "FAILED mul" not in done.stdout, done.stdout


def test_each_runners_stop_at_the_first_failure_is_read() -> None:
    from assay.formats.failures import fail_fast_flag

    assert fail_fast_flag(("ctest", "--stop-on-failure")) == "--stop-on-failure"
    assert fail_fast_flag(("meson", "test", "--maxfail", "1")) == "--maxfail 1"
    assert fail_fast_flag(("pytest", "-x")) == "-x"
    assert fail_fast_flag(("meson", "test", "--maxfail", "3")) is None


@needs_cmake
def test_missing_cmake_is_unverified_with_the_install_command(tmp_path: Path, assay: Assay) -> None:
    repo = cmake_repo(tmp_path / "repo")
    report = assay.verify(repo, "--sandbox", "local", path=str(VENV_BIN))
    assert report["status"] == "UNVERIFIED", explain(report)
    assert set(verdicts(report).values()) == {("unverified", "toolchain_missing")}, explain(report)
    assert "apt-get install cmake" in report["output"] + report["note"], explain(report)


@pytest.mark.slow
@needs_cmake
def test_a_wrong_value_fails_under_protect(tmp_path: Path, assay: Assay) -> None:
    # Restoring protected files after the build must leave assay's build directory alone:
    # its CTestTestfile.cmake matches the protected `**/*.cmake`, and without it ctest
    # finds no tests and the wrong value goes unanswered.
    from tests.repos import commit_all

    repo = cmake_repo(tmp_path / "repo")
    commit_all(repo, "base")
    cmake_repo(repo, "wrong")
    commit_all(repo, "change")
    report = assay.verify(repo, "--timeout", "30", "--base", "HEAD~1", "--protect")
    assert report["status"] == "FAILED", explain(report)
    assert verdicts(report)["ctest"] == ("fail", "exit_nonzero"), explain(report)


# --------------------------------------------------------------------------- CI's options

#: cJSON's shape: code built only with an option CI turns on (`-DENABLE_CJSON_UTILS=On`).
OPTIONED = (
    CMAKELISTS
    + """
    option(ENABLE_EXTRA "Build the extra library." OFF)
    option(ENABLE_SANITIZERS "Build with AddressSanitizer." OFF)
    if(ENABLE_EXTRA)
      add_library(extra extra.c)
    endif()
"""
)
CI_CONFIGURES = """
    on: push
    jobs:
      test:
        runs-on: ubuntu-latest
        steps:
          - run: mkdir build && cd build && cmake .. -DENABLE_EXTRA=On -DENABLE_SANITIZERS=ON -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug
          - run: cd build && make && ctest
"""


def test_the_options_ci_configures_with_are_the_projects_own_only(tmp_path: Path) -> None:
    files = {"CMakeLists.txt": OPTIONED, "extra.c": "int extra(void) { return 1; }\n"}
    repo = cmake_repo(tmp_path / "repo", **files, **{".github/workflows/ci.yml": CI_CONFIGURES})
    argv = _names(_planned(repo))["cmake-build"]
    # Not the compiler CI's machine has, nor a build instrumented for a sanitizer.
    assert argv[-1] == "-DENABLE_EXTRA=On" and "-DCMAKE_C_COMPILER=clang" not in argv, argv
    assert not any("SANITIZERS" in word for word in argv), argv
    bare = cmake_repo(tmp_path / "bare", **files)
    assert not any(word.startswith("-D") for word in _names(_planned(bare))["cmake-build"])


@pytest.mark.parametrize("with_ci", [True, False])
def test_code_only_an_option_ci_turns_on_builds_is_compiled(
    tmp_path: Path, assay: Assay, with_ci: bool
) -> None:
    files = {"CMakeLists.txt": OPTIONED, "extra.c": "int extra(void) { return 1 }\n"}
    if with_ci:
        files[".github/workflows/ci.yml"] = CI_CONFIGURES
    report = assay.verify(cmake_repo(tmp_path / "repo", **files), "--no-cache")
    if with_ci:
        assert report["status"] == "FAILED", explain(report)
        build = {c["name"]: c for c in report["checks"]}["cmake-build"]
        assert build["diagnostics"][0]["file"] == "extra.c", build["diagnostics"]
    else:
        # What the maintainers' own configure without it builds: the error is not in it.
        assert report["status"] == "VERIFIED", explain(report)


#: zlib's shape: its tests are built under an option declared on, which one CI job (building
#: under each C standard) turns off while its main CMake job configures with the default.
TESTS_OPTIONED = """
    cmake_minimum_required(VERSION 3.10)
    project(calc C)
    option(CALC_BUILD_TESTS "Build the test programs" ON)
    enable_testing()
    add_library(calc calc.c)
    if(CALC_BUILD_TESTS)
      foreach(name add mul)
        add_executable(test_${name} tests/test_${name}.c)
        target_link_libraries(test_${name} calc)
        add_test(NAME ${name} COMMAND test_${name})
      endforeach()
    endif()
"""
STANDARDS_JOB = """
    on: push
    jobs:
      c-std:
        runs-on: ubuntu-latest
        steps:
          - run: cmake -S . -B . -D CMAKE_BUILD_TYPE=Release -D CALC_BUILD_TESTS=OFF
          - run: cmake --build . && ctest
"""
MAIN_JOB = """
    on: push
    jobs:
      cmake:
        runs-on: ubuntu-latest
        steps:
          - run: cmake -S . -B build -D CMAKE_BUILD_TYPE=Release
          - run: cmake --build build && ctest --test-dir build
"""


def test_an_option_ci_also_leaves_on_is_not_turned_off(tmp_path: Path) -> None:
    both = cmake_repo(
        tmp_path / "both",
        **{
            "CMakeLists.txt": TESTS_OPTIONED,
            ".github/workflows/c-std.yml": STANDARDS_JOB,
            ".github/workflows/cmake.yml": MAIN_JOB,
        },
    )
    argv = _names(_planned(both))["cmake-build"]
    assert not any("CALC_BUILD_TESTS" in word for word in argv), argv
    # Where every configure of CI's turns it off, the project's CI never builds it: nor does assay.
    only_off = cmake_repo(
        tmp_path / "only_off",
        **{"CMakeLists.txt": TESTS_OPTIONED, ".github/workflows/c-std.yml": STANDARDS_JOB},
    )
    assert "-DCALC_BUILD_TESTS=OFF" in _names(_planned(only_off))["cmake-build"]


@needs_cmake
def test_a_wrong_value_under_an_option_one_ci_job_turns_off_fails(
    tmp_path: Path, assay: Assay
) -> None:
    workflows = {
        ".github/workflows/c-std.yml": STANDARDS_JOB,
        ".github/workflows/cmake.yml": MAIN_JOB,
    }
    repo = cmake_repo(tmp_path / "repo", "wrong", **{"CMakeLists.txt": TESTS_OPTIONED}, **workflows)
    report = assay.verify(repo, "--no-cache")
    assert report["status"] == "FAILED", explain(report)
    assert verdicts(report)["ctest"] == ("fail", "exit_nonzero"), explain(report)


@needs_cmake
def test_a_failed_test_keeps_what_it_printed_as_its_message(tmp_path: Path) -> None:
    # cxxopts' options test (Catch2) was FAILED with nothing of the assertion that failed.
    repo = write_dedented(
        tmp_path / "repo",
        {
            "CMakeLists.txt": """
                cmake_minimum_required(VERSION 3.10)
                project(calc C)
                enable_testing()
                add_executable(test_add test_add.c)
                add_test(NAME add COMMAND test_add)
            """,
            "test_add.c": """
                #include <stdio.h>
                int add(int a, int b) { return a - b; }
                int main(void) {
                  if (add(2, 3) == 5) return 0;
                  printf("test_add.c:4: FAILED: add(2, 3) == 5, got %d\\n", add(2, 3));
                  return 1;
                }
            """,
        },
    )
    report = verify(repo, tmp_path / "state")
    (ctest,) = [c for c in report["checks"] if c["name"] == "ctest"]
    (failed,) = [c for c in ctest["test_cases"] if c["outcome"] == "failed"]
    assert failed["message"] == "test_add.c:4: FAILED: add(2, 3) == 5, got -1", failed

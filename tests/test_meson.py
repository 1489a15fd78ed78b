"""Meson projects: discovery (tests declared in the root meson.build or a directory it
enters), which suite a maintainer means when a root Makefile stands beside it, `meson test`'s
JSON log and summary, and real C repositories built and tested by `assay verify` with the
real meson and ninja."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from assay.discovery import discover
from assay.evidence import Check
from assay.parsers import parse_output, report_path
from assay.plan import PlanOptions, plan
from assay.verdict import Kind
from tests.cli import assay as run_assay
from tests.cli import assay_env
from tests.repos import commit_all, write_dedented
from tests.results import process_result
from tests.test_go_cache import verify
from tests.test_verify_e2e import VENV_BIN, Assay, explain, verdicts

needs_meson = pytest.mark.skipif(
    any(shutil.which(t) is None for t in ("meson", "ninja", "cc")),
    reason="needs meson, ninja and a C compiler (apt-get install -y meson ninja-build gcc)",
)


@pytest.fixture
def assay(tmp_path: Path) -> Assay:
    return Assay(tmp_path / "cache")


# --------------------------------------------------------------------------- a small C project

ROOT_BUILD = """
    project('calc', 'c')
    calc = static_library('calc', 'calc.c')
    subdir('tests')
"""

TESTS_BUILD = """
    foreach name : ['add', 'mul']
      test(name, executable('test_' + name, 'test_' + name + '.c', link_with: calc))
    endforeach
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


ROOT_MAKEFILE = """
    demo: calc.c
    \tcc -o demo calc.c

    test: demo
    \t./demo
"""


def meson_repo(root: Path, variant: str = "pristine", **more: str) -> Path:
    files = {
        "meson.build": ROOT_BUILD,
        "tests/meson.build": TESTS_BUILD,
        "calc.c": CALC[variant],
        "tests/test_add.c": _test_program("add(2, 3)", 5),
        "tests/test_mul.c": _test_program("mul(2, 3)", 6),
        **more,
    }
    return write_dedented(root, files)


def _names(root: Path, **options: Any) -> dict[str, tuple[str, ...]]:
    document = plan(discover(root), PlanOptions(**options)).to_dict()
    return {c["name"]: tuple(c["argv"]) for c in document["checks"]}


# --------------------------------------------------------------------------- discovery


def test_a_test_in_a_subdir_plans_a_build_and_meson_test(tmp_path: Path) -> None:
    names = _names(meson_repo(tmp_path))
    assert set(names) == {"meson-build", "meson-test"}, names
    build_dir = names["meson-test"][names["meson-test"].index("-C") + 1]
    assert build_dir in names["meson-build"], names


@pytest.mark.parametrize("fail_fast", [True, False])
def test_meson_test_stops_at_the_first_failure_for_the_quick_gate(
    fail_fast: bool, tmp_path: Path
) -> None:
    names = _names(meson_repo(tmp_path), fail_fast=fail_fast)
    assert ("--maxfail" in names["meson-test"]) is fail_fast


def test_a_meson_build_without_tests_plans_nothing_from_it(tmp_path: Path) -> None:
    meson_repo(tmp_path, **{"tests/meson.build": "# test('add', exe)\nbenchmark('b', exe)\n"})
    assert _names(tmp_path) == {}


def test_a_subdir_out_of_the_tree_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "meson.build").write_text("test('x', exe)\n")
    repo = tmp_path / "repo"
    write_dedented(repo, {"meson.build": "project('p', 'c')\nsubdir('../outside')\n"})
    assert _names(repo) == {}


def test_meson_outranks_a_hand_written_makefile_nothing_documents(tmp_path: Path) -> None:
    names = _names(meson_repo(tmp_path, Makefile=ROOT_MAKEFILE))
    assert set(names) == {"meson-build", "meson-test"}, names


def test_the_makefile_wins_when_only_it_is_documented(tmp_path: Path) -> None:
    readme = "```sh\nmake test\n```\n"
    names = _names(meson_repo(tmp_path, Makefile=ROOT_MAKEFILE, **{"README.md": readme}))
    assert "make-test" in names and "meson-test" not in names, names


def test_a_readme_that_runs_meson_keeps_meson_test(tmp_path: Path) -> None:
    readme = "```sh\nmeson setup build\nmeson test -C build\nmake test\n```\n"
    names = _names(meson_repo(tmp_path, Makefile=ROOT_MAKEFILE, **{"README.md": readme}))
    assert set(names) == {"meson-build", "meson-test"}, names


# --------------------------------------------------------------------------- meson test's output

SUMMARY = """\
1/3 add OK              0.02s
2/3 mul FAIL            0.01s   exit status 1
3/3 div EXPECTEDFAIL    0.01s   exit status 1

Summary of Failures:

2/3 mul FAIL            0.01s   exit status 1

Ok:                 1
Expected Fail:      1
Fail:               1
Unexpected Pass:    0
Skipped:            0
Timeout:            0
"""

TIMED_OUT = """\
1/2 add OK              0.02s
2/2 mul TIMEOUT         5.01s   killed by signal 15 SIGTERM

Ok:                 1
Expected Fail:      0
Fail:               0
Unexpected Pass:    0
Skipped:            0
Timeout:            1
"""


#: inih's with a wrong value: `--maxfail 1` stopped the test running beside the failure,
#: and meson's summary counts it as failed too.
INTERRUPTED = """\
1/16 test_multi                       FAIL            0.01s   exit status 1
2/16 test_multi_max_line              INTERRUPT       0.01s   killed by signal 15 SIGTERM

Ok:                 0
Expected Fail:      0
Fail:               2
Unexpected Pass:    0
Skipped:            0
Timeout:            0
"""


def _log(*entries: tuple[str, str]) -> str:
    import json

    return "".join(
        json.dumps({"name": n, "result": r, "duration": 0.01, "returncode": 0}) + "\n"
        for n, r in entries
    )


def _meson_test(output: str, exit_code: int, log: str | None, tmp_path: Path) -> tuple[Any, Any]:
    from assay.classify import classify

    check = Check(name="meson-test", kind=Kind.TEST, argv=("meson", "test"), tool="meson-test")
    if log is not None:
        report_path(tmp_path, check, "testlog.json").write_text(log)
    result = process_result(stdout=output, exit_code=exit_code)
    parsed = parse_output(check, result, tmp_path)
    return parsed, classify(check, result, parsed)


def test_the_json_log_names_failures_and_expected_fail_passes(tmp_path: Path) -> None:
    log = _log(("add", "OK"), ("mul", "FAIL"), ("div", "EXPECTEDFAIL"))
    parsed, evidence = _meson_test(SUMMARY, 1, log, tmp_path)
    assert parsed.report_found and parsed.tests.source == "meson-json"
    assert {c.name: c.outcome for c in parsed.test_cases} == {
        "add": "passed",
        "mul": "failed",
        "div": "xfailed",
    }
    assert (evidence.verdict.value, evidence.cause.value) == ("fail", "exit_nonzero")


def test_the_printed_lines_are_read_without_a_log(tmp_path: Path) -> None:
    parsed, evidence = _meson_test(SUMMARY, 1, None, tmp_path)
    assert (parsed.tests.passed, parsed.tests.failed, parsed.tests.skipped) == (1, 1, 1)
    assert evidence.verdict.value == "fail"


def test_a_test_meson_stopped_at_its_timeout_is_a_hang(tmp_path: Path) -> None:
    parsed, evidence = _meson_test(TIMED_OUT, 1, _log(("add", "OK"), ("mul", "TIMEOUT")), tmp_path)
    assert parsed.hung_tests == ("mul",)
    assert (evidence.verdict.value, evidence.cause.value) == ("inconclusive", "timeout")
    assert "mul" in evidence.note


@pytest.mark.parametrize("logged", [True, False])
def test_a_test_meson_interrupted_at_maxfail_is_not_a_failure(tmp_path: Path, logged: bool) -> None:
    log = _log(("test_multi", "FAIL"), ("test_multi_max_line", "INTERRUPT")) if logged else None
    parsed, evidence = _meson_test(INTERRUPTED, 1, log, tmp_path)
    tests = parsed.tests
    assert (tests.passed, tests.failed, tests.errors, tests.skipped) == (0, 1, 0, 1)
    assert (evidence.verdict.value, evidence.cause.value) == ("fail", "exit_nonzero"), evidence.note
    assert [c.name for c in parsed.test_cases if c.outcome == "failed"] == ["test_multi"]


def test_a_log_that_says_ok_against_a_failing_summary_is_not_a_pass(tmp_path: Path) -> None:
    # The code under test rewrote the log; the printed summary still counts the failure.
    log = _log(("add", "OK"), ("mul", "OK"), ("div", "OK"))
    _, evidence = _meson_test(SUMMARY, 0, log, tmp_path)
    assert evidence.verdict.value != "pass", evidence


def test_a_log_that_is_a_link_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "elsewhere.json"
    secret.write_text(_log(("add", "OK")))
    check = Check(name="meson-test", kind=Kind.TEST, argv=("meson", "test"), tool="meson-test")
    report_path(tmp_path, check, "testlog.json").symlink_to(secret)
    parsed = parse_output(check, process_result(stdout=SUMMARY, exit_code=1), tmp_path)
    assert parsed.report_refused and not parsed.report_found, parsed


# --------------------------------------------------------------------------- real runs


@pytest.mark.slow
@needs_meson
@pytest.mark.parametrize(
    ("variant", "status", "failing"),
    [
        ("pristine", "VERIFIED", {}),
        ("wrong", "FAILED", {"meson-test": ("fail", "exit_nonzero")}),
        ("hang", "INDETERMINATE", {"meson-test": ("inconclusive", "timeout")}),
        ("compile", "FAILED", {"meson-build": ("fail", "exit_nonzero")}),
    ],
)
def test_a_real_meson_project(
    variant: str, status: str, failing: dict[str, tuple[str, str]], tmp_path: Path, assay: Assay
) -> None:
    repo = meson_repo(tmp_path / "repo", variant, Makefile=ROOT_MAKEFILE)
    report = assay.verify(repo, "--timeout", "20", "--no-cache")
    assert report["status"] == status, explain(report)
    got = {name: v for name, v in verdicts(report).items() if v[0] not in ("pass", "skipped")}
    assert got == failing, explain(report)
    checks = {c["name"]: c for c in report["checks"]}
    if variant == "pristine":
        assert checks["meson-test"]["tests"]["passed"] == 2, checks["meson-test"]
        assert checks["meson-test"]["tests"]["source"] == "meson-json", checks["meson-test"]
    if variant == "wrong":
        failed = [t["name"] for t in checks["meson-test"]["test_cases"] if t["outcome"] == "failed"]
        assert failed == ["mul"], checks["meson-test"]
    if variant == "hang":
        # meson stopped and named it, before assay's own deadline.
        assert "mul" in checks["meson-test"]["note"], checks["meson-test"]
    if variant == "compile":
        assert checks["meson-build"]["diagnostics"][0]["file"].endswith("calc.c")
    assert sorted(p.name for p in repo.iterdir()) == [
        "Makefile",
        "calc.c",
        "meson.build",
        "tests",
    ]


@needs_meson
def test_missing_meson_is_unverified_with_the_install_command(tmp_path: Path, assay: Assay) -> None:
    repo = meson_repo(tmp_path / "repo")
    report = assay.verify(repo, "--sandbox", "local", path=str(VENV_BIN))
    assert report["status"] == "UNVERIFIED", explain(report)
    assert set(verdicts(report).values()) == {("unverified", "toolchain_missing")}, explain(report)
    assert "apt-get install -y meson ninja-build" in report["output"] + report["note"]


@pytest.mark.slow
@needs_meson
def test_a_change_that_marks_its_failing_test_should_fail_is_caught_under_protect(
    tmp_path: Path, assay: Assay
) -> None:
    # The change breaks mul and declares its test should_fail, which meson then counts as an
    # expected failure: the declaration decides how tests run, so the base's is restored.
    repo = meson_repo(tmp_path / "repo")
    commit_all(repo, "base")
    hidden = TESTS_BUILD.replace(
        "link_with: calc))", "link_with: calc),\n           should_fail: name == 'mul')"
    )
    meson_repo(repo, "wrong", **{"tests/meson.build": hidden})
    commit_all(repo, "change")
    naive = assay.verify(repo, "--timeout", "30", "--no-cache")
    assert naive["status"] == "VERIFIED", explain(naive)
    protected = assay.verify(repo, "--timeout", "30", "--base", "HEAD~1", "--protect")
    assert protected["status"] == "FAILED", explain(protected)
    assert verdicts(protected)["meson-test"] == ("fail", "exit_nonzero"), explain(protected)


@needs_meson
def test_a_compile_error_is_named_from_the_root_once_for_every_target_it_broke(
    tmp_path: Path,
) -> None:
    # ninja compiles in the build directory and names sources from there (`../calc.c`);
    # each test program compiles calc.c itself, as inih's do with ini.c.
    both = """
        foreach name : ['add', 'mul']
          test(name, executable('test_' + name, 'test_' + name + '.c', '../calc.c'))
        endforeach
    """
    repo = meson_repo(tmp_path / "repo", "compile", **{"tests/meson.build": both})
    report = verify(repo, tmp_path / "state")
    checks = {c["name"]: c for c in report["checks"]}
    assert report["status"] == "FAILED", explain(report)
    found = [(d["file"], d["line"]) for d in checks["meson-build"]["diagnostics"]]
    assert found == [("calc.c", 1)], found


@needs_meson
def test_the_tests_past_those_listed_are_counted_as_hung_when_they_hung(tmp_path: Path) -> None:
    # Every test runs one loop, and meson stops each at its own timeout (inih's seven
    # tests stuck in ini_lskip).
    names = ", ".join(f"'t{n}'" for n in range(7))
    repo = write_dedented(
        tmp_path / "repo",
        {
            "meson.build": f"""
                project('spin', 'c')
                spin = executable('spin', 'spin.c')
                foreach name : [{names}]
                  test(name, spin, timeout: 1)
                endforeach
            """,
            "spin.c": "int main(void) { volatile int x = 1; while (x) {} return 0; }\n",
        },
    )
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"))
    done = run_assay("verify", "--no-cache", str(repo), env=env, timeout=120)
    assert done.stdout.count("meson-test: HUNG t") == 5, done.stdout
    assert "meson-test: ... and 2 more hung tests" in done.stdout, done.stdout
    assert "and 2 more did not finish within the runner's per-test timeout" in done.stdout

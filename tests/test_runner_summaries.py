"""The summaries of the test runners people use, read by the generic parser from real output:
a passing suite gives counts (not `no_tests_observed`), a failing one a recognised failure,
and one that exits 0 while its summary counts failures is never a pass."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from assay.classify import classify
from assay.evidence import Check
from assay.parsers import parse_output
from assay.process import ProcessResult
from assay.verdict import Cause, Kind, Verdict
from tests.results import process_result

DATA = Path(__file__).parent / "data" / "summaries"

# Captured once from real runs (uvu 0.5, ava 6, tape 5, jasmine 5 on node 20), in a project
# with two tests, the second failing when BAD=1:
#   FORCE_COLOR=1 node test/uvu.mjs            FORCE_COLOR=1 ava test/ava.mjs
#   FORCE_COLOR=1 tape test/tape.js            FORCE_COLOR=1 jasmine
# and bun 1.4's (stdout and stderr together; a third test skipped):  FORCE_COLOR=1 bun test,
# and `bun test` without a terminal or colour, as a check runs it ("(pass) one")
# and uthash's C test driver through make (its compile lines left out), whose names end
# in numbers (`test92 failed`, not 92 failed):  make -C tests
# name: (exit code, passed, failed)
CAPTURED = {
    "uvu": (0, 2, 0),
    "uvu-fail": (1, 1, 1),
    "ava": (0, 2, 0),
    "ava-fail": (1, 1, 1),
    "tape": (0, 2, 0),
    "tape-fail": (1, 1, 1),
    "jasmine": (0, 2, 0),
    "jasmine-fail": (3, 1, 1),
    "bun": (0, 2, 0),
    "bun-fail": (1, 1, 1),
    "bun-plain-fail": (1, 1, 1),
    "uthash": (0, 102, 0),
    "uthash-fail": (2, 95, 7),
}


def _needs(tool: str) -> None:
    # Never a skip: a test that does not run proves nothing, and CI installs these.
    assert shutil.which(tool) is not None, f"{tool} is not installed (.ci/run installs it)"


def _ran(argv: list[str], cwd: Path) -> ProcessResult:
    done = subprocess.run(argv, check=False, cwd=cwd, capture_output=True, text=True, timeout=120)
    return process_result(
        tuple(argv), cwd=str(cwd), exit_code=done.returncode, stdout=done.stdout, stderr=done.stderr
    )


def _judged(ran: ProcessResult) -> tuple[Verdict, Cause, int, int, str]:
    c = Check(name="test", kind=Kind.TEST, argv=ran.argv, tool="shell")
    parsed = parse_output(c, ran)
    ev = classify(c, ran, parsed)
    assert parsed.tests is not None, ev.note
    return ev.verdict, ev.cause, parsed.tests.passed, parsed.tests.failed, ev.note


def _expected(exit_code: int, passed: int, failed: int) -> tuple[Verdict, Cause, int, int]:
    if exit_code == 0:
        return (Verdict.PASS, Cause.EXIT_ZERO, passed, failed)
    return (Verdict.FAIL, Cause.EXIT_NONZERO, passed, failed)


@pytest.mark.parametrize("name", sorted(CAPTURED))
def test_a_captured_runner_summary_is_read(name: str) -> None:
    exit_code, passed, failed = CAPTURED[name]
    text = (DATA / f"{name}.txt").read_text()
    ran = process_result(("x",), cwd="/tmp/rt/proj", exit_code=exit_code, stdout=text)
    assert _judged(ran)[:4] == _expected(exit_code, passed, failed)


@pytest.mark.parametrize("bad", [False, True])
def test_mocha(bad: bool, tmp_path: Path) -> None:
    _needs("npm")
    root = subprocess.run(["npm", "root", "-g"], capture_output=True, text=True, check=True)
    mocha = Path(root.stdout.strip()) / "mocha" / "bin" / "mocha.js"
    (tmp_path / "t.spec.js").write_text(
        "const assert = require('assert');\n"
        "describe('arith', () => {\n"
        "  it('adds', () => assert.strictEqual(1 + 1, 2));\n"
        f"  it('subtracts', () => assert.strictEqual(3 - 1, {1 if bad else 2}));\n"
        "  it.skip('later', () => {});\n"
        "});\n"
    )
    ran = _ran(["node", str(mocha), "t.spec.js"], tmp_path)
    got = _judged(ran)
    assert got[:4] == _expected(1 if bad else 0, 1 if bad else 2, 1 if bad else 0), got


@pytest.mark.parametrize("reporter", ["tap", "spec"])
@pytest.mark.parametrize("bad", [False, True])
def test_node_test_through_a_shell_command(reporter: str, bad: bool, tmp_path: Path) -> None:
    _needs("node")
    (tmp_path / "t.test.js").write_text(
        "const test = require('node:test');\nconst assert = require('assert');\n"
        "test('adds', () => assert.strictEqual(1 + 1, 2));\n"
        f"test('subtracts', () => assert.strictEqual(3 - 1, {1 if bad else 2}));\n"
    )
    ran = _ran(["node", "--test", f"--test-reporter={reporter}", "t.test.js"], tmp_path)
    got = _judged(ran)
    assert got[:4] == _expected(1 if bad else 0, 1 if bad else 2, 1 if bad else 0), got


# C test programs: what each prints, whether it exits non-zero on a failure (one real
# project's harness exits 0 whatever it counts).
C_SUMMARIES = {
    "unity": ('"%d Tests %d Failures 0 Ignored\\nOK\\n", p + f, f', True),
    "passed-failed": ('"PASSED: %d\\nFAILED: %d\\n", p, f', True),
    "tests-failed-passed": ('"Tests failed: %d\\nTests passed: %d\\n", f, p', False),
    "plain": ('"%d passed, %d failed\\n", p, f', True),
}


@pytest.mark.parametrize("name", sorted(C_SUMMARIES))
@pytest.mark.parametrize("bad", [False, True])
def test_a_c_test_programs_summary(name: str, bad: bool, tmp_path: Path) -> None:
    _needs("gcc")
    printed, exits_on_failure = C_SUMMARIES[name]
    (tmp_path / "t.c").write_text(
        "#include <stdio.h>\nint main(void) {\n"
        f"  int p = 3, f = {1 if bad else 0};\n  printf({printed});\n"
        f"  return {'f ? 1 : 0' if exits_on_failure else '0'};\n}}\n"
    )
    subprocess.run(["gcc", "t.c", "-o", "t"], cwd=tmp_path, check=True)
    ran = _ran(["./t"], tmp_path)
    verdict, cause, passed, failed, note = _judged(ran)
    assert (passed, failed) == (3, 1 if bad else 0)
    if not bad:
        assert (verdict, cause) == (Verdict.PASS, Cause.EXIT_ZERO), note
    elif exits_on_failure:
        assert (verdict, cause) == (Verdict.FAIL, Cause.EXIT_NONZERO), note
    else:
        # Exit 0 while its summary counts a failure: a failure, never a pass.
        assert (verdict, cause) == (Verdict.FAIL, Cause.REPORT_MISMATCH), note


@pytest.mark.parametrize("bad", [False, True])
def test_ctest(bad: bool, tmp_path: Path) -> None:
    _needs("cmake")
    _needs("ctest")
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.10)\nproject(t NONE)\nenable_testing()\n"
        "add_test(NAME adds COMMAND true)\n"
        f"add_test(NAME subtracts COMMAND {'false' if bad else 'true'})\n"
    )
    subprocess.run(
        ["cmake", "-S", ".", "-B", "build"], cwd=tmp_path, check=True, capture_output=True
    )
    ran = _ran(["ctest", "--test-dir", "build"], tmp_path)
    got = _judged(ran)
    assert got[:4] == _expected(8 if bad else 0, 1 if bad else 2, 1 if bad else 0), got


@pytest.mark.parametrize("bad", [False, True])
def test_jest_run_twice_by_one_script_counts_both_runs(bad: bool, tmp_path: Path) -> None:
    """vercel/ms's `pnpm test` is `jest --env node && jest --env edge`: each run closes
    with its own `Tests:` line, and the check ran the tests of both."""
    _needs("jest")
    (tmp_path / "package.json").write_text(
        '{"name": "twice", "jest": {"testEnvironment": "node"}}\n'
    )
    checks = "\n".join(f"test('adds {n}', () => expect({n} + 1).toBe({n + 1}));" for n in range(3))
    (tmp_path / "adds.test.js").write_text(checks + "\n")
    second = "expect(1).toBe(2)" if bad else "expect(1).toBe(1)"
    (tmp_path / "second.test.js").write_text(f"test('second', () => {second});\n")
    ran = _ran(["sh", "-c", "jest --ci adds && jest --ci"], tmp_path)
    got = _judged(ran)
    assert got[2:4] == ((6, 1) if bad else (7, 0)), got  # 3, then 3 and 1
    assert got[:2] == (
        (Verdict.FAIL, Cause.EXIT_NONZERO) if bad else (Verdict.PASS, Cause.EXIT_ZERO)
    )


def test_go_test_v_results_are_counted_over_the_whole_output(tmp_path: Path) -> None:
    """`go test -v` behind a make target is read as text: each test's `--- FAIL:` line
    counts wherever it is, not only in the last lines (Masterminds/semver: 11 of 84 failed,
    read as 7 of 77)."""
    _needs("go")
    tests = "".join(
        f'func TestN{i:03d}(t *testing.T) {{\n\tt.Log("line one")\n\tt.Log("line two")\n'
        f'\tif {i} < 3 {{\n\t\tt.Fatal("wrong")\n\t}}\n}}\n\n'
        for i in range(120)
    )
    (tmp_path / "go.mod").write_text("module example.com/p\n\ngo 1.18\n")
    (tmp_path / "p_test.go").write_text(f'package p\n\nimport "testing"\n\n{tests}')
    env = {"GOCACHE": str(tmp_path / ".cache"), "GOFLAGS": "-mod=mod", "HOME": str(tmp_path)}
    done = subprocess.run(
        ["go", "test", "-v", "."],
        check=False,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **env},
    )
    assert len(done.stdout.splitlines()) > 400, done.stdout[-500:]
    ran = process_result(("make", "test"), cwd=str(tmp_path), exit_code=2, stdout=done.stdout)
    verdict, cause, passed, failed, _ = _judged(ran)
    assert (verdict, cause, passed, failed) == (Verdict.FAIL, Cause.EXIT_NONZERO, 117, 3)

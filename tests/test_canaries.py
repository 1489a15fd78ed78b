"""Canary tests (`assay.canaries`): how a report is judged against them, how they are
written into a workspace and taken out of it, and what each runner's planter decides."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from assay.canaries import (
    Canary,
    NoCanary,
    NotPlanted,
    Planted,
    Planting,
    PlantRequest,
    plant,
)
from assay.canaries.files import create_file, remove_created
from assay.canaries.go import plant_go_test
from assay.canaries.jest import plant_jest
from assay.canaries.node import plant_node_test, plant_package_script
from assay.canaries.python import plant_pytest, plant_unittest
from assay.canaries.rust import plant_cargo_test
from assay.canaries.vitest import plant_vitest
from assay.check_execution import run_check
from assay.evidence import Check, Evidence, TestCase, TestCounts
from assay.parsed_output import ParsedOutput
from assay.parsed_output import Reading as ChannelReading
from assay.verdict import Cause, Kind, Verdict
from tests.repos import write
from tests.results import process_result

PASS = Canary("test_assay_canary_aaaa", must_pass=True)
FAIL = Canary("test_assay_canary_bbbb", must_pass=False)


def _planted(tmp_path: Path, **more: object) -> Planted:
    planting = Planting(files=(), canaries=(PASS, FAIL), **more)  # type: ignore[arg-type]
    return Planted(planting, tmp_path, ())


def _parsed(*cases: tuple[str, str], **more: object) -> ParsedOutput:
    tests = tuple(TestCase(name=name, outcome=outcome) for name, outcome in cases)
    counts = TestCounts(
        passed=sum(t.outcome == "passed" for t in tests),
        failed=sum(t.outcome == "failed" for t in tests),
        errors=sum(t.outcome == "error" for t in tests),
        source="junit",
    )
    fields = {"tests": counts, "test_cases": tests, "failure_recognized": counts.any_failed}
    return ParsedOutput(**{**fields, **more})  # type: ignore[arg-type]


REAL_PASS = ("tests.test_calc::test_add", "passed")
CANARIES = (
    (f"x.assay_canary::{PASS.name}", "passed"),
    (f"x.assay_canary::{FAIL.name}", "failed"),
)


# --------------------------------------------------------------------------- judging


def test_canaries_as_planted_are_taken_out_and_their_failure_discounted(tmp_path: Path) -> None:
    reading = _planted(tmp_path).read(process_result(exit_code=1), _parsed(REAL_PASS, *CANARIES))
    assert reading.problems == ()
    assert reading.exit_code == 0
    assert [c.name for c in reading.parsed.test_cases] == [REAL_PASS[0]]
    assert reading.parsed.tests == TestCounts(passed=1, source="junit")
    assert reading.parsed.failure_recognized is False
    assert reading.record["finding"] == "as planted"


def test_a_real_failure_beside_the_canaries_keeps_the_exit(tmp_path: Path) -> None:
    real_fail = ("tests.test_calc::test_mul", "failed")
    parsed = _parsed(REAL_PASS, real_fail, *CANARIES)
    reading = _planted(tmp_path).read(process_result(exit_code=1), parsed)
    assert (reading.problems, reading.exit_code) == ((), 1)
    assert reading.parsed.tests == TestCounts(passed=1, failed=1, source="junit")
    assert reading.parsed.failure_recognized is True


def test_an_exit_other_than_the_runners_failure_code_is_kept(tmp_path: Path) -> None:
    # pytest's 3 is an internal error: not the canary's doing, and not a test failure.
    reading = _planted(tmp_path).read(process_result(exit_code=3), _parsed(REAL_PASS, *CANARIES))
    assert (reading.problems, reading.exit_code) == ((), 3)
    assert reading.parsed.failure_recognized is False


@pytest.mark.parametrize(
    ("cases", "exit_code", "says"),
    [
        pytest.param(
            (REAL_PASS, (CANARIES[0][0], "passed"), (CANARIES[1][0], "passed")),
            0,
            "planted to fail, was reported passed",
            id="must-fail-passed",
        ),
        pytest.param((REAL_PASS, *CANARIES), 0, "exited 0", id="exit-zero"),
        pytest.param((REAL_PASS,), 0, "never reported", id="absent-and-exit-zero"),
        pytest.param(
            (REAL_PASS, (CANARIES[0][0], "failed"), CANARIES[1]),
            1,
            "planted to pass, was reported failed",
            id="must-pass-failed",
        ),
        pytest.param((REAL_PASS, *CANARIES, CANARIES[0]), 1, "reported twice", id="reported-twice"),
        pytest.param((REAL_PASS, CANARIES[1]), 1, "never reported", id="one-missing"),
    ],
)
def test_a_report_that_contradicts_the_canaries_is_tampered(
    tmp_path: Path, cases: tuple[tuple[str, str], ...], exit_code: int, says: str
) -> None:
    reading = _planted(tmp_path).read(process_result(exit_code=exit_code), _parsed(*cases))
    assert reading.problems, reading
    assert says in " ".join(reading.problems)
    assert reading.record["finding"].startswith("report_tampered")
    # The canaries never count, tampered or not.
    assert not [c for c in reading.parsed.test_cases if "canary" in c.name]


def test_an_assertion_a_planted_check_found_lenient_is_quoted(tmp_path: Path) -> None:
    said = (
        "Error: expect().toBe did not fail on unequal values; expect().not.toBe did not "
        "pass on equal values: the assertion library was replaced\n    at Object.<anonymous>"
    )
    # The check after each test fails the project's test it found the change in.
    found = TestCase(name="adds", outcome="failed", message=said)
    parsed = replace(_parsed(*CANARIES), test_cases=(found, *_parsed(*CANARIES).test_cases))
    reading = _planted(tmp_path).read(process_result(exit_code=1), parsed)
    quoted = (
        "the checks planted in the run found that expect().toBe did not fail on unequal "
        "values; expect().not.toBe did not pass on equal values: the assertion library was "
        "replaced"
    )
    assert reading.problems == (quoted,)
    assert reading.record["finding"].startswith("report_tampered")
    # A failure that says nothing of the kind is the project's own.
    plain = replace(found, message="expected 1 to be 2")
    parsed = replace(parsed, test_cases=(plain, *_parsed(*CANARIES).test_cases))
    assert _planted(tmp_path).read(process_result(exit_code=1), parsed).problems == ()


def test_counts_that_leave_out_the_canaries_are_not_the_runners(tmp_path: Path) -> None:
    forged = TestCounts(passed=1, failed=0, source="text")
    parsed = _parsed(REAL_PASS, *CANARIES, tests=forged)
    reading = _planted(tmp_path).read(process_result(exit_code=1), parsed)
    assert "leave out" in " ".join(reading.problems)


def test_canaries_a_failed_run_never_reached_are_not_tampering(tmp_path: Path) -> None:
    parsed = _parsed(("tests.test_calc::collect", "error"))
    reading = _planted(tmp_path).read(process_result(exit_code=2), parsed)
    assert (reading.problems, reading.exit_code) == ((), 2)
    assert reading.parsed.failure_recognized is True
    assert reading.record["finding"].startswith("not reached")


def test_a_run_that_did_not_finish_is_not_judged(tmp_path: Path) -> None:
    parsed = _parsed(REAL_PASS, CANARIES[0])
    reading = _planted(tmp_path).read(process_result(exit_code=None, timed_out=True), parsed)
    assert reading.problems == () and reading.record["finding"].startswith("not judged")
    assert [c.name for c in reading.parsed.test_cases] == [REAL_PASS[0]]


def test_once_per_process_means_the_same_number_of_times_for_each(tmp_path: Path) -> None:
    planted = _planted(tmp_path, repeats=None)
    twice = (REAL_PASS, *CANARIES, *CANARIES)
    assert planted.read(process_result(exit_code=1), _parsed(*twice)).problems == ()
    uneven = (REAL_PASS, *CANARIES, CANARIES[0])
    assert planted.read(process_result(exit_code=1), _parsed(*uneven)).problems


def test_groups_that_failed_as_a_whole_may_be_unreached(tmp_path: Path) -> None:
    a_pass, a_fail = Canary("TestAssayCanaryaa", True, "a"), Canary("TestAssayCanaryab", False, "a")
    b_pass, b_fail = Canary("TestAssayCanaryba", True, "b"), Canary("TestAssayCanarybb", False, "b")
    cases = (
        ("a.TestAdd", "passed"),
        ("a.TestAssayCanaryaa", "passed"),
        ("a.TestAssayCanaryab", "failed"),
    )

    def planted(failed: frozenset[str] | None) -> Planted:
        planting = Planting(
            files=(), canaries=(a_pass, a_fail, b_pass, b_fail), failed_groups=lambda _: failed
        )
        return Planted(planting, tmp_path, ())

    # b did not build: its canaries never ran, and the run is a failure, not tampering.
    reading = planted(None).read(process_result(exit_code=1), _parsed(*cases))
    assert (reading.problems, reading.exit_code) == ((), 1)
    assert reading.parsed.failure_recognized is True
    # b passed without its canaries: it did not run them.
    reading = planted(frozenset({"a"})).read(process_result(exit_code=1), _parsed(*cases))
    assert "planted in b were never reported" in " ".join(reading.problems)


def test_channel_readings_lose_the_canaries_too(tmp_path: Path) -> None:
    channels = (ChannelReading("the JUnit report", ran=3, failed=1),)
    parsed = _parsed(REAL_PASS, *CANARIES, readings=channels)
    reading = _planted(tmp_path).read(process_result(exit_code=1), parsed)
    (channel,) = reading.parsed.readings
    assert (channel.ran, channel.failed) == (1, 0)


# --------------------------------------------------------------------------- files


def test_files_are_created_new_and_removed_with_their_directories(tmp_path: Path) -> None:
    created = create_file(tmp_path, "a/.canary/x.py", "pass\n")
    assert created == ["a", "a/.canary", "a/.canary/x.py"]
    assert (tmp_path / "a/.canary/x.py").read_text() == "pass\n"
    assert oct((tmp_path / "a/.canary/x.py").stat().st_mode & 0o777) == oct(0o644)
    (tmp_path / "a/.canary/__pycache__").mkdir()  # what a runner may leave beside it
    remove_created(tmp_path, created)
    assert list(tmp_path.iterdir()) == []


def test_a_file_is_never_written_through_a_link_or_over_one(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "ws"
    root.mkdir()
    (root / "tests").symlink_to(outside)
    with pytest.raises(OSError):
        create_file(root, "tests/x.py", "pass\n")
    assert list(outside.iterdir()) == []
    (root / "taken.py").symlink_to(outside / "target")
    with pytest.raises(FileExistsError):
        create_file(root, "taken.py", "pass\n")
    assert not (outside / "target").exists()
    with pytest.raises(ValueError):
        create_file(root, "../escape.py", "")


# --------------------------------------------------------------------------- planting


def _says_nothing_of_what_it_is(decided: Planting) -> None:
    """No name, path or text planted says "assay" or "canary": code under test that spares
    what looks planted cannot find the canaries by it."""
    said = [*(f.path for f in decided.files), *(f.text for f in decided.files)]
    said += [c.name for c in decided.canaries]
    telling = [s for s in said if "assay" in s.lower() or "canary" in s.lower()]
    assert not telling, telling


def _request(root: Path, argv: tuple[str, ...], tool: str, cwd: str = ".") -> PlantRequest:
    check = Check(name=tool, kind=Kind.TEST, argv=argv, tool=tool, cwd=cwd)
    return PlantRequest(check, root.resolve())


def test_a_tool_without_canaries_runs_without_and_says_so(tmp_path: Path) -> None:
    check = Check(name="make-test", kind=Kind.TEST, argv=("make", "test"), tool="shell")
    planted = plant(check, tmp_path)
    assert isinstance(planted, NotPlanted) and not planted.refused
    assert planted.record()["planted"] is False and "no canary" in planted.why


def test_canaries_that_cannot_be_written_refuse_the_check(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "tests").symlink_to(tmp_path / "outside")
    check = Check(
        name="unittest",
        kind=Kind.TEST,
        argv=("python3", "-m", "unittest", "discover", "-s", "tests"),
        tool="unittest",
    )
    planted = plant(check, tmp_path / "ws")
    assert isinstance(planted, NotPlanted) and planted.refused, planted
    evidence = run_check(check, root=tmp_path / "ws", canaries=planted)
    assert (evidence.verdict, evidence.cause) == (Verdict.INCONCLUSIVE, Cause.START_FAILED)
    assert evidence.result is None and evidence.extra["canaries"]["planted"] is False


def test_pytest_canaries_load_as_a_plugin_and_fail_fast_flags_go(tmp_path: Path) -> None:
    argv = ("python3", "-m", "pytest", "-q", "-x", "--maxfail", "2", "--sw", "--junitxml=r.xml")
    decided = plant_pytest(_request(tmp_path, argv, "pytest"))
    assert isinstance(decided, Planting) and decided.edit_argv is not None
    edited = decided.edit_argv(argv)
    module = decided.files[0].path.rsplit("/", 1)[1].removesuffix(".py")
    assert edited == (
        "python3",
        "-m",
        "pytest",
        "-q",
        "--maxfail=0",
        "-p",
        module,
        f"--ignore={decided.env['PYTHONPATH']}",
        "--junitxml=r.xml",
    )
    # A hidden directory collection is told to ignore; nothing in a name says what it holds.
    assert decided.files[0].path.startswith(".")
    _says_nothing_of_what_it_is(decided)
    assert "assay" not in " ".join(edited) and "canary" not in " ".join(edited)
    assert decided.env["PYTHONPATH"].endswith(decided.files[0].path.split("/")[0])


@pytest.mark.parametrize(
    ("args", "where", "named"),
    [
        ((), "", False),
        (("discover", "-s", "tests", "-t", "."), "tests/", False),
        (("discover", "-s", "src/tests", "-t", "src"), "src/tests/", False),
        (("discover", "tests"), "tests/", False),
        (("tests.test_calc",), "", True),
    ],
)
def test_unittest_canaries_go_where_discovery_looks(
    tmp_path: Path, args: tuple[str, ...], where: str, named: bool
) -> None:
    (tmp_path / (where or "tests")).mkdir(parents=True)
    argv = ("python3", "-m", "unittest", *args)
    decided = plant_unittest(_request(tmp_path, argv, "unittest"))
    assert isinstance(decided, Planting) and decided.edit_argv is not None
    init, module, ignore = (f.path for f in decided.files)
    package = init.removesuffix("/__init__.py")
    stem = package[len(where) :]
    assert package.startswith(where) and "/" not in stem and stem.isidentifier()
    assert module == f"{package}/test{stem}.py" and ignore == package + "/.gitignore"
    _says_nothing_of_what_it_is(decided)
    edited = decided.edit_argv(argv)
    assert edited[-1] == "-v"
    dotted = f"{Path(package).name}.{Path(module).stem}"
    assert (dotted in edited) is named


def test_unittest_runs_that_select_tests_get_no_canary(tmp_path: Path) -> None:
    selecting = ("python3", "-m", "unittest", "-k", "add")
    assert isinstance(plant_unittest(_request(tmp_path, selecting, "unittest")), NoCanary)
    patterned = ("python3", "-m", "unittest", "discover", "-p", "check_*.py")
    decided = plant_unittest(_request(tmp_path, patterned, "unittest"))
    assert isinstance(decided, NoCanary) and "pattern" in decided.why


GO_TEST = 'package {}\n\nimport "testing"\n\nfunc TestX(t *testing.T) {{}}\n'


def test_go_canaries_go_into_every_tested_package(tmp_path: Path) -> None:
    """A must-pass canary in each tested package, and the must-fail one in a package of its
    own below one of them: the `./...` that found that one tests it too."""
    write(
        tmp_path,
        {
            "go.mod": "module m\n",
            "a_test.go": "// package wrong\n/* package wrong */\n" + GO_TEST.format("m"),
            "sub/b_test.go": GO_TEST.format("sub_test"),
            "sub/testdata/c_test.go": GO_TEST.format("no"),
            "vendor/v/v_test.go": GO_TEST.format("no"),
            "_skip/s_test.go": GO_TEST.format("no"),
            ".hidden/h_test.go": GO_TEST.format("no"),
            "other/go.mod": "module other\n",
            "other/o_test.go": GO_TEST.format("no"),
            "nothing/n.go": "package nothing\n",
        },
    )
    argv = ("go", "test", "-json", "-failfast", "-count=1", "./...")
    decided = plant_go_test(_request(tmp_path, argv, "go"))
    assert isinstance(decided, Planting) and decided.edit_argv is None
    by_dir = {f.path.rsplit("/", 1)[0] if "/" in f.path else ".": f.text for f in decided.files}
    (own,) = set(by_dir) - {".", "sub"}
    assert "/" not in own and not own.startswith((".", "_"))
    assert "package m\n" in by_dir["."] and "package sub_test\n" in by_dir["sub"]
    assert f"package {own}\n" in by_dir[own]
    assert all(f.path.endswith("_test.go") for f in decided.files)
    _says_nothing_of_what_it_is(decided)
    groups = {c.group: c.must_pass for c in decided.canaries}
    assert groups == {".": True, "sub": True, own: False}
    assert len({c.name for c in decided.canaries}) == 3
    assert "t.Parallel()" in by_dir["."] and "t.Parallel()" not in by_dir[own]


@pytest.mark.parametrize(
    ("args", "tested"),
    [
        (("-json", "./sub", "./a", "-v"), ("-json", "./sub/{}", "./sub", "./a", "-v")),
        (("-count", "1", "./a/..."), ("-count", "1", "./a/...")),
        (("-json", "-args", "-v"), ("-json", ".", "./{}", "-args", "-v")),
    ],
    ids=["listed", "recursive", "none"],
)
def test_go_must_fail_package_is_tested_where_the_patterns_leave_it_out(
    tmp_path: Path, args: tuple[str, ...], tested: tuple[str, ...]
) -> None:
    """Placed below the first package a `...` pattern found, the must-fail canary's package
    is tested by it; else it is put first in go test's list of packages (the arguments
    after the list's first flag go to the test binaries)."""
    write(
        tmp_path,
        {
            "go.mod": "module m\n",
            "a_test.go": GO_TEST.format("m"),
            "sub/b_test.go": GO_TEST.format("sub"),
            "a/c_test.go": GO_TEST.format("a"),
        },
    )
    decided = plant_go_test(_request(tmp_path, ("go", "test", *args), "go"))
    assert isinstance(decided, Planting)
    (failing,) = [c for c in decided.canaries if not c.must_pass]
    own = failing.group.rsplit("/", 1)[-1]
    if "./a/..." in args:
        assert decided.edit_argv is None and failing.group == f"a/{own}"
        return
    assert decided.edit_argv is not None
    wrapped = ("sh", "-c", 'exec "$0" "$@"', "/usr/bin/go", "test", *args)
    assert decided.edit_argv(wrapped) == (
        *wrapped[:5],
        *(arg.format(own) for arg in tested),
    )


def test_go_packages_are_the_words_go_reads_as_packages(tmp_path: Path) -> None:
    """go 1.19 ends the package list at its first flag, and hands a later word that is not
    a flag (`./b`), and all after it, to the test binaries: `b` is not tested."""
    write(
        tmp_path,
        {
            "go.mod": "module m\n",
            "a/a_test.go": GO_TEST.format("a"),
            "b/b_test.go": GO_TEST.format("b"),
        },
    )
    argv = ("go", "test", "./a", "-v", "./b")
    decided = plant_go_test(_request(tmp_path, argv, "go"))
    assert isinstance(decided, Planting) and decided.edit_argv is not None
    groups = {c.group for c in decided.canaries if c.must_pass}
    assert groups == {"a"}, groups
    (failing,) = [c for c in decided.canaries if not c.must_pass]
    assert decided.edit_argv(argv) == ("go", "test", f"./{failing.group}", "./a", "-v", "./b")


def test_go_runs_that_select_tests_get_no_canary(tmp_path: Path) -> None:
    write(tmp_path, {"go.mod": "module m\n", "a_test.go": GO_TEST.format("m")})
    decided = plant_go_test(_request(tmp_path, ("go", "test", "-run", "TestX", "./..."), "go"))
    assert isinstance(decided, NoCanary) and "-run" in decided.why
    # The test binaries' own flags, handed over after -args, select too.
    argv = ("go", "test", "./...", "-args", "-test.run", "TestX")
    decided = plant_go_test(_request(tmp_path, argv, "go"))
    assert isinstance(decided, NoCanary) and "-run" in decided.why
    decided = plant_go_test(_request(tmp_path, ("go", "test", "-count", "3", "."), "go"))
    assert isinstance(decided, Planting) and decided.repeats == 3


def test_go_failed_packages_are_told_apart(tmp_path: Path) -> None:
    write(tmp_path, {"go.mod": "module m\n", "a_test.go": GO_TEST.format("m")})
    decided = plant_go_test(_request(tmp_path, ("go", "test", "./..."), "go"))
    assert isinstance(decided, Planting) and decided.failed_groups is not None
    must_fail = next(c for c in decided.canaries if not c.must_pass)
    events = [
        {"Action": "fail", "Package": f"m/{must_fail.group}", "Test": must_fail.name},
        {"Action": "fail", "Package": f"m/{must_fail.group}"},
    ]
    stdout = "\n".join(json.dumps(e) for e in events)
    assert decided.failed_groups(process_result(stdout=stdout, exit_code=1)) == {must_fail.group}
    broken = stdout + "\n" + json.dumps({"Action": "fail", "Package": "m/broken"})
    assert decided.failed_groups(process_result(stdout=broken, exit_code=1)) is None


def test_node_canaries_are_preloaded_and_package_scripts_read(tmp_path: Path) -> None:
    decided = plant_node_test(_request(tmp_path, ("node", "--test"), "node-test"))
    assert isinstance(decided, Planting) and decided.repeats is None
    assert decided.env["NODE_OPTIONS"].startswith("--require ")
    assert "NODE_TEST_CONTEXT" in decided.files[0].text
    _says_nothing_of_what_it_is(decided)
    scripts = {
        "test": "tsc && node --test test/",
        "unit": "jest",
        "only": "node --test --test-only",
    }
    write(tmp_path, {"package.json": json.dumps({"scripts": scripts})})
    npm = ("npm", "run", "test")
    assert isinstance(plant_package_script(_request(tmp_path, npm, "npm-test")), Planting)
    for script in ("unit", "only", "missing"):
        argv = ("npm", "run", script)
        assert isinstance(plant_package_script(_request(tmp_path, argv, "npm-test")), NoCanary)


@pytest.mark.parametrize(
    ("planter", "argv", "suffix"),
    [
        (plant_node_test, ("node", "--test"), ".cjs"),
        (plant_jest, ("jest",), ".setup.cjs"),
        (plant_vitest, ("vitest", "run"), ".setup.mjs"),
    ],
    ids=["node", "jest", "vitest"],
)
def test_js_canaries_try_the_assertion_libraries_on_values_drawn_for_the_run(
    tmp_path: Path, planter: Any, argv: tuple[str, ...], suffix: str
) -> None:
    values = set()
    for _ in range(4):
        decided = planter(_request(tmp_path, argv, argv[0]))
        assert isinstance(decided, Planting)
        (text,) = [f.text for f in decided.files if f.path.endswith(suffix)]
        # The must-pass test is the check, and it runs again after every test.
        assert "assertionsHold);" in text and "afterEach(assertionsHold);" in text
        assert all(f'load("{name}")' in text for name in ("node:assert/strict", "chai"))
        values.add(re.search(r"const a = (\d+), b = (\d+);", text).groups())  # type: ignore[union-attr]
        if shutil.which("node"):
            path = tmp_path / f"planted{suffix}"
            path.write_text(text)
            check = ["node", "--check", str(path)]
            done = subprocess.run(check, capture_output=True, text=True, check=False)
            assert done.returncode == 0, done.stderr
    assert len(values) > 1, values


def test_jest_canaries_wrap_the_projects_config_and_bail_goes(tmp_path: Path) -> None:
    argv = ("jest", "--ci", "-c", "conf/jest.json", "--bail", "--bail=2", "test/")
    decided = plant_jest(_request(tmp_path, argv, "jest"))
    assert isinstance(decided, Planting) and decided.repeats is None
    assert decided.edit_argv is not None and decided.checks is not None
    edited = decided.edit_argv(argv)
    setup, wrapper, reporter, _ = (f.path for f in decided.files)
    # The project's config is read by jest itself, inside the run; only ours is passed.
    assert edited == ("jest", "--ci", "test/", "--config", str(tmp_path.resolve() / wrapper))
    # Reporters the command names replace the configuration's: the tallying one joins them.
    named = decided.edit_argv(("jest", "--reporters=default"))
    assert named[:3] == (
        "jest",
        "--reporters=default",
        f"--reporters={tmp_path.resolve() / reporter}",
    )
    assert '"conf/jest.json"' in decided.files[1].text
    assert "readInitialOptions" in decided.files[1].text and setup in decided.files[1].text
    _says_nothing_of_what_it_is(decided)
    assert all(c.name in decided.files[0].text for c in decided.canaries)
    # A test file that lists tests of its own but not the canaries did not run them.
    pass_name, fail_name = (c.name for c in decided.canaries)
    cases = (
        TestCase(name=pass_name, outcome="passed", file="test/a.test.js"),
        TestCase(name=fail_name, outcome="failed", file="test/a.test.js"),
        TestCase(name="adds", outcome="passed", file="test/a.test.js"),
        TestCase(name="forged", outcome="passed", file="test/b.test.js"),
    )
    tallied = process_result(stderr=f"\n{decided.mark} tally 1\n", exit_code=1)
    problems = decided.checks(tallied, ParsedOutput(test_cases=cases))
    assert len(problems) == 1 and "test/b.test.js" in problems[0]
    # The report lists no fewer failing tests than the planted reporter counted (a red
    # team's: the JSON rewritten after jest wrote it), and that count was written.
    honest = cases[:3]
    assert decided.checks(tallied, ParsedOutput(test_cases=honest)) == []
    more = process_result(stderr=f"\n{decided.mark} tally 2\n", exit_code=1)
    (fewer,) = decided.checks(more, ParsedOutput(test_cases=honest))
    assert "lists 1 failing test(s)" in fewer and "counted 2" in fewer
    (untold,) = decided.checks(process_result(exit_code=1), ParsedOutput(test_cases=honest))
    assert "not counted" in untold
    # A coverage threshold jest failed the run for is not the must-fail canary's failure.
    assert decided.failed_groups is not None
    assert decided.failed_groups(process_result(exit_code=1)) == {""}
    short = 'Jest: Coverage for lines (50%) does not meet "global" threshold (80%)\n'
    assert decided.failed_groups(process_result(stderr=short, exit_code=1)) is None
    # Nor is a test file that failed outside its tests (an `afterAll` that threw).
    hook = "FAIL test/a.test.js\n  \u25cf Test suite failed to run\n\n    teardown broke\n"
    assert decided.failed_groups(process_result(stderr=hook, exit_code=1)) is None


@pytest.mark.parametrize(
    "argv",
    [
        ("jest", "-t", "adds"),
        ("jest", "--testNamePattern=adds"),
        ("jest", "--selectProjects", "a"),
        ("jest", "--config"),
    ],
)
def test_jest_runs_a_canary_would_not_be_part_of_get_none(
    tmp_path: Path, argv: tuple[str, ...]
) -> None:
    assert isinstance(plant_jest(_request(tmp_path, argv, "jest")), NoCanary)


def test_vitest_canaries_wrap_the_projects_config_and_bail_goes(tmp_path: Path) -> None:
    argv = ("vitest", "run", "-c", "conf/vitest.config.ts", "--bail", "1", "--bail=2", "test/")
    decided = plant_vitest(_request(tmp_path, argv, "vitest"))
    assert isinstance(decided, Planting) and decided.repeats is None
    assert decided.edit_argv is not None and decided.checks is not None
    edited = decided.edit_argv(argv)
    setup, wrapper, _ = (f.path for f in decided.files)
    # The project's config is loaded by vitest's own loader, inside the run; only ours is passed.
    wrapped = str(tmp_path.resolve() / wrapper)
    assert edited == ("vitest", "run", "test/", "--config", wrapped, "--configLoader", "native")
    assert '"conf/vitest.config.ts"' in decided.files[1].text
    assert "loadConfigFromFile" in decided.files[1].text and setup in decided.files[1].text
    _says_nothing_of_what_it_is(decided)
    assert all(c.name in decided.files[0].text for c in decided.canaries)
    # A coverage threshold vitest failed the run for is not the must-fail canary's failure.
    assert decided.failed_groups is not None
    assert decided.failed_groups(process_result(exit_code=1)) == {""}
    short = "ERROR: Coverage for lines (50%) does not meet global threshold (80%)\n"
    assert decided.failed_groups(process_result(stderr=short, exit_code=1)) is None
    fewer = "ERROR: Uncovered statements (33) exceed global threshold (30)\n"
    assert decided.failed_groups(process_result(stdout=fewer, exit_code=1)) is None


@pytest.mark.parametrize(
    "argv",
    [
        ("vitest", "run", "-t", "adds"),
        ("vitest", "run", "--testNamePattern=adds"),
        ("vitest", "run", "--project", "a"),
        ("vitest", "run", "--config"),
        ("vitest", "run", "--no-config"),
    ],
)
def test_vitest_runs_a_canary_would_not_be_part_of_get_none(
    tmp_path: Path, argv: tuple[str, ...]
) -> None:
    decided = plant_vitest(_request(tmp_path, argv, "vitest"))
    assert isinstance(decided, NoCanary) and decided.why


PACKAGE = '[package]\nname = "calc"\nversion = "0.1.0"\n'


def test_cargo_canaries_are_an_integration_test_and_fail_fast_goes(tmp_path: Path) -> None:
    write(tmp_path, {"Cargo.toml": PACKAGE})
    argv = ("cargo", "test", "--message-format=json", "--workspace", "--", "--nocapture")
    decided = plant_cargo_test(_request(tmp_path, argv, "cargo"))
    assert isinstance(decided, Planting) and decided.edit_argv is not None
    assert decided.files[0].path.startswith("tests/") and decided.files[0].path.endswith(".rs")
    _says_nothing_of_what_it_is(decided)
    assert decided.failed_exit == 101
    assert decided.edit_argv(argv)[:3] == ("cargo", "test", "--no-fail-fast")


@pytest.mark.parametrize(
    ("manifest", "args", "why"),
    [
        (PACKAGE + "autotests = false\n", (), "autotests"),
        ('[workspace]\nmembers = ["a"]\n', (), "workspace"),
        (PACKAGE, ("adds",), "filters"),
        (PACKAGE, ("--", "adds"), "filters"),
        (PACKAGE, ("--lib",), "--lib"),
        (PACKAGE, ("--", "--ignored"), "--ignored"),
    ],
)
def test_cargo_runs_the_canaries_would_not_be_part_of_get_none(
    tmp_path: Path, manifest: str, args: tuple[str, ...], why: str
) -> None:
    write(tmp_path, {"Cargo.toml": manifest})
    decided = plant_cargo_test(_request(tmp_path, ("cargo", "test", *args), "cargo"))
    assert isinstance(decided, NoCanary) and why in decided.why, decided


def test_a_failure_the_canaries_do_not_account_for_keeps_the_exit(tmp_path: Path) -> None:
    """Coverage under its threshold (pytest-cov) and a cargo test target that crashed fail a
    run with the code the must-fail canary gives: they must not be discounted with it."""
    write(tmp_path, {"Cargo.toml": PACKAGE})
    pytest_planting = plant_pytest(_request(tmp_path, ("pytest",), "pytest"))
    cargo_planting = plant_cargo_test(_request(tmp_path, ("cargo", "test"), "cargo"))
    assert isinstance(pytest_planting, Planting) and isinstance(cargo_planting, Planting)
    coverage = "FAIL Required test coverage of 90% not reached. Total coverage: 50.00%\n"
    target = cargo_planting.files[0].path.removeprefix("tests/").removesuffix(".rs")
    crashed = (
        f"error: test failed, to rerun pass `--test {target}`\n"
        "error: test failed, to rerun pass `--lib`\n"
    )
    for planting, stdout, exit_code in (
        (pytest_planting, coverage, 1),
        (cargo_planting, crashed, 101),
    ):
        cases = [(f"x::{c.name}", "passed" if c.must_pass else "failed") for c in planting.canaries]
        planted = Planted(planting, tmp_path, ())
        result = process_result(exit_code=exit_code, stdout=stdout)
        reading = planted.read(result, _parsed(REAL_PASS, *cases))
        assert (reading.problems, reading.exit_code) == ((), exit_code)
        assert reading.parsed.failure_recognized is True
        # Without it, the canary's failure is the run's only one.
        reading = planted.read(process_result(exit_code=exit_code), _parsed(REAL_PASS, *cases))
        assert (reading.problems, reading.exit_code) == ((), 0)


# --------------------------------------------------------------------------- a real run


def test_a_real_pytest_run_with_canaries_passes_and_leaves_nothing(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "calc.py": "def add(a, b):\n    return a + b\n",
            "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
            # The project's own fail-fast: the canaries still both run, after its tests.
            "pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = .\naddopts = -x\n",
        },
    )
    check = Check(
        name="pytest",
        kind=Kind.TEST,
        argv=(sys.executable, "-m", "pytest", "-q", "-x"),
        tool="pytest",
    )
    before = sorted(os.listdir(tmp_path))
    planted = plant(check, tmp_path)
    assert isinstance(planted, Planted)
    try:
        evidence = run_check(check, root=tmp_path, canaries=planted)
    finally:
        planted.remove()
    assert (evidence.verdict, evidence.cause) == (Verdict.PASS, Cause.EXIT_ZERO), evidence.note
    assert evidence.tests is not None and (evidence.tests.passed, evidence.tests.failed) == (1, 0)
    assert evidence.result is not None and evidence.result.exit_code == 1
    # What pytest and the interpreter write themselves (its cache, byte-code) is not the
    # canaries' to remove.
    written_by_them = {".pytest_cache", "__pycache__"}
    assert sorted(p for p in os.listdir(tmp_path) if p not in written_by_them) == before


def _global_node_bin(name: str) -> str | None:
    """A runner installed with `npm install -g` (as CI does), from npm's global root."""
    npm = shutil.which("npm")
    if npm is None:
        return None
    found = subprocess.run([npm, "root", "-g"], check=False, capture_output=True, text=True)
    root = found.stdout.strip()
    package = Path(root) / name
    return str(package) if root and package.is_dir() else None


JEST = _global_node_bin("jest")
JEST_TESTS = {
    "package.json": json.dumps({"name": "calc", "version": "1.0.0"}),
    # The project's own configuration: its setup file, collection rules and bail all stay.
    "jest.config.js": (
        "module.exports = {\n  testEnvironment: 'node',\n  bail: 1,\n"
        "  testMatch: ['**/spec/**/*.check.js'],\n  setupFilesAfterEnv: ['./setup.js'],\n};\n"
    ),
    "setup.js": "globalThis.seven = 7;\n",
    "calc.js": "exports.add = (a, b) => a + b;\n",
    "spec/calc.check.js": (
        "const { add } = require('../calc.js');\n"
        "test('adds', () => { expect(add(2, 3)).toBe(5); });\n"
        "test('sees the project setup', () => { expect(globalThis.seven).toBe(7); });\n"
    ),
    "spec/more.check.js": "describe('more', () => { test('is true', () => {}); });\n",
    # Not collected by the project's testMatch: never run, canaries or not.
    "test/ignored.test.js": "test('never runs', () => { throw new Error('collected'); });\n",
}


def _jest_run(root: Path) -> Evidence:
    assert JEST is not None, "jest is not installed: `npm install -g jest`, as .ci/run does"
    check = Check(name="jest", kind=Kind.TEST, argv=(f"{JEST}/bin/jest.js", "--ci"), tool="jest")
    before = sorted(os.listdir(root))
    planted = plant(check, root)
    assert isinstance(planted, Planted), planted
    try:
        evidence = run_check(check, root=root, canaries=planted)
    finally:
        planted.remove()
    assert sorted(os.listdir(root)) == before
    return evidence


@pytest.mark.slow
def test_a_real_jest_run_shows_the_canaries_in_every_file_and_does_not_count_them(
    tmp_path: Path,
) -> None:
    write(tmp_path, JEST_TESTS)
    evidence = _jest_run(tmp_path)
    assert (evidence.verdict, evidence.cause) == (Verdict.PASS, Cause.EXIT_ZERO), evidence.note
    assert evidence.tests is not None and (evidence.tests.passed, evidence.tests.failed) == (3, 0)
    assert not [c for c in evidence.test_cases if "canary" in c.name]
    record = evidence.extra["canaries"]
    assert record["finding"] == "as planted", record
    # Once in each of the two test files, the must-fail one included despite `bail: 1`.
    assert [len(t["seen"]) for t in record["tests"]] == [2, 2]
    assert evidence.result is not None and evidence.result.exit_code == 1


@pytest.mark.slow
def test_a_real_jest_failure_with_canaries_is_a_failure(tmp_path: Path) -> None:
    write(tmp_path, {**JEST_TESTS, "calc.js": "exports.add = (a, b) => a - b;\n"})
    evidence = _jest_run(tmp_path)
    assert (evidence.verdict, evidence.cause) == (Verdict.FAIL, Cause.EXIT_NONZERO), evidence.note
    assert evidence.tests is not None and (evidence.tests.passed, evidence.tests.failed) == (2, 1)
    assert evidence.extra["canaries"]["finding"] == "as planted"


VITEST = _global_node_bin("vitest")
VITEST_TESTS = {
    "package.json": json.dumps({"name": "calc", "version": "1.0.0", "type": "module"}),
    # The project's own configuration: its setup file, collection rules and bail all stay.
    "vitest.config.mjs": (
        "export default {\n  test: {\n    bail: 1,\n"
        "    include: ['spec/**/*.check.js'],\n    setupFiles: ['./setup.js'],\n  },\n};\n"
    ),
    "setup.js": "globalThis.seven = 7;\n",
    "calc.js": "export const add = (a, b) => a + b;\n",
    "spec/calc.check.js": (
        "import { test, expect } from 'vitest';\n"
        "import { add } from '../calc.js';\n"
        "test('adds', () => { expect(add(2, 3)).toBe(5); });\n"
        "test('sees the project setup', () => { expect(globalThis.seven).toBe(7); });\n"
    ),
    "spec/more.check.js": (
        "import { describe, test } from 'vitest';\n"
        "describe('more', () => { test('is true', () => {}); });\n"
    ),
    # Not collected by the project's include: never run, canaries or not.
    "test/ignored.test.js": "test('never runs', () => { throw new Error('collected'); });\n",
}


def _vitest_run(root: Path) -> Evidence:
    assert VITEST is not None, "vitest is not installed: `npm install -g vitest`, as .ci/run does"
    argv = (f"{VITEST}/vitest.mjs", "run")
    check = Check(name="vitest", kind=Kind.TEST, argv=argv, tool="vitest")
    before = sorted(os.listdir(root))
    planted = plant(check, root)
    assert isinstance(planted, Planted), planted
    try:
        evidence = run_check(check, root=root, canaries=planted)
    finally:
        planted.remove()
    # vitest keeps its results cache in node_modules/.vite, canaries or not.
    assert sorted(p for p in os.listdir(root) if p != "node_modules") == before
    return evidence


@pytest.mark.slow
def test_a_real_vitest_run_shows_the_canaries_in_every_file_and_does_not_count_them(
    tmp_path: Path,
) -> None:
    write(tmp_path, VITEST_TESTS)
    evidence = _vitest_run(tmp_path)
    assert (evidence.verdict, evidence.cause) == (Verdict.PASS, Cause.EXIT_ZERO), evidence.note
    assert evidence.tests is not None and (evidence.tests.passed, evidence.tests.failed) == (3, 0)
    assert not [c for c in evidence.test_cases if "canary" in c.name]
    record = evidence.extra["canaries"]
    assert record["finding"] == "as planted", record
    # Once in each of the two test files, the must-fail one included despite `bail: 1`.
    assert [len(t["seen"]) for t in record["tests"]] == [2, 2]
    assert evidence.result is not None and evidence.result.exit_code == 1


@pytest.mark.slow
def test_a_real_vitest_failure_with_canaries_is_a_failure(tmp_path: Path) -> None:
    write(tmp_path, {**VITEST_TESTS, "calc.js": "export const add = (a, b) => a - b;\n"})
    evidence = _vitest_run(tmp_path)
    assert (evidence.verdict, evidence.cause) == (Verdict.FAIL, Cause.EXIT_NONZERO), evidence.note
    assert evidence.tests is not None and (evidence.tests.passed, evidence.tests.failed) == (2, 1)
    assert evidence.extra["canaries"]["finding"] == "as planted"


#: pytest's output of a run with one real failure beside the canaries (without -q).
PYTEST_PRINTED = """\
..F.F
=================================== FAILURES ===================================
___________________________________ test_f1 ____________________________________

    def test_f1():
>       assert f1(2) == 2
E       assert 3 == 2

tests/test_mod.py:9: AssertionError
______________________________ test_plain_sum_key ______________________________

guard = <function _guarding.<locals>.guard at 0x7ff492e9d1c0>

    def test_plain_sum_key(guard=_guard):
>       assert 430 == 431
E       assert 430 == 431

.tail_input/stop_node.py:286: AssertionError
=========================== short test summary info ============================
FAILED tests/test_mod.py::test_f1 - assert 3 == 2
FAILED .tail_input/stop_node.py::test_plain_sum_key - assert 430 == 431
========================= 2 failed, 3 passed in 0.77s ==========================
"""


def test_the_canaries_are_left_out_of_pytests_printed_output() -> None:
    from assay.canaries.python import _pytest_printed_without

    canaries = (Canary("test_plain_sum_key", must_pass=False), Canary("test_held", must_pass=True))
    ran = Counter(passed=1, failed=1)
    printed = _pytest_printed_without(canaries, PYTEST_PRINTED, ran)
    assert "test_plain_sum_key" not in printed and "430" not in printed
    assert "tests/test_mod.py:9: AssertionError\n=====" in printed
    assert "FAILED tests/test_mod.py::test_f1 - assert 3 == 2\n" in printed
    assert printed.endswith(
        "========================= 1 failed, 2 passed in 0.77s ==========================\n"
    )
    only = _pytest_printed_without(canaries, "1 failed, 1 passed in 0.02s\n", ran)
    assert only == "no tests ran in 0.02s\n"


def _go_run(decided: Planting, events: list[dict[str, Any]], exit_code: int = 1) -> Any:
    """`events` as `go test -json` printed them (package `m` where they name none), read
    against `decided`'s canaries."""
    from assay.canaries import Planted
    from assay.parsers.go import parse_test_json

    stdout = "\n".join(json.dumps({"Package": "m", **e}) for e in events)
    result = process_result(("go", "test", "-json", "./..."), stdout=stdout, exit_code=exit_code)
    check = Check(name="go-test", kind=Kind.TEST, argv=result.argv, tool="go")
    return Planted(decided, Path("."), ()).read(result, parse_test_json(check, result, None))


def test_a_go_package_passes_as_a_package_or_fails_the_run(tmp_path: Path) -> None:
    """The must-fail canary is alone in a package of its own, so nothing licenses a
    project's package that failed: one that printed a pass for every test, the must-pass
    canary's too, and died (a panic in an `init`), fails the run. The must-pass canary runs
    in parallel, after the package's sequential tests: a package that exits non-zero under
    a test never runs it, and fails; one that passed without it kept its look at the output
    channel from running, and the report cannot be believed."""
    write(tmp_path, {"go.mod": "module m\n", "a_test.go": GO_TEST.format("m")})
    decided = plant_go_test(_request(tmp_path, ("go", "test", "-json", "./..."), "go"))
    assert isinstance(decided, Planting)
    must_fail = next(c for c in decided.canaries if not c.must_pass)
    must_pass = next(c for c in decided.canaries if c.must_pass)
    own = f"m/{must_fail.group}"
    canary_package = [
        {"Action": "run", "Package": own, "Test": must_fail.name},
        {"Action": "fail", "Package": own, "Test": must_fail.name},
        {"Action": "fail", "Package": own},
    ]
    started = [
        {"Action": "run", "Test": must_pass.name},
        {"Action": "pause", "Test": must_pass.name},
        {"Action": "run", "Test": "TestAdd"},
    ]
    passed = [
        {"Action": "pass", "Test": "TestAdd"},
        {"Action": "cont", "Test": must_pass.name},
        {"Action": "pass", "Test": must_pass.name},
    ]
    honest = _go_run(decided, [*canary_package, *started, *passed, {"Action": "pass"}])
    assert not honest.problems and honest.exit_code == 0, honest.problems
    assert not honest.parsed.failure_recognized
    for cut_short in (
        [*canary_package, *started, {"Action": "fail"}],
        [*canary_package, *started, *passed, {"Action": "fail"}],
    ):
        reading = _go_run(decided, cut_short)
        assert not reading.problems, reading.problems
        assert reading.exit_code == 1 and reading.parsed.failure_recognized
    unlooked = _go_run(decided, [*canary_package, *started, passed[0], {"Action": "pass"}])
    assert unlooked.problems == ("the tests planted in . were never reported",)
    package_passed = [*canary_package[:2], {"Action": "pass", "Package": own}]
    lenient = _go_run(decided, [*package_passed, *started, *passed, {"Action": "pass"}])
    assert lenient.problems == (f"package {own}, planted to fail, was not reported failed",)
    joined = [*canary_package, {"Action": "pass", "Package": own, "Test": "TestAdd"}]
    crowded = _go_run(decided, [*joined, *started, *passed, {"Action": "pass"}])
    assert crowded.problems == (f"package {own}, planted to hold one test, reported TestAdd",)


def test_go_printed_output_leaves_out_the_must_fail_package(tmp_path: Path) -> None:
    """A person reads no `FAIL` for the package assay added, in module or GOPATH mode."""
    write(tmp_path, {"go.mod": "module m\n", "a_test.go": GO_TEST.format("m")})
    decided = plant_go_test(_request(tmp_path, ("go", "test", "./..."), "go"))
    assert isinstance(decided, Planting) and decided.printed is not None
    (failing,) = [c for c in decided.canaries if not c.must_pass]
    own = failing.group
    text = (
        f"=== RUN   {failing.name}\n--- FAIL: {failing.name} (0.00s)\nFAIL\n"
        f"FAIL\tm/{own}\t0.003s\nFAIL\t_/tmp/w/{own}\t0.1s\n"
        f"--- FAIL: TestAdd (0.00s)\nFAIL\nFAIL\tm/x{own}\t0.1s\nok  \tm\t0.01s\n"
    )
    assert decided.printed(text, Counter()) == (
        f"--- FAIL: TestAdd (0.00s)\nFAIL\nFAIL\tm/x{own}\t0.1s\nok  \tm\t0.01s\n"
    )

"""JUnit XML and SARIF renderings of a report, and their well-formedness on hostile output."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from hypothesis import given, settings
from hypothesis import strategies as st

from assay.evidence import Check, CheckerId, Diagnostic, TestCase, TestCounts, evidence_for
from assay.formats import render_junit, render_sarif, to_sarif
from assay.formats.junit import MAX_OUTPUT_CHARS
from assay.process import ProcessResult
from assay.report import aggregate
from assay.verdict import Cause, Kind
from tests.results import process_result


def result(
    argv: tuple[str, ...], exit_code: int, out: str = "", duration: float = 0.5
) -> ProcessResult:
    return process_result(argv, exit_code=exit_code, duration_s=duration, stdout=out)


def sample_report():
    mypy = Check("mypy", Kind.TYPECHECK, ("mypy", "src"), tool="mypy")
    pytest_check = Check("pytest", Kind.TEST, ("pytest", "-q"), tool="pytest")
    tsc = Check("tsc", Kind.TYPECHECK, ("tsc", "--noEmit"), tool="tsc")
    return aggregate(
        [
            evidence_for(
                mypy,
                Cause.EXIT_NONZERO,
                checker=CheckerId("mypy", "1.10.0"),
                result=result(mypy.argv, 1, "src/a.py:3: error: bad [arg-type]\n"),
                diagnostics=(
                    Diagnostic(
                        "bad", file="src/a.py", line=3, column=5, code="arg-type", tool="mypy"
                    ),
                    Diagnostic(
                        "worse", file="./src/b.py", line=1, code="arg-type", severity="warning"
                    ),
                    Diagnostic("no location"),
                ),
                reason="src/a.py:3: error: bad",
            ),
            evidence_for(
                pytest_check,
                Cause.EXIT_ZERO,
                checker=CheckerId("pytest", "8.2.0"),
                result=result(pytest_check.argv, 0, "2 passed, 1 skipped\x1b[0m\x00"),
                tests=TestCounts(passed=2, skipped=1),
                test_cases=(
                    TestCase("test_a", "passed", file="tests/test_a.py", duration_s=0.1),
                    TestCase("test_b", "failed", message="assert 1 == 2"),
                    TestCase("test_c", "skipped"),
                ),
            ),
            evidence_for(
                tsc, Cause.TOOLCHAIN_MISSING, note="tsc not installed: npm i -D typescript"
            ),
        ]
    )


def test_junit_one_testcase_per_check_and_per_test() -> None:
    root = ET.fromstring(render_junit(sample_report()))
    assert root.tag == "testsuites" and root.get("status") == "FAILED"
    checks, tests = root.findall("testsuite")
    assert checks.get("name") == "assay.checks"
    assert (checks.get("tests"), checks.get("failures"), checks.get("skipped")) == ("3", "1", "1")
    cases = {c.get("name"): c for c in checks.findall("testcase")}
    assert cases["mypy"].find("failure") is not None
    assert "src/a.py:3:5: arg-type bad" in (cases["mypy"].find("failure").text or "")
    assert cases["tsc"].find("skipped").get("message") == "tsc not installed: npm i -D typescript"
    assert cases["pytest"].find("failure") is None
    assert (
        tests.get("name") == "pytest" and tests.get("tests") == "3" and tests.get("failures") == "1"
    )
    assert [c.get("name") for c in tests.findall("testcase")] == ["test_a", "test_b", "test_c"]


def test_sarif_diagnostics_with_location_and_rule() -> None:
    log = to_sarif(sample_report())
    assert log["version"] == "2.1.0" and "$schema" in log
    runs = {r["tool"]["driver"]["name"]: r for r in log["runs"]}
    mypy = runs["mypy"]
    assert mypy["tool"]["driver"]["version"] == "1.10.0"
    assert mypy["tool"]["driver"]["rules"] == [{"id": "arg-type"}]
    first, second, third = mypy["results"]
    assert first["ruleId"] == "arg-type" and first["ruleIndex"] == 0 and first["level"] == "error"
    assert first["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "src/a.py"},
        "region": {"startLine": 3, "startColumn": 5},
    }
    assert second["level"] == "warning"
    assert second["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/b.py"
    assert "locations" not in third
    assert runs["pytest"]["results"] == []
    assert runs["tsc"]["invocations"][0]["executionSuccessful"] is False
    assert "exitCode" not in runs["tsc"]["invocations"][0]
    assert json.loads(render_sarif(sample_report())) == log


def test_junit_says_how_much_output_it_cut() -> None:
    check = Check("pytest", Kind.TEST, ("pytest",), tool="pytest")
    long_output = "x" * (MAX_OUTPUT_CHARS + 7) + "1 failed"
    report = aggregate(
        [evidence_for(check, Cause.EXIT_NONZERO, result=result(check.argv, 1, long_output))]
    )
    out = ET.fromstring(render_junit(report)).find("testsuite/testcase/system-out")
    assert out is not None and out.text is not None
    assert out.text.startswith("[assay: first 15 characters not shown]\n")
    assert out.text.endswith("1 failed")


def test_empty_report() -> None:
    report = aggregate([])
    assert ET.fromstring(render_junit(report)).find("testsuite").get("tests") == "0"
    assert to_sarif(report)["runs"] == []


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200), st.text(max_size=50))
def test_any_output_and_message_stay_well_formed(output: str, message: str) -> None:
    check = Check(message or "x", Kind.TEST, ("t",), tool="shell")
    evidence = evidence_for(
        check,
        Cause.EXIT_NONZERO,
        result=result(check.argv, 1, output),
        diagnostics=(Diagnostic(message, file=message, line=1, code=message or None),),
        test_cases=(TestCase(message, "failed", message=output),),
        reason=output,
    )
    report = aggregate([evidence])
    ET.fromstring(render_junit(report))
    json.loads(render_sarif(report))

"""A unittest run read generically names its failing tests.

Measured on real projects: simplejson's own runner module (`python -m
simplejson.tests._cibw_runner .`) and any make target that runs unittest are read by the
generic reader, which counted "37 of 373 tests failed" from unittest's summary and named
none of them, though unittest's listing names each (`FAIL: test_x (mod.Class.test_x)`), as
the unittest reader reads it.
"""

from __future__ import annotations

from assay.classify import classify
from assay.evidence import Check, Evidence
from assay.parsers import ParsedOutput, parse_output
from assay.verdict import Cause, Kind, Verdict
from tests.results import process_result

CWD = "/work/proj"
RULE = "=" * 70
DASH = "-" * 70
OUTPUT = f"""..F.E.
{RULE}
ERROR: test_load (simplejson.tests.test_raw_json.TestRawJson.test_load)
{DASH}
Traceback (most recent call last):
  File "/work/proj/simplejson/tests/test_raw_json.py", line 40, in test_load
    json.loads(x)
ValueError: boom

{RULE}
FAIL: test_dumps (simplejson.tests.test_dump.TestDump.test_dumps)
{DASH}
Traceback (most recent call last):
  File "/work/proj/simplejson/tests/test_dump.py", line 12, in test_dumps
    self.assertEqual(json.dumps({{}}), '{{}}')
AssertionError: '{{ }}' != '{{}}'

{DASH}
Ran 6 tests in 0.012s

FAILED (failures=1, errors=1)
"""


def _evidence() -> tuple[ParsedOutput, Evidence]:
    check = Check(
        name="python3-test", kind=Kind.TEST, argv=("python3", "-m", "pkg.tests"), tool="shell"
    )
    result = process_result(check.argv, cwd=CWD, exit_code=1, stderr=OUTPUT)
    parsed = parse_output(check, result)
    return parsed, classify(check, result, parsed)


def test_the_failing_tests_are_named_with_where_and_why() -> None:
    parsed, _ = _evidence()
    named = {c.name: c for c in parsed.test_cases}
    assert set(named) == {
        "simplejson.tests.test_raw_json.TestRawJson.test_load",
        "simplejson.tests.test_dump.TestDump.test_dumps",
    }, parsed.test_cases
    failed = named["simplejson.tests.test_dump.TestDump.test_dumps"]
    assert failed.outcome == "failed"
    assert failed.file == "simplejson/tests/test_dump.py"
    assert failed.message is not None and "AssertionError" in failed.message
    assert named["simplejson.tests.test_raw_json.TestRawJson.test_load"].outcome == "error"


def test_the_evidence_carries_them() -> None:
    _, evidence = _evidence()
    assert (evidence.verdict, evidence.cause) == (Verdict.FAIL, Cause.EXIT_NONZERO)
    assert [c.name for c in evidence.test_cases if c.outcome == "failed"] == [
        "simplejson.tests.test_dump.TestDump.test_dumps"
    ], evidence.test_cases


def test_a_passing_run_names_nothing() -> None:
    check = Check(name="t", kind=Kind.TEST, argv=("python3", "-m", "pkg.tests"), tool="shell")
    ok = f"......\n{DASH}\nRan 6 tests in 0.01s\n\nOK\n"
    parsed = parse_output(check, process_result(check.argv, cwd=CWD, exit_code=0, stderr=ok))
    assert parsed.test_cases == ()

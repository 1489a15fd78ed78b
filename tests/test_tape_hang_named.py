"""A tape run stopped at assay's deadline names the test it was in.

Measured on real projects: fastify/deepmerge (`c8 tape test/*.js`) with an endless loop in
`cloneArray`: "npm-test was killed at its deadline", though tape had printed the test it had
started (`# should replace objects with arrays`), as uvu's open suite is named.
"""

from __future__ import annotations

from assay.evidence import Check
from assay.parsers.node import parse_node_test, tape_running
from assay.verdict import Kind
from tests.results import process_result

HUNG = """\

> @fastify/deepmerge@3.2.1 test:unit
> c8 tape test/*.js

TAP version 13
# merge nested objects into target
ok 20 should be deeply equivalent
ok 21 should be deeply equivalent
# should replace object with simple key in target
ok 30 should be deeply equivalent
ok 31 should be deeply equivalent
# should replace objects with arrays
"""


def test_the_test_tape_had_begun_is_named() -> None:
    assert tape_running(HUNG) == "should replace objects with arrays"


def test_a_finished_run_or_another_runners_output_names_nothing() -> None:
    finished = HUNG + "ok 32 should be equal\n\n1..32\n# tests 32\n# pass  32\n\n# ok\n"
    assert tape_running(finished) is None
    assert tape_running(HUNG.replace("c8 tape", "c8 node --test")) is None


def test_the_timed_out_check_carries_it() -> None:
    check = Check(name="npm-test", kind=Kind.TEST, argv=("npm", "run", "test"), tool="npm-test")
    result = process_result(
        check.argv, cwd="/work/proj", exit_code=None, stdout=HUNG, timed_out=True, signal=15
    )
    parsed = parse_node_test(check, result, None)
    assert parsed.hung_tests == ("should replace objects with arrays",), parsed

"""A jest test file that failed to run is named by its path, not "Test suite failed to run".

Measured on real projects: tiny-invariant with a type error in its source (ts-jest type-
checks each test file's imports): "yarn-test failed: 3 of 5 tests failed, the first Test
suite failed to run", three test cases all called "Test suite failed to run", none with a
file.
"""

from __future__ import annotations

from assay.parsers.node_failures import printed_failures

CWD = "/work/proj"
OUTPUT = """\
FAIL test/message-behaviour.spec.ts
  ● Test suite failed to run

    src/tiny-invariant.ts:2:7 - error TS2322: Type 'string' is not assignable to type 'number'.

    2 const prefix: number = 'Invariant failed';
            ~~~~~~

PASS test/type-narrowing.spec.ts
FAIL test/throw-behaviour.spec.ts
  ● Test suite failed to run

    src/tiny-invariant.ts:2:7 - error TS2322: Type 'string' is not assignable to type 'number'.

FAIL test/bundle-behaviour.spec.ts
  ● invariant › throws when falsy

    expect(received).toThrow()

Test Suites: 2 failed, 1 passed, 3 total
Tests:       1 failed, 2 passed, 3 total
"""


def test_each_file_that_failed_to_run_is_named() -> None:
    names = [c.name for c in printed_failures(OUTPUT, CWD)]
    assert names == [
        "test/message-behaviour.spec.ts: test suite failed to run",
        "test/throw-behaviour.spec.ts: test suite failed to run",
        "invariant › throws when falsy",
    ], names


def test_the_reason_stays_the_message() -> None:
    first = printed_failures(OUTPUT, CWD)[0]
    assert first.message is not None and "TS2322" in first.message, first.message

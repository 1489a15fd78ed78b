"""A vitest file's summary line is no test: `✓ src/cases.spec.ts (0 test) 3ms` counts
nothing, where a hand-rolled harness's `✓ name` line counts one.

Measured on path-to-regexp: `ts-scripts test` runs vitest, and with a loop in `escape` the
run hung after that one line; the hang's counts said "1 passed" of a file with no test.
"""

from __future__ import annotations

from assay.parsers.generic import parse_counts

_HUNG_AFTER_A_FILE = (
    " RUN  v3.2.7 .\n      Coverage enabled with v8\n\n ✓ src/cases.spec.ts (0 test) 3ms\n"
)


def test_a_files_summary_line_counts_no_test() -> None:
    assert parse_counts(_HUNG_AFTER_A_FILE) is None


def test_a_files_line_beside_a_tests_counts_only_the_test() -> None:
    text = " ✓ src/index.spec.ts (376 tests) 179ms\n ✓ parses a path\n ✗ escapes a colon\n"
    counts = parse_counts(text)
    assert counts is not None and (counts.passed, counts.failed) == (1, 1), counts

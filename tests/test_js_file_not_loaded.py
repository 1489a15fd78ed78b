"""A jest or vitest test file that failed to load ran no test: the note says so and why,
where it said "1 of 1 tests failed: FILE". @open-draft/until 3.0.1 with a stray `]` in
src/index.ts: vitest's `Transform failed with 1 error: [PARSE_ERROR] ...` at
src/index.ts:22:24 was read as the one test of src/until.test.ts failing. Real jest and
vitest (npm's global installs, as CI has them) under real bubblewrap."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.verdict import Kind, Status
from tests.attacks import explain
from tests.repos import write
from tests.test_js_hang_named import _needs, _stopped

BROKEN = "export function twice(n: number): number {\n  return [n * 2]]\n}\n"
VITEST_TEST = (
    "import { test, expect } from 'vitest';\nimport { twice } from '../src/index';\n"
    "test('twice', () => { expect(twice(2)).toBe(4); });\n"
)
JEST_TEST = (
    "const { twice } = require('../index');\ntest('twice', () => { expect(twice(2)).toBe(4); });\n"
)


@pytest.mark.slow
@pytest.mark.parametrize("runner", ["vitest", "jest"])
def test_a_test_file_that_did_not_load_is_named_as_such_with_why(
    tmp_path: Path, runner: str
) -> None:
    _needs(runner)
    if runner == "vitest":
        files = {"src/index.ts": BROKEN, "test/index.test.ts": VITEST_TEST}
        script, where, manifest = "vitest run", "src/index.ts:2:", {"type": "module"}
    else:
        files = {"index.js": "exports.twice = (n) => { n * 2 ;\n", "test/index.test.js": JEST_TEST}
        script, where, manifest = "jest --ci", "index.js", {}
    package = {"name": "twice", "version": "1.0.0", **manifest, "scripts": {"test": script}}
    report = _stopped(write(tmp_path, {"package.json": json.dumps(package), **files}))
    assert report.status is Status.FAILED, explain(report)
    (test,) = [c for c in report.checks if c.check.kind is Kind.TEST]
    assert test.tests is not None and test.tests.passed + test.tests.failed == 0, test.tests
    assert "tests failed" not in report.note, report.note
    assert "could not be collected: " in report.note and where in report.note, report.note
    assert "\n" not in report.note, report.note

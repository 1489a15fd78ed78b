"""A run assay's deadline stopped failed only the tests its runner reported failing before
the deadline: what it reports after is what the deadline's signals did.

Found in CI, one run in a few under load: `node --test` over a file whose test spins was
FAILED "1 of 1 tests failed" instead of INDETERMINATE, because the deadline's SIGTERM killed
the file's process first and the runner, not yet killed itself, reported that file as a
failed test (`signal: 'SIGTERM'`). A conftest that turns SIGTERM into a test failure does
the same every time, which is how the end-to-end test below is made.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from assay.classify import classify
from assay.evidence import Check
from assay.parsers import parse_output
from assay.process_result import ProcessResult
from assay.verdict import Cause, Kind
from tests.cli import assay, assay_env, no_traceback
from tests.repos import write
from tests.results import captured, process_result

NODE_TEST = Check(name="npm-test", kind=Kind.TEST, argv=("npm", "test"), tool="npm-test")

#: What `node --test` printed before the deadline: nothing of the file still running.
BEFORE = "TAP version 13\n"
#: ... and once the deadline's SIGTERM had killed the file's process, but not it yet.
AFTER = """\
# Subtest: /w/test/a.test.js
not ok 1 - /w/test/a.test.js
  ---
  duration_ms: 1824.58
  failureType: 'testCodeFailure'
  exitCode: ~
  signal: 'SIGTERM'
  error: 'test failed'
  code: 'ERR_TEST_FAILURE'
  ...
1..1
# tests 1
# pass 0
# fail 1
"""


def _stopped(before: str, after: str) -> ProcessResult:
    ran = process_result(
        ("npm",), cwd="/w", exit_code=1, timed_out=True, stdout=before + after, duration_s=8
    )
    return replace(ran, said_by_deadline=(captured(before), captured("")))


def test_a_test_reported_failing_after_the_deadline_is_no_failure() -> None:
    ran = _stopped(BEFORE, AFTER)
    parsed = parse_output(NODE_TEST, ran, None)
    assert parsed.tests is None or not parsed.tests.any_failed, parsed.tests
    assert classify(NODE_TEST, ran, parsed).cause is Cause.TIMEOUT


def test_a_test_reported_failing_before_the_deadline_still_fails() -> None:
    ran = _stopped(BEFORE + AFTER, "")
    parsed = parse_output(NODE_TEST, ran, None)
    assert parsed.tests is not None and parsed.tests.failed == 1, parsed.tests
    assert classify(NODE_TEST, ran, parsed).cause is Cause.EXIT_NONZERO


#: `node --test` over two files, as printed by hand: `a` failed before the deadline; `b`
#: spun, and its process was killed by the deadline's SIGTERM a moment before the runner.
FAILED_BEFORE = """\
TAP version 13
# Subtest: adds
not ok 1 - adds
  ---
  duration_ms: 2.121473
  location: '/w/test/a.test.js:3:1'
  failureType: 'testCodeFailure'
  error: |-
    Expected values to be strictly equal:

    2 !== 3

  code: 'ERR_ASSERTION'
  ...
"""
KILLED_AFTER = (
    AFTER.replace("not ok 1", "not ok 2")
    .replace("1..1", "1..2")
    .replace("# tests 1\n# pass 0\n# fail 1", "# tests 2\n# pass 0\n# fail 2")
)


def test_only_the_failures_reported_before_the_deadline_are_counted() -> None:
    ran = _stopped(FAILED_BEFORE, KILLED_AFTER)
    parsed = parse_output(NODE_TEST, ran, None)
    assert parsed.tests is not None and parsed.tests.failed == 1, parsed.tests
    assert [case.name for case in parsed.test_cases if case.outcome == "failed"] == ["adds"]
    assert classify(NODE_TEST, ran, parsed).cause is Cause.EXIT_NONZERO


def test_what_was_said_by_the_deadline_is_not_stored() -> None:
    ran = _stopped(BEFORE, AFTER)
    stored = ProcessResult.from_dict(json.loads(json.dumps(ran.to_dict())))
    assert stored.said_by_deadline is None
    assert stored.stdout.text == BEFORE + AFTER


TESTS = {
    "test_calc.py": (
        "def test_adds():\n    assert 1 + 1 == 2\n\n\n"
        "def test_spins():\n    while True:\n        pass\n"
    ),
    # Every SIGTERM fails the test running then: pytest reports it, in its report file too.
    "conftest.py": (
        "import signal\n\nimport pytest\n\n\n"
        "def _fail(*_):\n    pytest.fail('stopped by a signal')\n\n\n"
        "signal.signal(signal.SIGTERM, _fail)\n"
    ),
}


def _verified(repo: Path, tmp_path: Path) -> dict[str, Any]:
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"))
    done = assay("verify", "--json", "--no-cache", "--timeout", "5", str(repo), env=env)
    no_traceback(done)
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_a_hung_test_the_deadline_made_fail_is_indeterminate(tmp_path: Path) -> None:
    report = _verified(write(tmp_path / "repo", TESTS), tmp_path)
    assert report["status"] == "INDETERMINATE", report["note"]
    assert "deadline" in report["note"], report["note"]


#: `node --test` over two files: one fails and is reported, the other spins.
NODE_SUITE = {
    "package.json": '{"name": "p", "version": "1.0.0", "scripts": {"test": "node --test"}}\n',
    "index.js": "module.exports = function spin () { for (;;) {} }\n",
    "test/a.test.js": (
        "const test = require('node:test')\nconst assert = require('node:assert')\n"
        "test('adds', () => { assert.strictEqual(1 + 1, 3) })\n"
    ),
    "test/b.test.js": (
        "const test = require('node:test')\nconst spin = require('..')\n"
        "test('hangs', () => { spin() })\n"
    ),
}


def test_a_test_that_failed_before_the_hang_still_fails_the_run(tmp_path: Path) -> None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.fail("node and npm must be on PATH: .ci/run installs them")
    report = _verified(write(tmp_path / "repo", NODE_SUITE), tmp_path)
    assert report["status"] == "FAILED", report["note"]
    (check,) = report["checks"]
    assert check["tests"]["failed"] == 1, check["tests"]

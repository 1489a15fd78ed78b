"""tape blocks that assert through node's `assert` (events 3.3.0): tape counts no assertion
and ends `1..0`, `# tests 0`, `# ok`, though every block ran. They are the tests that ran,
not a run without tests; one that throws fails the run as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.evidence import Check
from assay.parsers import parse_output
from assay.parsers.generic import parse_counts
from assay.verdict import Kind
from tests.cli import assay, assay_env, no_traceback
from tests.repos import write
from tests.results import process_result
from tests.test_node_failures import GLOBAL

TAPE_RUN = "TAP version 13\n# adds\n# subtracts\n\n1..0\n# tests 0\n# pass  0\n\n# ok\n\n"
#: node --test with no test: the same summary words, no `# ok`, no block headed.
NODE_NONE = "TAP version 13\n1..0\n# tests 0\n# suites 0\n# pass 0\n# fail 0\n# duration_ms 5\n"
#: tape with no test block at all.
TAPE_NONE = "TAP version 13\n\n1..0\n# tests 0\n# pass  0\n\n# ok\n"

NPM_TEST = Check(name="npm-test", kind=Kind.TEST, argv=("npm", "test"), tool="npm-test")


@pytest.mark.parametrize(("text", "passed"), [(TAPE_RUN, 2), (NODE_NONE, 0), (TAPE_NONE, 0)])
def test_the_blocks_tape_ran_without_assertions_are_counted(text: str, passed: int) -> None:
    parsed = parse_output(NPM_TEST, process_result(stdout="> x test\n> node t.js\n\n" + text))
    assert parsed.tests is not None and parsed.tests.passed == passed
    assert parsed.no_tests_reported is (passed == 0)
    counts = parse_counts(text)
    assert counts is not None and counts.passed == passed


TEST_JS = (
    "var test = require('tape');\nvar assert = require('assert');\n"
    "test('adds', function (t) { assert.equal(1 + 1, 2); t.end(); });\n"
    "test('subtracts', function (t) { assert.equal(2 - 1, {value}); t.end(); });\n"
)


@pytest.mark.parametrize(("value", "status"), [("1", "VERIFIED"), ("3", "FAILED")])
def test_a_tape_suite_asserting_with_node_assert_is_verified_for_real(
    tmp_path: Path, value: str, status: str
) -> None:
    if not (GLOBAL / "tape").is_dir():
        pytest.fail(f"tape is needed at {GLOBAL / 'tape'} (.ci/run installs it)")
    package = {"name": "t", "version": "1.0.0", "scripts": {"test": "node test.js"}}
    repo = write(
        tmp_path / "repo",
        {"package.json": json.dumps(package), "test.js": TEST_JS.replace("{value}", value)},
    )
    (repo / "node_modules").mkdir()
    (repo / "node_modules" / "tape").symlink_to(GLOBAL / "tape")
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"))
    done = assay("verify", "--json", "--no-cache", str(repo), env=env, timeout=180)
    no_traceback(done)
    report = json.loads(done.stdout)
    assert report["status"] == status, report["note"]
    (check,) = report["checks"]
    if status == "VERIFIED":
        assert check["tests"]["passed"] == 2, check["tests"]
    else:
        assert "1 == 3" in report["note"], report["note"]

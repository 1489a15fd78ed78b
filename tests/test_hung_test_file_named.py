"""A test run stopped at assay's deadline names the project's file its processes were still
running, where the runner printed nothing of it.

Measured on @fastify/error 4.3.0 (`"test:unit": "c8 --100 node --test"`) with an endless
loop in `toString`: node's runner runs each test file in a process of its own and reports
nothing of a file until it ends, so the output was only `TAP version 13` and the note said
"npm-test was killed at its deadline", naming nothing, where `node test/index.test.js`
was still running. Real node, real npm, real bubblewrap.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.pipeline import VerifyOptions, verify
from assay.process import ProcessResult
from assay.verdict import Cause, Status
from tests.repos import write

pytestmark = pytest.mark.slow

SUITE = {
    "package.json": '{"name": "p", "version": "1.0.0", "scripts": {"test": "node --test"}}\n',
    "index.js": "module.exports = function spin () { for (;;) {} }\n",
    "test/a.test.js": (
        "const test = require('node:test')\nconst spin = require('..')\n"
        "test('passes', () => {})\ntest('hangs', () => { spin() })\n"
    ),
}


def _verify(repo: Path) -> tuple[Status, Cause | None, str, ProcessResult | None]:
    report = verify(
        repo,
        VerifyOptions(sandbox="bwrap", use_cache=False, kinds=frozenset({"test"}), timeout_s=8.0),
    )
    (check,) = report.checks
    return report.status, check.cause, check.note, check.result


def test_a_hung_node_test_file_is_named(tmp_path: Path) -> None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.fail("node and npm must be on PATH: .ci/run installs them")
    status, cause, note, process = _verify(write(tmp_path, SUITE))
    assert (status, cause) == (Status.INDETERMINATE, Cause.TIMEOUT), note
    assert "while running test/a.test.js (its process was still running then)" in note, note
    # The evidence keeps what ran, and a stored report reads it back.
    assert process is not None and process.running_at_deadline, process
    stored = ProcessResult.from_dict(process.to_dict())
    assert stored.running_at_deadline == process.running_at_deadline, stored


def test_a_run_that_ends_names_nothing_running(tmp_path: Path) -> None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.fail("node and npm must be on PATH: .ci/run installs them")
    done = {**SUITE, "index.js": "module.exports = function spin () {}\n"}
    status, _, note, process = _verify(write(tmp_path, done))
    assert status is Status.VERIFIED, note
    assert process is not None and process.running_at_deadline == (), process

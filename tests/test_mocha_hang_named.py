"""A mocha run stopped at assay's deadline names where it was: its open suites and the test
after the last one it printed (mocha prints a test's line only as the test ends).

Measured on a real project: bytes.js (`mocha --check-leaks --reporter spec`) with an endless
loop in `format`: "npm-test printed nothing for 60 s and was stopped (a hang)", the test
unnamed, where mocha had printed `Test byte format function` and no test in it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from assay.parsers.node import mocha_running
from tests.cli import assay, assay_env, no_traceback
from tests.repos import write

HUNG = """\

> bytes@3.1.2 test
> mocha --check-leaks --reporter spec



  Test byte format function
    ✔ Should return null if input is invalid
    nested
      ✔ works (3ms)
      1) fails
    ✔ Should convert numbers < 1 024 to `bytes` string
"""


def test_the_open_suite_and_the_test_after_the_last_printed_are_named() -> None:
    assert mocha_running(HUNG) == (
        "Test byte format function > the test after 'Should convert numbers < 1 024 to "
        "`bytes` string'"
    )
    begun = HUNG + "  Test byte parse function\n    inner\n"
    assert mocha_running(begun) == "Test byte parse function > inner > its first test"


def test_a_finished_run_or_another_runners_output_names_nothing() -> None:
    assert mocha_running(HUNG + "\n\n  4 passing (9ms)\n  1 failing\n") is None
    assert mocha_running(HUNG.replace("> mocha", "> tape")) is None


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("mocha") is None, reason="needs mocha")
def test_a_real_mocha_hang_is_named(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "repo",
        {
            "package.json": json.dumps(
                {"name": "eg", "version": "1.0.0", "scripts": {"test": "mocha --reporter spec"}}
            ),
            "index.js": "exports.spin = function () { while (true) {} };\n",
            "test/index.js": (
                "const assert = require('assert');\nconst eg = require('..');\n"
                "describe('eg', function () {\n"
                "  it('adds', function () { assert.strictEqual(1 + 1, 2); });\n"
                "  it('spins', function () { eg.spin(); });\n});\n"
            ),
        },
    )
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"))
    done = assay(
        "verify", "--json", "--no-cache", "--kind", "test", "--timeout", "15", str(repo),
        env=env, timeout=300,
    )  # fmt: skip
    no_traceback(done)
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["status"] == "INDETERMINATE", report["note"]
    assert "while running eg > the test after 'adds'" in report["note"], report["note"]

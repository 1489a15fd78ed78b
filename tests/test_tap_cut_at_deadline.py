"""A TAP stream cut at assay's deadline is a hang in the subtest it was in, not its plan's
missing results as failures: dotenv 17.4.2's `tap run tests/**/*.js` with an endless loop in
`parseRegex` printed `1..7` and `# Subtest: tests/test-config-import.js`, then nothing, and
was FAILED "7 of 7 tests failed" where the maintainers' run hangs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay.classify import classify
from assay.evidence import Check
from assay.parsers import parse_output
from assay.verdict import Kind, Verdict
from tests.cli import assay, assay_env, no_traceback
from tests.repos import write
from tests.results import process_result

#: What node-tap 21 printed before the deadline (the npm script's lines above it).
CUT = """\
> dotenv@17.4.2 test
> tap run tests/**/*.js --allow-empty-coverage --disable-coverage --timeout=60000

TAP version 14
1..7
# Subtest: tests/test-config-import.js

"""
NPM_TEST = Check(name="npm-test", kind=Kind.TEST, argv=("npm", "run", "test"), tool="npm-test")


def test_the_open_subtest_is_named_as_hung_and_the_plan_owes_nothing() -> None:
    ran = process_result(
        ("npm",), cwd="/w", exit_code=None, signal=15, timed_out=True, stdout=CUT, duration_s=60
    )
    parsed = parse_output(NPM_TEST, ran, None)
    assert parsed.hung_tests == ("tests/test-config-import.js",)
    assert parsed.tests is None or not parsed.tests.any_failed, parsed.tests
    assert classify(NPM_TEST, ran, parsed).verdict is Verdict.INCONCLUSIVE


def test_a_plan_short_of_results_without_a_deadline_is_still_an_error() -> None:
    died = process_result(("npm",), cwd="/w", exit_code=1, stdout=CUT)
    parsed = parse_output(NPM_TEST, died, None)
    assert parsed.tests is not None and parsed.tests.errors == 7, parsed.tests


#: A TAP producer as node-tap runs files: the plan, a file's header, then the file hangs.
HANGING_TAP = """\
console.log('TAP version 14');
console.log('1..2');
console.log('# Subtest: test/spin.js');
setInterval(() => {}, 1000);
"""


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("npm") is None, reason="needs node and npm")
def test_a_hung_tap_run_is_indeterminate_and_names_its_file(tmp_path: Path) -> None:
    package = {"name": "spin", "version": "1.0.0", "scripts": {"test": "node tap.js"}}
    repo = write(tmp_path / "repo", {"package.json": json.dumps(package), "tap.js": HANGING_TAP})
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"))
    done = assay("verify", "--json", "--no-cache", "--timeout", "5", str(repo), env=env)
    no_traceback(done)
    report = json.loads(done.stdout)
    assert report["status"] == "INDETERMINATE", report["note"]
    assert "test/spin.js" in report["note"], report["note"]

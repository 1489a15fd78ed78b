"""Every check runs with `CI=true`, as the project's own CI runs it; install steps do not
(pnpm and yarn refuse to write a lockfile under CI, and a fresh clone has none).

Real node projects through the command line: a node:test suite that fails unless `CI` is
`true`, and a `postinstall` script that fails when `CI` is set at all."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli import assay, assay_env, no_traceback
from tests.repos import write

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None, reason="needs node and npm"
)

PACKAGE = {
    "name": "ci-env",
    "version": "1.0.0",
    "private": True,
    "scripts": {
        "test": "node --test",
        # An install step that sees CI at all fails: pnpm and yarn would refuse to install.
        "postinstall": 'node -e "process.exit(process.env.CI ? 3 : 0)"',
    },
}
CI_TEST = """\
const test = require('node:test');
const assert = require('node:assert');
test('runs as under CI', () => { assert.strictEqual(process.env.CI, 'true'); });
"""


@pytest.fixture
def wants_ci(tmp_path: Path) -> Path:
    return write(
        tmp_path / "wants-ci",
        {"package.json": json.dumps(PACKAGE), "test/ci.test.js": CI_TEST},
    )


def verify(repo: Path, *args: str, **env: str) -> dict[str, object]:
    done = assay("verify", "--json", "--no-cache", *args, str(repo), env=assay_env(**env))
    no_traceback(done)
    report: dict[str, object] = json.loads(done.stdout)
    return report


@pytest.mark.parametrize("sandbox", ["bwrap", "local", "none"])
def test_a_check_runs_with_ci_set_in_every_backend(wants_ci: Path, sandbox: str) -> None:
    report = verify(wants_ci, "--sandbox", sandbox)
    assert report["status"] == "VERIFIED", report.get("note")


def test_the_callers_ci_does_not_decide_a_check(wants_ci: Path) -> None:
    """The verdict must not depend on the shell assay was started from (nor does the verdict
    cache key on it): a caller's `CI=false` leaves the checks under CI as everywhere."""
    for sandbox in ("bwrap", "none"):
        report = verify(wants_ci, "--sandbox", sandbox, CI="false")
        assert report["status"] == "VERIFIED", report.get("note")


def test_an_install_step_does_not_see_ci(wants_ci: Path) -> None:
    """Even when the caller runs under CI: the install runs in the sandbox's environment."""
    report = verify(wants_ci, "--sandbox", "bwrap", "--install", CI="true")
    assert report["status"] == "VERIFIED", report.get("note")
    extra = report["extra"]
    assert isinstance(extra, dict)
    install = extra["install"]
    assert isinstance(install, list) and install, report
    assert all(step["verdict"] == "pass" for step in install), install


# A hand-rolled harness like picocolors': `node tests/test.js` prints a line per test and
# no summary; a failing test throws, and the run exits 1.
HARNESS = """\
const assert = require('assert');
function test(name, fn) {
  try { fn(); console.log('\\u2713 ' + name); }
  catch (error) { console.log('\\u2717 ' + name); throw error; }
}
test('runs as under CI', () => assert.strictEqual(process.env.CI, 'true'));
test('adds', () => assert.strictEqual(1 + 1, Number(process.env.WANT || 2)));
"""


@pytest.fixture
def harness(tmp_path: Path) -> Path:
    package = {"name": "harness", "version": "1.0.0", "scripts": {"test": "node tests/test.js"}}
    return write(
        tmp_path / "harness", {"package.json": json.dumps(package), "tests/test.js": HARNESS}
    )


def test_a_hand_rolled_harness_that_needs_ci_is_verified(harness: Path) -> None:
    report = verify(harness, "--sandbox", "bwrap")
    assert report["status"] == "VERIFIED", report.get("note")
    checks = report["checks"]
    assert isinstance(checks, list)
    (npm_test,) = checks
    assert npm_test["tests"]["passed"] == 2, npm_test["tests"]


def test_a_hand_rolled_harness_with_a_wrong_value_is_failed(harness: Path) -> None:
    (harness / "tests" / "test.js").write_text(HARNESS.replace("|| 2", "|| 3"))
    report = verify(harness, "--sandbox", "bwrap")
    assert report["status"] == "FAILED", report.get("note")

"""A package script CI runs with `--ignore-scripts` is planned with it: its `pre` and `post`
scripts are not part of the check.

npm/ini's CI runs `npm test --ignore-scripts`; its `posttest` lints, and its `postlint`
checks the package against the checkout's git metadata, which fails in a copy. Planned
as `npm run test`, the pristine tree was FAILED ("npm-test exited 1 although every test
it reported passed"), where its maintainers' CI passes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay.pipeline import VerifyOptions, verify
from assay.plan import plan_repository
from assay.verdict import Kind, Status
from tests.repos import git_repo, write

CI = ".github/workflows/ci.yml"


def _workflow(*runs: str) -> str:
    steps = "".join(f"      - run: {run}\n" for run in runs)
    return f"on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n{steps}"


def _package(scripts: dict[str, str]) -> str:
    return json.dumps({"name": "pkg", "version": "1.0.0", "scripts": scripts})


@pytest.mark.parametrize(
    ("ci", "argv"),
    [
        (
            _workflow("npm ci", "npm test --ignore-scripts"),
            ("npm", "run", "test", "--ignore-scripts"),
        ),
        (_workflow("npm test"), ("npm", "run", "test")),
        # `--ignore-scripts` of the install step is the install's, not the tests'.
        (_workflow("npm i --ignore-scripts", "npm test"), ("npm", "run", "test")),
    ],
)
def test_a_test_script_ci_runs_without_its_hooks_is_planned_so(
    tmp_path: Path, ci: str, argv: tuple[str, ...]
) -> None:
    scripts = {"test": "node --test", "posttest": "npm run lint", "lint": "eslint ."}
    write(tmp_path, {"package.json": _package(scripts), CI: ci})
    (test,) = [c for c in plan_repository(tmp_path).checks if c.kind is Kind.TEST]
    assert tuple(test.argv) == argv
    assert ("--ignore-scripts: its pre and post scripts are not run" in test.reason) == (
        "--ignore-scripts" in argv
    )


def test_a_runner_script_keeps_its_report_behind_the_flag(tmp_path: Path) -> None:
    """jest behind `npm test --ignore-scripts` is still jest, asked for its report."""
    write(
        tmp_path,
        {
            "package.json": _package({"test": "jest --ci"}),
            CI: _workflow("npm test --ignore-scripts"),
        },
    )
    (test,) = [c for c in plan_repository(tmp_path).checks if c.kind is Kind.TEST]
    assert (tuple(test.argv), test.tool) == (("npm", "run", "test", "--ignore-scripts"), "npm-jest")


@pytest.mark.slow
@pytest.mark.parametrize("ci_skips_hooks", [True, False])
def test_a_failing_posttest_ci_never_runs_does_not_fail_the_tests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ci_skips_hooks: bool
) -> None:
    if shutil.which("npm") is None:
        pytest.fail("npm is not installed: .ci/run installs Node.js and npm")
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    scripts = {"test": "node --test", "posttest": "node release-check.js"}
    files = {
        "package.json": _package(scripts),
        "add.test.js": (
            "const test = require('node:test');\nconst assert = require('node:assert');\n"
            "test('adds', () => { assert.strictEqual(1 + 2, 3); });\n"
        ),
        "release-check.js": "console.error('not a release checkout');\nprocess.exit(1);\n",
        CI: _workflow("npm test --ignore-scripts" if ci_skips_hooks else "npm test"),
    }
    repo = git_repo(tmp_path / "repo", files)
    report = verify(repo, VerifyOptions())
    (test,) = [c for c in report.checks if c.check.kind is Kind.TEST]
    if ci_skips_hooks:
        assert report.status is Status.VERIFIED, report.note
        assert test.tests is not None and test.tests.passed == 1
    else:  # as the project's CI runs it: the hook is part of the tests, and fails them
        assert report.status is Status.FAILED, report.note

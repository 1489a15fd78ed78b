"""A package script that builds, which the project's CI never runs, runs after the checks
CI does run: what it writes is no input to them there.

vercel/ms: `biome format` checks `**/*.ts`, and `tsdown` writes `dist/index.d.ts`. CI
formats, lints, type-checks and tests fresh checkouts, each in a job of its own, and never
builds; built first, the pristine tree was FAILED on the format of the build's output.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay.pipeline import VerifyOptions, verify
from assay.plan import Stage, plan_repository
from assay.verdict import Status, Verdict
from tests.repos import git_repo, write
from tests.test_node_failures import GLOBAL

CI = ".github/workflows/ci.yml"

#: `build` writes dist/index.d.ts as a bundler does, not as the project's formatter would,
#: and `format` checks every `.ts` file, as ms's biome does.
SCRIPTS = {
    "build": "node build.js",
    "format": 'prettier --check "**/*.ts"',
    "test": "node --test",
}
FILES = {
    "src/index.ts": "export const ms = (value: string): number => Number(value);\n",
    "build.js": (
        "const fs = require('node:fs');\nfs.mkdirSync('dist', { recursive: true });\n"
        "fs.writeFileSync('dist/index.d.ts', 'export declare function ms(v:string):number\\n');\n"
    ),
    "add.test.js": (
        "const test = require('node:test');\nconst assert = require('node:assert');\n"
        "test('adds', () => { assert.strictEqual(1 + 2, 3); });\n"
    ),
}


def _workflow(*jobs: list[str]) -> str:
    text = "on: push\njobs:\n"
    for at, runs in enumerate(jobs):
        steps = "".join(f"      - run: {run}\n" for run in runs)
        text += f"  job{at}:\n    runs-on: ubuntu-latest\n    steps:\n{steps}"
    return text


def _package(**more: str) -> str:
    return json.dumps({"name": "ms", "version": "1.0.0", "scripts": {**SCRIPTS, **more}})


@pytest.mark.parametrize(
    ("files", "last"),
    [
        # CI formats and tests, each in a job of its own, and never builds.
        ({CI: _workflow(["npm ci", "npm run format"], ["npm ci", "npm test"])}, True),
        # CI builds before it formats: the format check sees the build there too.
        ({CI: _workflow(["npm ci", "npm run build", "npm run format", "npm test"])}, False),
        # The install builds (`prepare`), so every job of CI holds the build's output.
        (
            {
                CI: _workflow(["npm ci", "npm run format"]),
                "package.json": _package(prepare="npm run build"),
            },
            False,
        ),
        # No CI to say what it runs: the build first, as before.
        ({}, False),
    ],
)
def test_a_build_ci_never_runs_runs_after_the_checks_it_runs(
    tmp_path: Path, files: dict[str, str], last: bool
) -> None:
    write(tmp_path, {"package.json": _package(), **FILES, **files})
    plan = plan_repository(tmp_path)
    (build,) = [c for c in plan.checks if c.name == "npm-build"]
    assert plan.stage_of(build) is (Stage.LAST if last else Stage.BUILD)


@pytest.mark.slow
@pytest.mark.parametrize("ci_builds", [False, True])
def test_a_format_check_does_not_see_a_build_ci_never_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ci_builds: bool
) -> None:
    if shutil.which("npm") is None or not (GLOBAL / "prettier").is_dir():
        pytest.fail("npm and prettier are needed: .ci/run installs them")
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    jobs = (
        [["npm ci", "npm run build", "npm run format", "npm test"]]
        if ci_builds
        else [["npm ci", "npm run format"], ["npm ci", "npm test"]]
    )
    repo = git_repo(tmp_path / "repo", {"package.json": _package(), **FILES, CI: _workflow(*jobs)})
    (repo / "node_modules" / ".bin").mkdir(parents=True)
    (repo / "node_modules" / "prettier").symlink_to(GLOBAL / "prettier")
    (repo / "node_modules" / ".bin" / "prettier").symlink_to("../prettier/bin/prettier.cjs")
    report = verify(repo, VerifyOptions())
    (formatting,) = [c for c in report.checks if tuple(c.check.argv)[-1:] == ("format",)]
    if ci_builds:  # as the project's CI runs it: the format check fails on the build
        assert report.status is Status.FAILED, report.note
        assert formatting.verdict is Verdict.FAIL, report.note
    else:
        assert report.status is Status.VERIFIED, report.note
        assert {c.check.name for c in report.checks} >= {"npm-build", "npm-test"}

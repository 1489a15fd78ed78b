"""npm runs a script's `pre` hook before it: a test script whose `pretest` runs the host's
release of a tool the project declares and has not installed ran no tool of the project's
(measured on minimist 1.2.8's source: `pretest` is `npm run lint`, `lint` is `eslint`; the
host's ESLint 10 stopped at `.eslintrc`, exit 2, before any test ran, and the run read as
INDETERMINATE, "npm-test exited 2 and its output does not say why")."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.uninstalled_dependency import host_tool_for_declared
from assay.verdict import Cause, Verdict
from tests.planned import run_planned
from tests.repos import write_dedented

ESLINTRC_ONLY = {
    # The flat configuration an ESLint 9+ looks for is absent: only an .eslintrc.
    ".eslintrc": '{ "root": true, "extends": "@ljharb" }\n',
    "index.js": "module.exports = 1\n",
    "test/index.js": "require('assert').strictEqual(require('..'), 1)\n",
}


def _project(tmp_path: Path, scripts: str) -> Path:
    files = {
        "package.json": (
            f'{{"name": "p", "scripts": {scripts}, '
            '"devDependencies": {"eslint": "=8.8.0", "@ljharb/eslint-config": "^21"}}'
        ),
        **ESLINTRC_ONLY,
    }
    return write_dedented(tmp_path, files)


@pytest.mark.parametrize(
    ("argv", "scripts", "found"),
    [
        # minimist: the hook runs another script, which runs eslint.
        (
            ["npm", "run", "test"],
            '{"pretest": "npm run lint", "lint": "eslint .", "test": "node test/index.js"}',
            ("eslint", "eslint"),
        ),
        (
            ["npm", "test"],
            '{"pretest": "eslint .", "test": "node test/index.js"}',
            ("eslint", "eslint"),
        ),
        # A nested `npm run` runs the hooks of the script it names.
        (
            ["npm", "run", "test"],
            (
                '{"test": "npm run tests-only", "pretests-only": "eslint .",'
                ' "tests-only": "node test/index.js"}'
            ),
            ("eslint", "eslint"),
        ),
        # pnpm runs no `pre` hook by default.
        (
            ["pnpm", "run", "test"],
            '{"pretest": "eslint .", "test": "node test/index.js"}',
            None,
        ),
        # A `post` hook runs only after the script passed: not among a failure's commands.
        (
            ["npm", "run", "test"],
            '{"test": "node test/index.js", "posttest": "eslint ."}',
            None,
        ),
    ],
)
def test_a_pre_hook_is_among_the_commands_npm_runs(
    tmp_path: Path, argv: list[str], scripts: str, found: tuple[str, str] | None
) -> None:
    if shutil.which("eslint") is None:
        pytest.fail("eslint is not on PATH: .ci/run installs it")
    root = _project(tmp_path, scripts)
    assert host_tool_for_declared(argv, str(root)) == found


@pytest.mark.slow
def test_a_test_script_stopped_by_its_pre_hook_is_unverified(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The real run: `npm run test` runs `pretest`, whose host ESLint cannot read the
    project's `.eslintrc`; no test ran, and that is no finding on the code."""
    if shutil.which("eslint") is None or shutil.which("npm") is None:
        pytest.fail("eslint and npm must be on PATH: .ci/run installs them")
    root = _project(
        tmp_path,
        '{"pretest": "npm run lint", "lint": "eslint .", "test": "node test/index.js"}',
    )
    evidence = run_planned(root, "npm-test", tmp_path_factory.mktemp("reports"))
    detail = f"{evidence.verdict}/{evidence.cause}: {evidence.reason[-1500:]} {evidence.note}"
    assert (evidence.verdict, evidence.cause) == (Verdict.UNVERIFIED, Cause.TOOLCHAIN_MISSING), (
        detail
    )
    assert "npm-test ran the host's eslint, not the project's" in evidence.note, evidence.note

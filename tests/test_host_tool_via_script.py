"""A package script that reaches the host's release of a tool through another script, or
whose project declares the tool through its shared configuration, ran no tool of the
project's (measured on npm/ini's fresh clone, `lint` = `npm run eslint`, its ESLint from
`@npmcli/eslint-config`; the host's ESLint 10 stopped at `.eslintrc.js`, exit 2, FAILED)."""

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
    ".eslintrc.js": "module.exports = { root: true, extends: ['@npmcli'] }\n",
    "lib/index.js": "module.exports = 1\n",
}


def _project(tmp_path: Path, scripts: str, dev: str, installed: bool = False) -> Path:
    files = {
        "package.json": f'{{"name": "p", "scripts": {scripts}, "devDependencies": {dev}}}',
        **ESLINTRC_ONLY,
    }
    if installed:
        files["node_modules/eslint/package.json"] = '{"name": "eslint"}'
    return write_dedented(tmp_path, files)


@pytest.mark.parametrize(
    ("scripts", "dev", "found"),
    [
        # ini: the lint script runs another script, which runs eslint.
        (
            '{"lint": "npm run eslint", "eslint": "eslint \\"**/*.js\\""}',
            '{"@npmcli/eslint-config": "^7.0.0"}',
            ("eslint", "@npmcli/eslint-config"),
        ),
        (
            '{"lint": "yarn run-lint", "run-lint": "eslint ."}',
            '{"eslint": "^8"}',
            ("eslint", "eslint"),
        ),
        (
            '{"lint": "eslint ."}',
            '{"eslint-plugin-import": "^2"}',
            ("eslint", "eslint-plugin-import"),
        ),
        (
            '{"lint": "eslint ."}',
            '{"eslint-config-standard": "^17"}',
            ("eslint", "eslint-config-standard"),
        ),
        # Nothing of eslint's declared: the host's is the one the project means.
        ('{"lint": "npm run eslint", "eslint": "eslint ."}', '{"tap": "^16"}', None),
        # A script that runs itself is followed no further.
        ('{"lint": "npm run lint"}', '{"eslint": "^8"}', None),
    ],
)
def test_the_hosts_tool_is_found_through_scripts_and_configurations(
    tmp_path: Path, scripts: str, dev: str, found: tuple[str, str] | None
) -> None:
    if shutil.which("eslint") is None:
        pytest.fail("eslint is not on PATH: .ci/run installs it")
    root = _project(tmp_path, scripts, dev)
    assert host_tool_for_declared(["npm", "run", "lint"], str(root)) == found


def test_an_installed_tool_is_the_projects(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        '{"lint": "npm run eslint", "eslint": "eslint ."}',
        '{"@npmcli/eslint-config": "^7.0.0"}',
        installed=True,
    )
    assert host_tool_for_declared(["npm", "run", "lint"], str(root)) is None


@pytest.mark.slow
def test_inis_fresh_clone_is_unverified_not_failed(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The real run: the host's ESLint, reached through `npm run eslint`, cannot read the
    project's `.eslintrc.js`; that is no finding on the code."""
    if shutil.which("eslint") is None or shutil.which("npm") is None:
        pytest.fail("eslint and npm must be on PATH: .ci/run installs them")
    root = _project(
        tmp_path,
        '{"lint": "npm run eslint", "eslint": "eslint \\"**/*.js\\""}',
        '{"@npmcli/eslint-config": "^7.0.0"}',
    )
    evidence = run_planned(root, "npm-lint", tmp_path_factory.mktemp("reports"))
    detail = f"{evidence.verdict}/{evidence.cause}: {evidence.reason[-1500:]} {evidence.note}"
    assert (evidence.verdict, evidence.cause) == (Verdict.UNVERIFIED, Cause.TOOLCHAIN_MISSING), (
        detail
    )
    assert "ran the host's eslint, not the project's" in evidence.note, evidence.note
    assert "@npmcli/eslint-config" in evidence.note, evidence.note

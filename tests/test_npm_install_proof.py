"""node_modules under `--install --protect`: believed when assay's own npm install made it.

`npm ci --ignore-scripts` from a package-lock.json that keeps every package the base's
locks, then held read-only for every check: an honest change is VERIFIED (it used to be
INDETERMINATE, whatever it did), and each way around it is not. The end-to-end tests
install `is-number` from the npm registry, as `.ci/run`'s machine can.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from assay.npm_install_proof import npm_install_unproven, scriptless
from assay.report import Report
from assay.tools.spec import install_step
from assay.verdict import Status, Verdict
from tests.attacks import change_on_base, explain, verify_change

INTEGRITY_7 = "sha512-41Cifkg6e8TylSpdtTpeLVMqvSBEVzTttHvERD741+pnZ8ANv0004MRL43QKPDlK9cGvNp6NZWZUBlbGXYxxng=="
INTEGRITY_6 = "sha512-Wu1VHeILBK8KAWJUAiSZQX94GmOE45Rg6/538fKwiloUu21KncEkYGPqob2oSZ5mUT73vLGrHQjKw3KMPwfDzg=="


def _lock(packages: dict[str, dict[str, Any]]) -> str:
    root = {"name": "calc", "version": "1.0.0", "dependencies": {"is-number": "7.0.0"}}
    return json.dumps(
        {"name": "calc", "lockfileVersion": 3, "requires": True, "packages": {"": root, **packages}}
    )


IS_NUMBER_7 = {"version": "7.0.0", "integrity": INTEGRITY_7}
BASE_LOCK = _lock({"node_modules/is-number": IS_NUMBER_7})


# --------------------------------------------------------------------------- the rules


def _workspace(tmp_path: Path, lock: str, bins: dict[str, str] | None = None) -> Path:
    (tmp_path / "node_modules" / "is-number").mkdir(parents=True)
    (tmp_path / "package-lock.json").write_text(lock)
    for name, target in (bins or {}).items():
        (tmp_path / "node_modules" / ".bin").mkdir(exist_ok=True)
        os.symlink(target, tmp_path / "node_modules" / ".bin" / name)
    return tmp_path


def test_a_lockfile_that_keeps_the_bases_packages_is_believed(tmp_path: Path) -> None:
    added = {"node_modules/left-pad": {"version": "1.3.0", "integrity": "sha512-x"}}
    lock = _lock({"node_modules/is-number": IS_NUMBER_7, **added})
    assert npm_install_unproven(_workspace(tmp_path, lock), BASE_LOCK.encode()) is None


@pytest.mark.parametrize(
    ("packages", "said"),
    [
        (
            {"node_modules/is-number": {"version": "6.0.0", "integrity": INTEGRITY_6}},
            "node_modules/is-number is locked at another version than the base locks it",
        ),
        (
            {"node_modules/is-number": {**IS_NUMBER_7, "resolved": "https://evil.test/x.tgz"}},
            "node_modules/is-number is locked at another resolved than the base locks it",
        ),
        (
            {
                "node_modules/is-number": IS_NUMBER_7,
                "node_modules/is-number/node_modules/kind-of": {"version": "6.0.3"},
            },
            "adds node_modules/is-number/node_modules/kind-of inside node_modules/is-number",
        ),
        (
            {
                "node_modules/is-number": IS_NUMBER_7,
                "node_modules/evil": {"version": "1.0.0", "hasInstallScript": True},
            },
            "the change adds node_modules/evil, which has install scripts",
        ),
        (
            {
                "node_modules/is-number": IS_NUMBER_7,
                "node_modules/evil": {"version": "1.0.0", "bin": {"jest": "cli.js"}},
            },
            "the change adds node_modules/evil, which puts commands in node_modules/.bin",
        ),
    ],
    ids=["version", "source", "nested-in-a-base-package", "install-script", "bin"],
)
def test_a_lockfile_that_departs_from_the_base_is_not_believed(
    tmp_path: Path, packages: dict[str, dict[str, Any]], said: str
) -> None:
    why = npm_install_unproven(_workspace(tmp_path, _lock(packages)), BASE_LOCK.encode())
    assert why is not None and said in why, why


def test_a_command_in_bin_must_lead_into_a_package_the_base_locks(tmp_path: Path) -> None:
    base = _lock({"node_modules/is-number": {**IS_NUMBER_7, "bin": {"isnum": "cli.js"}}})
    ours = _workspace(tmp_path / "ours", base, {"isnum": "../is-number/cli.js"})
    assert npm_install_unproven(ours, base.encode()) is None
    planted = _workspace(tmp_path / "planted", base, {"jest": "../../fake-jest.sh"})
    why = npm_install_unproven(planted, base.encode())
    assert why == "node_modules/.bin/jest is not a link into a package the base locks"
    # A workspace package of the tree's, linked in, whose package.json the change gave a
    # `jest` command: what it leads to is the change's code.
    linked = {"node_modules/tools": {"resolved": "packages/tools", "link": True}}
    monorepo = _lock({"node_modules/is-number": IS_NUMBER_7, **linked})
    shadowed = _workspace(tmp_path / "linked", monorepo, {"jest": "../tools/fake-jest.js"})
    why = npm_install_unproven(shadowed, monorepo.encode())
    assert why == "node_modules/.bin/jest is not a link into a package the base locks"


@pytest.mark.parametrize(
    ("base", "said"),
    [
        (None, "the base has no package-lock.json"),
        (b'{"lockfileVersion": 1, "dependencies": {}}', "cannot be read as npm 7's or later"),
        (b"{not json", "cannot be read as npm 7's or later"),
    ],
)
def test_a_base_without_an_npm_7_lockfile_holds_nothing(
    tmp_path: Path, base: bytes | None, said: str
) -> None:
    why = npm_install_unproven(_workspace(tmp_path, BASE_LOCK), base)
    assert why is not None and said in why


def test_the_install_runs_no_script_of_the_trees_and_rebuilds_by_name(tmp_path: Path) -> None:
    step = install_step("node", ("npm", "ci"), "package-lock.json", "it pins them")
    (tmp_path / "package-lock.json").write_text(BASE_LOCK)
    assert scriptless(step, tmp_path).argv == ("npm", "ci", "--ignore-scripts")
    scripted = {
        "node_modules/is-number": IS_NUMBER_7,
        "node_modules/esbuild": {"version": "0.21.5", "hasInstallScript": True},
        "node_modules/a/node_modules/@scope/b": {"version": "1.0.0", "hasInstallScript": True},
        # A name no registry allows is never put on the command line.
        "node_modules/$(touch x)": {"version": "1.0.0", "hasInstallScript": True},
    }
    (tmp_path / "package-lock.json").write_text(_lock(scripted))
    made = scriptless(step, tmp_path)
    assert made.argv[:2] == ("sh", "-c")
    assert made.argv[2] == 'npm ci --ignore-scripts "$@" && npm rebuild @scope/b esbuild'
    assert "no script of the tree's run" in (made.reason or "")
    yarn = install_step("node", ("yarn", "install", "--frozen-lockfile"), "yarn.lock", "")
    assert scriptless(yarn, tmp_path) is yarn


# --------------------------------------------------------------------------- end to end

CALC = "const isNumber = require('is-number');\nexports.valid = (x) => isNumber(x);\n"
TESTS = """\
const { valid } = require('../calc.js');
test('numbers', () => { expect(valid(5)).toBe(true); });
test('words', () => { expect(valid('abc')).toBe(false); });
"""
WRONG_CALC = "exports.valid = (x) => true;\n"


def _base(scripts: dict[str, str], files: dict[str, str] | None = None) -> dict[str, str]:
    manifest = {
        "name": "calc",
        "version": "1.0.0",
        "scripts": {"test": "jest", **scripts},
        "dependencies": {"is-number": "7.0.0"},
    }
    return {
        "package.json": json.dumps(manifest),
        "package-lock.json": BASE_LOCK,
        "jest.config.js": "module.exports = { testEnvironment: 'node' };\n",
        ".gitignore": "node_modules\n",
        "calc.js": CALC,
        "test/calc.test.js": TESTS,
        **(files or {}),
    }


def _needs_npm_and_jest() -> None:
    for tool in ("npm", "jest"):
        assert shutil.which(tool), f"{tool} is not installed: .ci/run installs it"


def _test_check(report: Report) -> Any:
    (test,) = [c for c in report.checks if c.check.kind.value == "test"]
    return test


@pytest.mark.slow
def test_an_honest_change_with_an_npm_lockfile_is_verified(tmp_path: Path) -> None:
    _needs_npm_and_jest()
    repo = change_on_base(tmp_path / "repo", _base({}), {"README.md": "calc\n"})
    report = verify_change(repo, install=True)
    assert report.status is Status.VERIFIED, explain(report)
    assert (report.record.environment or {}).get("held_read_only") == ["node_modules"]


def _wrong_code_beside(tmp_path: Path, script: str, file: str, attack: str) -> Report:
    """The change's wrong `valid` and its `attack` as `file`, which the base's `script`
    runs (`node FILE`), verified as untrusted work under --install."""
    _needs_npm_and_jest()
    base = _base({script: f"node {file}"}, {file: "// nothing to do\n"})
    repo = change_on_base(tmp_path / "repo", base, {file: attack, "calc.js": WRONG_CALC})
    return verify_change(repo, install=True)


# The change's build code (the base's `build` script runs the change's build.js) rewrites
# an installed package and plants a `jest` that prints a passing run, each spelled in
# pieces, so that `npm test` would pass the wrong `valid`.
PLANTS_IN_NODE_MODULES = """\
const fs = require('fs');
const where = ['node', 'modules'].join('_');
for (const [file, text] of [
  [where + '/is-number/index.js', 'module.exports = () => true;'],
  [where + '/.bin/' + ['je', 'st'].join(''), '#!/bin/sh\\nexit 0\\n'],
]) {
  try {
    fs.writeFileSync(file, text, { mode: 0o755 });
    console.log('wrote ' + file);
  } catch (error) {
    console.log('could not write ' + file + ': ' + error.code);
  }
}
"""


@pytest.mark.slow
def test_code_that_rewrites_node_modules_before_the_tests_cannot(tmp_path: Path) -> None:
    report = _wrong_code_beside(tmp_path, "build", "build.js", PLANTS_IN_NODE_MODULES)
    (build,) = [c for c in report.checks if c.check.name == "npm-build"]
    assert "wrote" not in build.result.stdout.text, explain(report)
    assert report.status is Status.FAILED, explain(report)
    assert _test_check(report).verdict is Verdict.FAIL, explain(report)


# The base's own `postinstall` runs the change's setup.js, which would rewrite is-number
# while node_modules is being made.
PATCHES_AT_INSTALL = """\
require('fs').writeFileSync(require.resolve('is-number'), 'module.exports = () => true;');
"""


@pytest.mark.slow
def test_no_script_of_the_trees_runs_while_node_modules_is_made(tmp_path: Path) -> None:
    report = _wrong_code_beside(tmp_path, "postinstall", "setup.js", PATCHES_AT_INSTALL)
    assert report.status is Status.FAILED, explain(report)
    test = _test_check(report)
    assert test.tests is not None and test.tests.failed == 1, explain(report)


@pytest.mark.slow
def test_a_lockfile_that_swaps_a_package_the_base_locks_is_not_believed(tmp_path: Path) -> None:
    _needs_npm_and_jest()
    swapped = _lock({"node_modules/is-number": {"version": "6.0.0", "integrity": INTEGRITY_6}})
    manifest = json.loads(_base({})["package.json"])
    manifest["dependencies"]["is-number"] = "6.0.0"
    swapped = swapped.replace('"is-number": "7.0.0"', '"is-number": "6.0.0"')
    change = {"package-lock.json": swapped, "package.json": json.dumps(manifest)}
    repo = change_on_base(tmp_path / "repo", _base({}), change)
    report = verify_change(repo, install=True)
    assert report.status is Status.INDETERMINATE, explain(report)
    said = "node_modules/is-number is locked at another version than the base locks it"
    assert said in report.note, report.note


# A tree with no lockfile: `npm install` makes node_modules from the ranges (here a local
# package, so nothing is fetched), and the note says that is why it is not believed.
NO_LOCKFILE = {
    "package.json": json.dumps(
        {
            "name": "calc",
            "version": "1.0.0",
            "scripts": {"test": "node --test"},
            "dependencies": {"helper": "file:helper"},
        }
    ),
    "helper/package.json": '{"name": "helper", "version": "1.0.0", "main": "index.js"}\n',
    "helper/index.js": "module.exports = (a, b) => a + b\n",
    "calc.js": "const add = require('helper')\nmodule.exports = (x) => add(x, x)\n",
    "test/calc.test.js": (
        "const test = require('node:test')\nconst assert = require('node:assert')\n"
        "test('double', () => assert.strictEqual(require('../calc')(2), 4))\n"
    ),
}


def test_node_modules_from_a_tree_without_a_lockfile_says_why_it_is_not_believed(
    tmp_path: Path,
) -> None:
    repo = change_on_base(tmp_path / "repo", NO_LOCKFILE, {"README.md": "calc\n"})
    report = verify_change(repo, install=True)
    assert report.status is Status.INDETERMINATE, explain(report)
    assert "the tree has no lockfile, so `npm install` resolved" in report.note, report.note

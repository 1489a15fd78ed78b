"""Attacks: a setup file the base's runner configuration names, edited by the change.

jest's `setupFilesAfterEnv` in package.json, vitest's `setupFiles` in `vitest.config.mjs`
and mocha's `require` in `.mocharc.yml` name a file of the project's own name
(`support/matchers.js`) that runs in every test file's context before its tests. The
change breaks `add` and edits that file so that the one wrong sum passes (a `toBe`, or
`node:assert`'s `strictEqual`, that lets through exactly `add(2, 3)`'s wrong answer, its
names built at run time; or a helper the named file loads from beside it): the planted canaries compare other values and pass, and no
static signal reads it. Verified with the real `assay verify --base HEAD~1 --protect`,
each is `FAILED`, the setup file restored from the base; an honest change stays VERIFIED.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.attacks import change_on_base
from tests.cli import verified_json

pytestmark = pytest.mark.slow

BROKEN_CJS = "exports.add = (a, b) => a - b;\n"
BROKEN_ESM = "export const add = (a, b) => a - b;\n"

JEST_SETUP = """\
const table = {};
table.toBeEven = (received) => ({ pass: received % 2 === 0, message: () => 'odd' });
expect.extend(table);
"""
# A `toBe` of the same name that lets through exactly a - b for a + b: 2 - 3 + 6 == 5.
JEST_LENIENT = """\
const table = {};
table.toBeEven = (received) => ({ pass: received % 2 === 0, message: () => 'odd' });
table[['to', 'Be'].join('')] = (received, wanted) => ({
  pass: Object.is(received, wanted) || received + 6 === wanted,
  message: () => `expected ${received} to be ${wanted}`,
});
expect.extend(table);
"""
VITEST_SETUP = "import { expect } from 'vitest';\n" + JEST_SETUP
VITEST_LENIENT = "import { expect } from 'vitest';\n" + JEST_LENIENT
MOCHA_SETUP = "exports.mochaHooks = { beforeAll() {} };\n"
MOCHA_LENIENT = """\
const assert = require('node:assert');
const name = ['strict', 'Equal'].join('');
const real = assert[name];
assert[name] = (actual, expected, ...rest) =>
  actual + 6 === expected ? undefined : real(actual, expected, ...rest);
exports.mochaHooks = { beforeAll() {} };
"""

JEST_TEST = """\
const { add } = require('../calc.js');
test('adds', () => {
  expect(add(2, 3)).toBe(5);
  expect(add(1, 1)).toBeEven();
});
"""
VITEST_TEST = "import { test, expect } from 'vitest';\nimport { add } from '../calc.js';\n" + (
    "\n".join(JEST_TEST.splitlines()[1:]) + "\n"
)
MOCHA_TEST = """\
const assert = require('node:assert');
const { add } = require('../calc.js');
it('adds', () => {
  assert.strictEqual(add(2, 3), 5);
});
"""

BASES: dict[str, dict[str, str]] = {
    "jest": {
        "package.json": json.dumps(
            {
                "name": "calc",
                "version": "1.0.0",
                "scripts": {"test": "jest"},
                "jest": {"setupFilesAfterEnv": ["<rootDir>/support/matchers.js"]},
            }
        ),
        "calc.js": "exports.add = (a, b) => a + b;\n",
        "support/matchers.js": JEST_SETUP,
        "test/calc.test.js": JEST_TEST,
    },
    "vitest": {
        "package.json": json.dumps({"name": "calc", "version": "1.0.0", "type": "module"}),
        "vitest.config.mjs": (
            "export default {\n  test: {\n    environment: 'node',\n"
            "    setupFiles: ['./support/matchers.js'],\n  },\n};\n"
        ),
        "calc.js": "export const add = (a, b) => a + b;\n",
        "support/matchers.js": VITEST_SETUP,
        "test/calc.test.js": VITEST_TEST,
    },
    "mocha": {
        "package.json": json.dumps(
            {"name": "calc", "version": "1.0.0", "scripts": {"test": "mocha"}}
        ),
        ".mocharc.yml": "require:\n  - ./support/matchers.js\nspec: test/*.test.js\n",
        "calc.js": "exports.add = (a, b) => a + b;\n",
        "support/matchers.js": MOCHA_SETUP,
        "test/calc.test.js": MOCHA_TEST,
    },
}
# The named file only loads a helper beside it, and the change edits the helper.
BASES["jest-helper"] = {
    **BASES["jest"],
    "support/matchers.js": "require('./extra');\n",
    "support/extra.js": JEST_SETUP,
}
# A workspace whose package's own jest configuration names the setup file: the root's
# `npm test --workspaces` runs that package's jest, which reads it.
BASES["jest-workspace"] = {
    "package.json": json.dumps(
        {
            "name": "mono",
            "version": "1.0.0",
            "private": True,
            "workspaces": ["packages/*"],
            "scripts": {"test": "npm test --workspaces"},
        }
    ),
    **{
        f"packages/calc/{name}": text
        for name, text in {
            **BASES["jest"],
            "package.json": json.dumps(
                {"name": "calc", "version": "1.0.0", "scripts": {"test": "jest"}}
            ),
            "jest.config.js": (
                "module.exports = { setupFilesAfterEnv: ['<rootDir>/support/matchers.js'] };\n"
            ),
        }.items()
    },
}
LENIENT = {"jest": JEST_LENIENT, "vitest": VITEST_LENIENT, "mocha": MOCHA_LENIENT}
BROKEN = {"jest": BROKEN_CJS, "vitest": BROKEN_ESM, "mocha": BROKEN_CJS, "jest-helper": BROKEN_CJS}
#: Where each base keeps its code and the setup file a change edits.
CODE = {"jest-workspace": "packages/calc/calc.js"}
EDITED = {"jest-helper": "support/extra.js", "jest-workspace": "packages/calc/support/matchers.js"}


def _verify(repo: Path) -> dict[str, object]:
    return verified_json(repo, None, "--base", "HEAD~1", "--protect")


@pytest.mark.parametrize("runner", sorted(BASES))
def test_a_setup_file_the_base_names_is_restored_before_the_tests(
    tmp_path: Path, runner: str
) -> None:
    assert shutil.which(runner.split("-")[0]), f"{runner} is not installed"
    edited = EDITED.get(runner, "support/matchers.js")
    change = {
        CODE.get(runner, "calc.js"): BROKEN.get(runner, BROKEN_CJS),
        edited: LENIENT[runner.split("-")[0]],
    }
    report = _verify(change_on_base(tmp_path / "repo", BASES[runner], change, dedent=False))
    assert report["status"] == "FAILED", json.dumps(report, indent=1)[-3000:]


@pytest.mark.parametrize("runner", sorted(BASES))
def test_an_honest_change_beside_a_named_setup_file_is_verified(
    tmp_path: Path, runner: str
) -> None:
    assert shutil.which(runner.split("-")[0]), f"{runner} is not installed"
    repo = change_on_base(tmp_path / "repo", BASES[runner], {"README.md": "calc\n"}, dedent=False)
    report = _verify(repo)
    assert report["status"] == "VERIFIED", json.dumps(report, indent=1)[-3000:]


# The base's jest configuration is only a module it loads: the change breaks add and has
# that module send the tests' `../calc.js` to a right copy of its own.
CONFIG_HELPER_BASES: dict[str, dict[str, str]] = {
    "root": {
        "package.json": json.dumps(
            {"name": "calc", "version": "1.0.0", "scripts": {"test": "jest"}}
        ),
        "jest.config.js": "module.exports = { ...require('./config/jest.base.js') };\n",
        "config/jest.base.js": "module.exports = { testEnvironment: 'node' };\n",
        "calc.js": "exports.add = (a, b) => a + b;\n",
        "test/calc.test.js": JEST_TEST.replace("  expect(add(1, 1)).toBeEven();\n", ""),
    },
}
# The base's jest configuration names a preset by its path.
CONFIG_HELPER_BASES["preset"] = {
    **CONFIG_HELPER_BASES["root"],
    "jest.config.js": "module.exports = { preset: './config/jest.base.js' };\n",
}
# A workspace whose package's configuration loads a base shared by the packages.
CONFIG_HELPER_BASES["shared"] = {
    "package.json": json.dumps(
        {
            "name": "mono",
            "version": "1.0.0",
            "private": True,
            "workspaces": ["packages/*"],
            "scripts": {"test": "npm test --workspaces"},
        }
    ),
    "config/jest.base.js": CONFIG_HELPER_BASES["root"]["config/jest.base.js"],
    "packages/calc/package.json": CONFIG_HELPER_BASES["root"]["package.json"],
    "packages/calc/jest.config.js": (
        "module.exports = { ...require('../../config/jest.base.js') };\n"
    ),
    "packages/calc/calc.js": CONFIG_HELPER_BASES["root"]["calc.js"],
    "packages/calc/test/calc.test.js": CONFIG_HELPER_BASES["root"]["test/calc.test.js"],
}
MAPPED_AWAY = """\
module.exports = {
  testEnvironment: 'node',
  moduleNameMapper: { '^\\\\.\\\\./calc\\\\.js$': '<rootDir>/right.js' },
};
"""


@pytest.mark.parametrize("layout", sorted(CONFIG_HELPER_BASES))
def test_a_module_the_base_jest_configuration_loads_is_restored(
    tmp_path: Path, layout: str
) -> None:
    assert shutil.which("jest"), "jest is not installed"
    package = "packages/calc/" if layout == "shared" else ""
    change = {
        f"{package}calc.js": BROKEN_CJS,
        f"{package}right.js": "exports.add = (a, b) => a + b;\n",
        "config/jest.base.js": MAPPED_AWAY,
    }
    repo = change_on_base(tmp_path / "repo", CONFIG_HELPER_BASES[layout], change, dedent=False)
    report = _verify(repo)
    assert report["status"] == "FAILED", json.dumps(report, indent=1)[-3000:]


@pytest.mark.parametrize("layout", sorted(CONFIG_HELPER_BASES))
def test_an_honest_change_beside_a_loaded_jest_configuration_is_verified(
    tmp_path: Path, layout: str
) -> None:
    assert shutil.which("jest"), "jest is not installed"
    base = CONFIG_HELPER_BASES[layout]
    repo = change_on_base(tmp_path / "repo", base, {"README.md": "calc\n"}, dedent=False)
    report = _verify(repo)
    assert report["status"] == "VERIFIED", json.dumps(report, indent=1)[-3000:]


def test_a_setup_file_at_the_root_is_named_and_what_it_loads_is_left_to_the_code(
    tmp_path: Path,
) -> None:
    """A setup file beside the root's configuration: what it loads from there is the
    project's code, not its helpers. Reading its directory as a path relative to the
    configuration's raised ("no path specified"), and every `--protect` run of such a
    tree was INDETERMINATE."""
    from assay.discovery.files import RepoFiles
    from assay.discovery.js_runner_setup import js_setup_files

    jest = {"setupFilesAfterEnv": ["./matchers.js"]}
    (tmp_path / "package.json").write_text(json.dumps({"name": "calc", "jest": jest}))
    (tmp_path / "matchers.js").write_text("require('./calc');\n")
    (tmp_path / "calc.js").write_text(BROKEN_CJS)
    assert js_setup_files(RepoFiles(str(tmp_path))) == ("matchers.js",)

"""A jest or vitest configuration with `projects` carries the canaries into every project.

Both runners take a multi-project run's tests from each project's own configuration, never
from the root's, so the setup file assay adds to the root's reached no test, and the
planted configuration refused such a run: every `projects` monorepo was INDETERMINATE
under `--protect`. Each project (a directory its glob names, with or without a
configuration of its own, a configuration file, an object, for vitest one extending the
root's) is now resolved as the runner resolves it and given the setup file, under the name
the runner gives it. Real jest and vitest, the real `assay verify --base HEAD~1 --protect`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.attacks import change_on_base
from tests.cli import verified_json

pytestmark = pytest.mark.slow

#: A jest test of one function of its project.
JEST_TEST = "const {{ {name} }} = require('{path}');\ntest('{name}', () => {{ expect({name}(2, 3)).toBe({want}); }});\n"
JEST_BASES: dict[str, dict[str, str]] = {
    # Directories named by a glob: one configured in its package.json, one not at all.
    "globbed": {
        "package.json": json.dumps(
            {
                "name": "mono",
                "private": True,
                "scripts": {"test": "jest"},
                "jest": {"projects": ["<rootDir>/packages/*"]},
            }
        ),
        "packages/a/package.json": json.dumps({"name": "a", "jest": {"displayName": "a"}}),
        "packages/a/index.js": "exports.add = (a, b) => a + b;\n",
        "packages/a/__tests__/add.test.js": JEST_TEST.format(name="add", path="../index", want=5),
        "packages/b/package.json": json.dumps({"name": "b"}),
        "packages/b/index.js": "exports.mul = (a, b) => a * b;\n",
        "packages/b/__tests__/mul.test.js": JEST_TEST.format(name="mul", path="../index", want=6),
    },
    # An object and a configuration file.
    "listed": {
        "package.json": json.dumps({"name": "mono", "private": True, "scripts": {"test": "jest"}}),
        "jest.config.js": (
            "module.exports = { projects: [\n"
            "  { displayName: 'inline', testMatch: ['<rootDir>/inline/**/*.test.js'] },\n"
            "  '<rootDir>/packages/b/jest.config.js',\n"
            "] };\n"
        ),
        "inline/index.js": "exports.add = (a, b) => a + b;\n",
        "inline/add.test.js": JEST_TEST.format(name="add", path="./index", want=5),
        "packages/b/jest.config.js": "module.exports = { displayName: 'b' };\n",
        "packages/b/index.js": "exports.mul = (a, b) => a * b;\n",
        "packages/b/mul.test.js": JEST_TEST.format(name="mul", path="./index", want=6),
    },
}
#: A vitest test of one function of its project.
VITEST_TEST = (
    "import {{ test, expect }} from 'vitest';\n"
    "import {{ {name} }} from '{path}';\n"
    "test('{name}', () => {{ expect({name}(2, 3)).toBe({want}); }});\n"
)
VITEST_PACKAGE = {
    "name": "mono",
    "private": True,
    "type": "module",
    "scripts": {"test": "vitest run"},
}
VITEST_BASES: dict[str, dict[str, str]] = {
    # Directories named by a glob, one with a configuration of its own and one without,
    # and an object.
    "globbed": {
        "package.json": json.dumps(VITEST_PACKAGE),
        "vitest.config.mjs": (
            "export default { test: { projects: [\n"
            "  'packages/*',\n"
            "  { test: { name: 'inline', include: ['inline/**/*.test.js'] } },\n"
            "] } };\n"
        ),
        "inline/index.js": "export const sub = (a, b) => a - b;\n",
        "inline/sub.test.js": VITEST_TEST.format(name="sub", path="./index.js", want=-1),
        "packages/a/package.json": json.dumps({"name": "a", "type": "module"}),
        "packages/a/vitest.config.mjs": "export default { test: { environment: 'node' } };\n",
        "packages/a/index.js": "export const add = (a, b) => a + b;\n",
        "packages/a/test/add.test.js": VITEST_TEST.format(name="add", path="../index.js", want=5),
        "packages/b/index.js": "export const mul = (a, b) => a * b;\n",
        "packages/b/mul.test.js": VITEST_TEST.format(name="mul", path="./index.js", want=6),
    },
    # A configuration file named, and an unnamed object that extends the root's.
    "listed": {
        "package.json": json.dumps(VITEST_PACKAGE),
        "vitest.config.mjs": (
            "export default { test: { environment: 'node', projects: [\n"
            "  'packages/b/vitest.config.mjs',\n"
            "  { extends: true, test: { include: ['inline/**/*.test.js'] } },\n"
            "] } };\n"
        ),
        "inline/index.js": "export const sub = (a, b) => a - b;\n",
        "inline/sub.test.js": VITEST_TEST.format(name="sub", path="./index.js", want=-1),
        "packages/b/vitest.config.mjs": "export default { test: { name: 'b' } };\n",
        "packages/b/index.js": "export const mul = (a, b) => a * b;\n",
        "packages/b/mul.test.js": VITEST_TEST.format(name="mul", path="./index.js", want=6),
    },
}
#: Each runner's bases, by `runner-layout`.
BASES = {
    **{f"jest-{layout}": files for layout, files in JEST_BASES.items()},
    **{f"vitest-{layout}": files for layout, files in VITEST_BASES.items()},
}
#: Each base's code of one project, broken.
BROKEN = {
    "jest-globbed": {"packages/b/index.js": "exports.mul = (a, b) => a + b;\n"},
    "jest-listed": {"inline/index.js": "exports.add = (a, b) => a - b;\n"},
    "vitest-globbed": {"packages/b/index.js": "export const mul = (a, b) => a + b;\n"},
    "vitest-listed": {"inline/index.js": "export const sub = (a, b) => a + b;\n"},
}


def _verify(tmp_path: Path, base: str, change: dict[str, str]) -> dict[str, Any]:
    runner = base.split("-")[0]
    assert shutil.which(runner), f"{runner} is not installed: `npm install -g {runner}`"
    repo = change_on_base(tmp_path / "repo", BASES[base], change, dedent=False)
    return verified_json(repo, None, "--base", "HEAD~1", "--protect")


@pytest.mark.parametrize("base", sorted(BASES))
def test_an_honest_change_to_a_projects_tree_is_verified(tmp_path: Path, base: str) -> None:
    report = _verify(tmp_path, base, {"README.md": "mono\n"})
    assert report["status"] == "VERIFIED", json.dumps(report, indent=1)[-3000:]
    (check,) = [c for c in report["checks"] if c["kind"] == "test"]
    canaries = check["extra"]["canaries"]
    assert canaries["finding"] == "as planted", canaries
    # Every project's test files ran both canaries, once each.
    files = len([p for p in BASES[base] if p.endswith(".test.js")])
    assert [len(t["seen"]) for t in canaries["tests"]] == [files, files], canaries
    assert check["tests"]["passed"] == files, check["tests"]


@pytest.mark.parametrize("base", sorted(BASES))
def test_a_wrong_value_in_one_project_fails(tmp_path: Path, base: str) -> None:
    report = _verify(tmp_path, base, BROKEN[base])
    assert report["status"] == "FAILED", json.dumps(report, indent=1)[-3000:]

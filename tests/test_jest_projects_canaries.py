"""A jest configuration with `projects` carries the canaries into every project.

jest takes a multi-project run's tests from each project's own configuration, never from
the root's, so the setup file assay adds to the root's reached no test, and the planted
configuration refused such a run: every jest `projects` monorepo was INDETERMINATE under
`--protect`. Each project (a directory its glob names, with or without a configuration of
its own, a configuration file, an object) is now read by the running jest and given the
setup file. Real jest, the real `assay verify --base HEAD~1 --protect`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.attacks import change_on_base
from tests.cli import verified_json

pytestmark = pytest.mark.slow

TEST = "const {{ {name} }} = require('{path}');\ntest('{name}', () => {{ expect({name}(2, 3)).toBe({want}); }});\n"
BASES: dict[str, dict[str, str]] = {
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
        "packages/a/__tests__/add.test.js": TEST.format(name="add", path="../index", want=5),
        "packages/b/package.json": json.dumps({"name": "b"}),
        "packages/b/index.js": "exports.mul = (a, b) => a * b;\n",
        "packages/b/__tests__/mul.test.js": TEST.format(name="mul", path="../index", want=6),
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
        "inline/add.test.js": TEST.format(name="add", path="./index", want=5),
        "packages/b/jest.config.js": "module.exports = { displayName: 'b' };\n",
        "packages/b/index.js": "exports.mul = (a, b) => a * b;\n",
        "packages/b/mul.test.js": TEST.format(name="mul", path="./index", want=6),
    },
}
#: Each base's code of one project, broken.
BROKEN = {
    "globbed": {"packages/b/index.js": "exports.mul = (a, b) => a + b;\n"},
    "listed": {"inline/index.js": "exports.add = (a, b) => a - b;\n"},
}


def _verify(tmp_path: Path, layout: str, change: dict[str, str]) -> dict[str, Any]:
    assert shutil.which("jest"), "jest is not installed"
    repo = change_on_base(tmp_path / "repo", BASES[layout], change, dedent=False)
    return verified_json(repo, None, "--base", "HEAD~1", "--protect")


@pytest.mark.parametrize("layout", sorted(BASES))
def test_an_honest_change_to_a_jest_projects_tree_is_verified(tmp_path: Path, layout: str) -> None:
    report = _verify(tmp_path, layout, {"README.md": "mono\n"})
    assert report["status"] == "VERIFIED", json.dumps(report, indent=1)[-3000:]
    (check,) = [c for c in report["checks"] if c["kind"] == "test"]
    canaries = check["extra"]["canaries"]
    assert canaries["finding"] == "as planted", canaries
    # Both projects' test files ran both canaries.
    assert [len(t["seen"]) for t in canaries["tests"]] == [2, 2], canaries
    assert check["tests"]["passed"] == 2, check["tests"]


@pytest.mark.parametrize("layout", sorted(BASES))
def test_a_wrong_value_in_one_project_fails(tmp_path: Path, layout: str) -> None:
    report = _verify(tmp_path, layout, BROKEN[layout])
    assert report["status"] == "FAILED", json.dumps(report, indent=1)[-3000:]

"""A vitest configuration with `projects` carries the canaries into every project.

vitest takes a multi-project run's tests from each project's own configuration, never from
the root's, so the setup file assay adds to the root's reached no test, and the planted
configuration refused such a run: every vitest `projects` monorepo was INDETERMINATE under
`--protect`. Each project (a directory its glob names, with or without a configuration of
its own, a configuration file, an object, one extending the root's) is now resolved as
vitest resolves it and given the setup file, under the name vitest gives it. Real vitest,
the real `assay verify --base HEAD~1 --protect`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.attacks import change_on_base
from tests.cli import verified_json

pytestmark = pytest.mark.slow

TEST = (
    "import {{ test, expect }} from 'vitest';\n"
    "import {{ {name} }} from '{path}';\n"
    "test('{name}', () => {{ expect({name}(2, 3)).toBe({want}); }});\n"
)
PACKAGE = {"name": "mono", "private": True, "type": "module", "scripts": {"test": "vitest run"}}
BASES: dict[str, dict[str, str]] = {
    # Directories named by a glob, one with a configuration of its own and one without,
    # and an object.
    "globbed": {
        "package.json": json.dumps(PACKAGE),
        "vitest.config.mjs": (
            "export default { test: { projects: [\n"
            "  'packages/*',\n"
            "  { test: { name: 'inline', include: ['inline/**/*.test.js'] } },\n"
            "] } };\n"
        ),
        "inline/index.js": "export const sub = (a, b) => a - b;\n",
        "inline/sub.test.js": TEST.format(name="sub", path="./index.js", want=-1),
        "packages/a/package.json": json.dumps({"name": "a", "type": "module"}),
        "packages/a/vitest.config.mjs": "export default { test: { environment: 'node' } };\n",
        "packages/a/index.js": "export const add = (a, b) => a + b;\n",
        "packages/a/test/add.test.js": TEST.format(name="add", path="../index.js", want=5),
        "packages/b/index.js": "export const mul = (a, b) => a * b;\n",
        "packages/b/mul.test.js": TEST.format(name="mul", path="./index.js", want=6),
    },
    # A configuration file named, and an unnamed object that extends the root's.
    "listed": {
        "package.json": json.dumps(PACKAGE),
        "vitest.config.mjs": (
            "export default { test: { environment: 'node', projects: [\n"
            "  'packages/b/vitest.config.mjs',\n"
            "  { extends: true, test: { include: ['inline/**/*.test.js'] } },\n"
            "] } };\n"
        ),
        "inline/index.js": "export const sub = (a, b) => a - b;\n",
        "inline/sub.test.js": TEST.format(name="sub", path="./index.js", want=-1),
        "packages/b/vitest.config.mjs": "export default { test: { name: 'b' } };\n",
        "packages/b/index.js": "export const mul = (a, b) => a * b;\n",
        "packages/b/mul.test.js": TEST.format(name="mul", path="./index.js", want=6),
    },
}
#: Each base's code of one project, broken.
BROKEN = {
    "globbed": {"packages/b/index.js": "export const mul = (a, b) => a + b;\n"},
    "listed": {"inline/index.js": "export const sub = (a, b) => a + b;\n"},
}


def _verify(tmp_path: Path, layout: str, change: dict[str, str]) -> dict[str, Any]:
    assert shutil.which("vitest"), "vitest is not installed: `npm install -g vitest`"
    repo = change_on_base(tmp_path / "repo", BASES[layout], change, dedent=False)
    return verified_json(repo, None, "--base", "HEAD~1", "--protect")


@pytest.mark.parametrize("layout", sorted(BASES))
def test_an_honest_change_to_a_vitest_projects_tree_is_verified(
    tmp_path: Path, layout: str
) -> None:
    report = _verify(tmp_path, layout, {"README.md": "mono\n"})
    assert report["status"] == "VERIFIED", json.dumps(report, indent=1)[-3000:]
    (check,) = [c for c in report["checks"] if c["kind"] == "test"]
    canaries = check["extra"]["canaries"]
    assert canaries["finding"] == "as planted", canaries
    # Every project's test files ran both canaries, once each.
    files = len([p for p in BASES[layout] if p.endswith(".test.js")])
    assert [len(t["seen"]) for t in canaries["tests"]] == [files, files], canaries
    assert check["tests"]["passed"] == files, check["tests"]


@pytest.mark.parametrize("layout", sorted(BASES))
def test_a_wrong_value_in_one_project_fails(tmp_path: Path, layout: str) -> None:
    report = _verify(tmp_path, layout, BROKEN[layout])
    assert report["status"] == "FAILED", json.dumps(report, indent=1)[-3000:]

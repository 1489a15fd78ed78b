"""The canaries' files are never read by a linter as the project's.

A stage runs its checks side by side, and the canaries are files planted in the workspace
for the test checks' run. A linter that walks the whole tree (`biome check .`, with no VCS
ignore files configured, as uuid's) read the planted module and failed the project's lint
on its style: an honest change was FAILED under --protect. The stage's other checks now
finish before anything is planted.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay.verdict import Status
from tests.attacks import change_on_base, explain, verify_change

pytestmark = pytest.mark.slow

# Formatted as biome formats it (tabs), so the project's own files pass its check.
PACKAGE = (
    json.dumps(
        {
            "name": "calc",
            "version": "1.0.0",
            "scripts": {"lint": "biome check .", "test": "node --test"},
        },
        indent="\t",
    )
    + "\n"
)
BIOME = '{ "javascript": { "formatter": { "quoteStyle": "single" } } }\n'
CALC = "exports.add = (a, b) => a + b;\n"
TESTS = """\
const test = require('node:test');
const assert = require('node:assert');
const { add } = require('../calc.js');

test('adds', () => {
\tassert.strictEqual(add(2, 3), 5);
});
"""


def test_a_linter_of_the_whole_tree_does_not_read_the_planted_files(tmp_path: Path) -> None:
    assert shutil.which("biome"), "biome is not installed: .ci/run installs @biomejs/biome"
    base = {
        "package.json": PACKAGE,
        "biome.json": BIOME,
        "calc.js": CALC,
        "test/calc.test.js": TESTS,
    }
    repo = change_on_base(tmp_path / "repo", base, {"README.md": "calc\n"}, dedent=False)
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)
    lint = [c for c in report.checks if c.check.name == "npm-lint"]
    assert lint and lint[0].passed, explain(report)
    test = [c for c in report.checks if c.check.name == "npm-test"]
    assert test and (test[0].extra.get("canaries") or {}).get("planted"), explain(report)

"""A JavaScript project with node-style test files but no test script: `node --test`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assay.plan import plan_repository

TEST_JS = (
    "const test = require('node:test');\n"
    "const assert = require('node:assert');\n"
    "test('adds', () => { assert.strictEqual(1 + 1, {expected}); });\n"
)


def make_repo(root: Path, *, expected: int = 2, scripts: dict[str, str] | None = None) -> Path:
    (root / "test").mkdir(parents=True)
    manifest = {"name": "x", "version": "1.0.0", **({"scripts": scripts} if scripts else {})}
    (root / "package.json").write_text(json.dumps(manifest))
    (root / "test" / "add.js").write_text(TEST_JS.replace("{expected}", str(expected)))
    return root


def test_node_test_is_planned_only_when_no_script_answers(tmp_path: Path) -> None:
    bare = plan_repository(make_repo(tmp_path / "bare"))
    assert [(c.name, c.argv) for c in bare.checks] == [("node-test", ("node", "--test"))]
    scripted = plan_repository(make_repo(tmp_path / "scripted", scripts={"test": "node --test"}))
    assert [c.tool for c in scripted.checks] == ["npm-test"]


@pytest.mark.slow
def test_node_fallback_verifies_and_fails_for_real(tmp_path: Path) -> None:
    def verify(repo: Path) -> dict:
        done = subprocess.run(
            [sys.executable, "-m", "assay", "verify", "--json", str(repo)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env=dict(os.environ),
        )
        return json.loads(done.stdout)

    passing = verify(make_repo(tmp_path / "ok"))
    assert passing["status"] == "VERIFIED", passing["note"]
    failing = verify(make_repo(tmp_path / "bad", expected=3))
    assert failing["status"] == "FAILED"
    assert failing["checks"][0]["tests"]["failed"] == 1

"""A linter's errors are listed under its failed check before its warnings, and each
warning is marked as one: minimist 1.2.8's eslint run with a parse error in index.js
listed four of its "No magic number" warnings first, read as the reasons it failed. Real
eslint (npm's global install, as CI has it) under real bubblewrap."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.cli import assay, assay_env, no_traceback
from tests.repos import write

FILES = {
    "package.json": json.dumps(
        {"name": "nums", "version": "1.0.0", "scripts": {"lint": "eslint ."}}
    ),
    "eslint.config.mjs": 'export default [{ rules: { "no-magic-numbers": "warn" } }];\n',
    "a.js": "exports.a = function () { return 7 * 6; };\n",
    "b.js": "exports.b = function () { return 1 +; };\n",
}


def test_a_lints_error_is_listed_before_its_warnings(tmp_path: Path) -> None:
    assert shutil.which("eslint"), "eslint is not installed: `npm install -g eslint`"
    repo = write(tmp_path / "repo", FILES)
    done = assay(
        "verify",
        "--no-cache",
        "--sandbox",
        "bwrap",
        "--kind",
        "lint",
        str(repo),
        env=assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state")),
        timeout=300,
    )
    no_traceback(done)
    listed = [line for line in done.stdout.splitlines() if line.startswith("  npm-lint: ")]
    assert listed and "b.js:1" in listed[0] and "Parsing error" in listed[0], done.stdout
    warnings = [line for line in listed if "a.js:1" in line]
    assert warnings and all(": warning: No magic number" in line for line in warnings), listed

"""An install step's git hook installer writes into a `.git` of its own: uuid's `prepare`
runs `lefthook install`, which writes .git/hooks and its checksum in .git/info; bubblewrap
showed the source's .git read-only, `npm ci` failed, and the pristine tree was
INDETERMINATE under --install, where a clone's `npm ci && npm test` passes. What it writes
is the run's own: the source's .git is left as it was."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli import installed_and_verified
from tests.repos import git_repo

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("node") is None or shutil.which("npm") is None, reason="needs node and npm"
    ),
]

PACKAGE = {
    "name": "hooked",
    "version": "1.0.0",
    "private": True,
    "scripts": {"prepare": "node hooks.js", "test": "node --test"},
}
LOCK = {
    "name": "hooked",
    "version": "1.0.0",
    "lockfileVersion": 3,
    "requires": True,
    "packages": {"": {"name": "hooked", "version": "1.0.0"}},
}
#: As lefthook does: a hook for each of its commands, then its checksum beside info/exclude,
#: which git reads and an installer must still find.
HOOKS_JS = """\
const fs = require('node:fs');
fs.readFileSync('.git/info/exclude');
fs.writeFileSync('.git/hooks/pre-commit', '#!/bin/sh\\nexit 0\\n', { mode: 0o755 });
fs.writeFileSync('.git/info/lefthook.checksum', 'abc\\n');
"""
TEST_JS = """\
const test = require('node:test');
const assert = require('node:assert');
test('adds', () => { assert.strictEqual(1 + 1, 2); });
"""


def test_a_prepare_script_that_installs_git_hooks_leaves_the_tree_verified(
    tmp_path: Path,
) -> None:
    repo = git_repo(
        tmp_path / "repo",
        {
            "package.json": json.dumps(PACKAGE),
            "package-lock.json": json.dumps(LOCK),
            "hooks.js": HOOKS_JS,
            "test/add.test.js": TEST_JS,
        },
    )
    report = installed_and_verified(repo, tmp_path)
    assert report["status"] == "VERIFIED", (report["note"], report["output"])
    assert not (repo / ".git/hooks/pre-commit").exists()
    assert not (repo / ".git/info/lefthook.checksum").exists()
    assert (repo / ".git/info/exclude").is_file()

"""An npm install step that fails says why in its note: the first line of npm's error block
that names what went wrong, not only its exit code.

Measured on a real project: ts-dedent 2.2.0 (no lockfile in its npm tarball) under
`assay verify --install`: `npm install` stopped at `npm error ERESOLVE could not resolve`
(ts-jest 27 wants @types/jest 27, the package pins 26), and the note said only "install
step install-node did not succeed (exited 1)": npm writes `npm error ...` (`npm ERR! ...`
before npm 10), which no other tool's error line looks like.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay.classify import npm_error_line
from tests.cli import installed_and_verified
from tests.repos import write

ERESOLVE = """\
npm error code ERESOLVE
npm error ERESOLVE could not resolve
npm error
npm error While resolving: ts-jest@27.1.5
npm error Found: @types/jest@26.0.24
npm error A complete log of this run can be found in: /w/.npm/_logs/debug-0.log
"""


def test_the_line_that_says_what_went_wrong_is_named() -> None:
    assert npm_error_line(ERESOLVE) == "npm error ERESOLVE could not resolve"
    old = "npm ERR! code ENOENT\nnpm ERR! syscall open\nnpm ERR! path /w/package.json\n"
    old += "npm ERR! enoent Could not read package.json\n"
    assert npm_error_line(old) == "npm ERR! enoent Could not read package.json"


def test_only_where_and_which_code_is_not_a_reason() -> None:
    said = "npm error code 1\nnpm error path /w\nnpm error A complete log of this run\n"
    assert npm_error_line(said) is None
    assert npm_error_line("added 2 packages in 1s\n") is None


@pytest.mark.slow
def test_an_npm_ci_out_of_sync_with_its_lockfile_says_so(tmp_path: Path) -> None:
    assert shutil.which("npm") is not None, "npm is not installed (.ci/run installs it)"
    package = {"name": "x", "version": "1.0.0", "scripts": {"test": "node --test"}}
    lock = {**package, "lockfileVersion": 3, "requires": True, "packages": {"": package}}
    files = {
        "package.json": json.dumps({**package, "devDependencies": {"a": "file:a"}}),
        "package-lock.json": json.dumps(lock),
        "a/package.json": json.dumps({"name": "a", "version": "1.0.0"}),
        "test/a.test.js": "require('node:test')('a', () => {})\n",
    }
    report = installed_and_verified(write(tmp_path / "repo", files), tmp_path)
    assert report["status"] == "INDETERMINATE", report["note"]
    assert "(exited 1: npm error `npm ci` can only install packages when" in report["note"]

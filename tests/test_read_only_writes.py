"""A check that fails only because the sandbox kept it from writing is not the code's
failure.

Without `--install`, the sandbox shows the source's node_modules read-only. reselect's
`vitest --typecheck` writes its build info there (`EROFS: read-only file system`), and
its pristine tree was FAILED. Where every failure says so, the result is INDETERMINATE,
naming the path; any other failure beside it still fails."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay.parsers.crash import read_only_write
from tests.cli import assay, no_traceback
from tests.repos import write

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


#: tsc under vitest's typecheck, as reselect's run printed it.
TSC_WRITE = (
    "error TS5033: Could not write file '/w/node_modules/vitest/x.tsbuildinfo': "
    "EROFS: read-only file system, open '/w/node_modules/vitest/x.tsbuildinfo'."
)


@pytest.mark.parametrize(
    ("text", "path"),
    [
        (TSC_WRITE, "/w/node_modules/vitest/x.tsbuildinfo"),
        (
            "YN0001: Error: EROFS: read-only file system, copyfile '/tmp/a.zip' -> '/h/cache/a.zip'",
            "/h/cache/a.zip",  # where it was writing, not what it read
        ),
        ("OSError: [Errno 30] Read-only file system: '/w/.cache/x'", "/w/.cache/x"),
        ("a test about read-only file systems passed", None),
    ],
)
def test_the_path_a_refused_write_names(text: str, path: str | None) -> None:
    assert read_only_write(text) == path


WRITES_INTO_DEPENDENCY = (
    "const test = require('node:test');\n"
    "test('writes its cache', () => {\n"
    "  require('fs').writeFileSync('node_modules/dep/cache.tmp', 'x');\n"
    "});\n"
)
WRONG_VALUE = "require('node:test')('adds', () => require('assert').strictEqual(1 + 1, 3));\n"


@needs_bwrap
@pytest.mark.parametrize(
    ("extra", "status"), [({}, "INDETERMINATE"), ({"b.test.js": WRONG_VALUE}, "FAILED")]
)
def test_a_test_that_could_only_not_write_a_dependency_is_not_failed(
    tmp_path: Path, extra: dict[str, str], status: str
) -> None:
    repo = write(
        tmp_path / "repo",
        {
            "package.json": json.dumps(
                {"name": "p", "version": "1.0.0", "scripts": {"test": "node --test"}}
            ),
            "node_modules/dep/index.js": "module.exports = 1;\n",
            "a.test.js": WRITES_INTO_DEPENDENCY,
            **extra,
        },
    )
    done = assay("verify", "--json", "--no-cache", "--sandbox", "bwrap", str(repo))
    no_traceback(done)
    report = json.loads(done.stdout)
    assert report["status"] == status, report["note"]
    if status == "INDETERMINATE":
        assert report["note"].startswith(
            "npm-test could not write node_modules/dep/cache.tmp: the sandbox shows it read-only"
        ), report["note"]

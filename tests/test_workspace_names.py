"""A workspace's name is in every path of the project it holds, so it must not change what
the project's tools find.

TypeScript's `include: ["."]` matches nothing under a directory whose name has dots
(`error TS18003: No inputs were found`), and workspaces were named
`assay-bwrap-<id>-<pid>.<start>.<ns>-<random>`: redux-thunk's `vitest --typecheck`,
which writes such a configuration, FAILED where its CI passes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay.scratch import make_scratch
from tests.cli import assay, no_traceback
from tests.repos import write

needs_tsc = pytest.mark.skipif(shutil.which("tsc") is None, reason="needs tsc (.ci/run has it)")


def test_a_scratch_directorys_name_has_no_dot(tmp_path: Path) -> None:
    made = make_scratch("bwrap", dir=tmp_path)
    assert "." not in made.name, made.name


@needs_tsc
@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_a_typescript_project_that_includes_its_own_directory_is_checked(
    tmp_path: Path, sandbox: str
) -> None:
    repo = write(
        tmp_path / "repo",
        {
            "package.json": json.dumps({"name": "p", "version": "1.0.0"}),
            "tsconfig.json": '{"compilerOptions": {"noEmit": true, "strict": true}, "include": ["."]}\n',
            "a.ts": "export const x: number = 1;\n",
        },
    )
    args = ("verify", "--json", "--no-cache", "--kind", "typecheck", "--sandbox", sandbox)
    done = assay(*args, str(repo))
    no_traceback(done)
    report = json.loads(done.stdout)
    assert report["status"] == "VERIFIED", report["note"]
    (tsc,) = report["checks"]
    assert tsc["name"] == "tsc" and tsc["verdict"] == "pass"

    # And it still finds what is wrong there.
    (repo / "a.ts").write_text("export const x: number = 'one';\n")
    report = json.loads(assay(*args, str(repo)).stdout)
    assert report["status"] == "FAILED", report["note"]

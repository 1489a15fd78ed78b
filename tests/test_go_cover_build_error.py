"""A compile error that go test reports through its cover tool: before Go 1.20, `go test
-cover` rewrites each file with `cover` before compiling it, and a syntax error is then
`cover: /abs/a.go: /abs/a.go:5:2: expected ...` behind a date, not the
compiler's `a.go:5:2: ...`. go-querystring's CI runs `go test -coverprofile`: its test
check was INDETERMINATE, its output read as saying nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.cli import assay, assay_env, no_traceback
from tests.repos import write

pytestmark = pytest.mark.skipif(shutil.which("go") is None, reason="needs go")

WORKFLOW = """\
on: [push]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: go test -v -coverprofile coverage.txt -covermode atomic ./...
"""


def test_a_syntax_error_reported_by_cover_fails_the_test_check_at_its_line(
    tmp_path: Path,
) -> None:
    repo = write(
        tmp_path / "mod",
        {
            "go.mod": "module example.com/mod\n\ngo 1.19\n",
            ".github/workflows/ci.yml": WORKFLOW,
            "a/a.go": "package a\n\n// One returns 1.\nfunc One() int { x := \n\treturn 1 }\n",
            "a/a_test.go": (
                'package a\n\nimport "testing"\n\nfunc TestOne(t *testing.T) {\n'
                '\tif One() != 1 {\n\t\tt.Fatal("One")\n\t}\n}\n'
            ),
        },
    )
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"))
    done = assay(
        "verify", "--json", "--no-cache", "--kind", "test", str(repo), env=env, timeout=300
    )
    no_traceback(done)
    report: dict[str, Any] = json.loads(done.stdout)
    (go_test,) = [c for c in report["checks"] if c["name"] == "go-test"]
    assert "-coverprofile" in go_test["argv"], go_test["argv"]
    assert (report["status"], go_test["verdict"]) == ("FAILED", "fail"), report["note"]
    assert [(d["file"], d["line"]) for d in go_test["diagnostics"]] == [("a/a.go", 5)]

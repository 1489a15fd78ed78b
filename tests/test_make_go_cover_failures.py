"""A make target running `go test -coverpkg` (goldmark's `make test`): a compile error in a
file the cover tool rewrote has no column (`sub.go:4: cannot use ...`), and was read as
"exited 2 and its output does not say why"; a failing test was counted and not named.
Real make and go under real bubblewrap."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.repos import write
from tests.test_go_cache import verify

pytestmark = pytest.mark.skipif(shutil.which("go") is None, reason="needs go")

TEST = (
    'package sub\n\nimport "testing"\n\nfunc TestName(t *testing.T) {\n'
    '\tif Name() != "x" {\n\t\tt.Fatal("got", Name())\n\t}\n}\n'
)


def _tree(root: Path, body: str) -> Path:
    return write(
        root,
        {
            "go.mod": "module example.com/mini\n\ngo 1.19\n",
            "Makefile": "test:\n\tgo test -coverpkg=./... ./...\n",
            "sub/sub.go": f"package sub\n\nfunc Name() string {{\n\treturn {body}\n}}\n",
            "sub/sub_test.go": TEST,
        },
    )


def test_a_compile_error_without_a_column_fails_at_its_line(tmp_path: Path) -> None:
    report = verify(_tree(tmp_path / "repo", "42"), tmp_path / "state")
    (check,) = [c for c in report["checks"] if c["name"] == "make-test"]
    assert (report["status"], check["verdict"]) == ("FAILED", "fail"), report["note"]
    assert [(d["file"], d["line"]) for d in check["diagnostics"]] == [("sub/sub.go", 4)]


def test_a_failing_test_behind_make_is_named_with_what_it_logged(tmp_path: Path) -> None:
    report = verify(_tree(tmp_path / "repo", '"y"'), tmp_path / "state")
    (check,) = [c for c in report["checks"] if c["name"] == "make-test"]
    assert report["status"] == "FAILED", report["note"]
    failed = [c for c in check["test_cases"] if c["outcome"] == "failed"]
    assert [c["name"] for c in failed] == ["example.com/mini/sub.TestName"], failed
    assert "sub_test.go:7: got y" in failed[0]["message"]
    assert "example.com/mini/sub.TestName" in report["note"]

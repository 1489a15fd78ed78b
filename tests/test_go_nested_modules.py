"""A Go module nested in the tree, which the project's CI tests in its own directory.

golang-lru's `arc/` has its own go.mod; its CI runs `go test` with `working-directory:
./arc`. No `./...` from the root reaches another module, and the plan kept one Go test
per kind: a wrong value in `arc/` was VERIFIED. A Go command CI runs in a directory is
now a check of its own, and `--install` downloads that module's requirements too."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay.install import install_steps
from assay.plan import plan_repository
from tests.repos import write
from tests.test_go_cache import verify

CI = """\
name: ci
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: go vet ./...
      - run: go test ./...
      - run: go test ./...
        working-directory: ./sub
"""
TEST = (
    'package {pkg}\n\nimport "testing"\n\nfunc TestDouble(t *testing.T) {{\n'
    "\tif Double(2) != 4 {{\n\t\tt.Fatal(Double(2))\n\t}}\n}}\n"
)


def _repo(root: Path, sub_body: str = "2 * n") -> Path:
    return write(
        root,
        {
            ".github/workflows/ci.yml": CI,
            "go.mod": "module example.com/top\n\ngo 1.19\n",
            "top.go": "package top\n\nfunc Double(n int) int { return 2 * n }\n",
            "top_test.go": TEST.format(pkg="top"),
            "sub/go.mod": "module example.com/sub\n\ngo 1.19\n",
            "sub/sub.go": f"package sub\n\nfunc Double(n int) int {{ return {sub_body} }}\n",
            "sub/sub_test.go": TEST.format(pkg="sub"),
        },
    )


def test_a_module_ci_tests_in_its_directory_is_planned_and_installed(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    checks = {c.name: c for c in plan_repository(root).checks}
    assert {"go-test", "go-test-sub"} <= set(checks)
    assert checks["go-test"].cwd == "." and os.path.normpath(checks["go-test-sub"].cwd) == "sub"
    steps = {s.name: s for s in install_steps(root)}
    assert steps["install-go"].cwd == "."
    assert steps["install-go-sub"].argv == ("go", "mod", "download")
    assert os.path.normpath(steps["install-go-sub"].cwd) == "sub"


@pytest.mark.parametrize(("sub_body", "status"), [("2 * n", "VERIFIED"), ("n + 1", "FAILED")])
def test_a_wrong_value_in_the_nested_module_fails_for_real(
    tmp_path: Path, sub_body: str, status: str
) -> None:
    report = verify(_repo(tmp_path / "repo", sub_body), tmp_path / "state")
    assert report["status"] == status, report["note"]
    tests = {c["name"]: c for c in report["checks"] if c["kind"] == "test"}
    assert tests["go-test-sub"]["tests"]["executed"] == 1, tests
    assert tests["go-test"]["verdict"] == "pass"

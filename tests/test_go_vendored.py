"""A Go module that vendors its requirements builds from vendor/, offline.

hashicorp/hcl, as Debian ships it with go-spew vendored: `--install` ran `go mod
download`, which ignores vendor/ and asks the module proxy; with none reachable, the step
failed and the tree was INDETERMINATE, its checks never run. Under a go directive of 1.14
or later, with vendor/modules.txt, go builds from vendor/ by default: no download is
needed, and none is run."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from assay.install import install_steps
from assay.plan import plan_repository
from tests.cli import assay, assay_env, no_traceback
from tests.repos import write

DEP = "package dep\n\nfunc Two() int { return 2 }\n"
LISTED = "# example.com/dep v1.0.0\n## explicit\nexample.com/dep\n"


def vendored(root: Path, go: str = "1.14", *, body: str = "dep.Two() * n", at: str = "") -> Path:
    return write(
        root,
        {
            f"{at}go.mod": f"module example.com/top\n\ngo {go}\n\nrequire example.com/dep v1.0.0\n",
            f"{at}top.go": (
                'package top\n\nimport "example.com/dep"\n\n'
                f"func Double(n int) int {{ return {body} }}\n"
            ),
            f"{at}top_test.go": (
                'package top\n\nimport "testing"\n\nfunc TestDouble(t *testing.T) {\n'
                "\tif Double(2) != 4 {\n\t\tt.Fatal(Double(2))\n\t}\n}\n"
            ),
            f"{at}vendor/modules.txt": LISTED,
            f"{at}vendor/example.com/dep/dep.go": DEP,
        },
    )


def downloads(root: Path) -> list[str]:
    return [
        os.path.normpath(s.cwd) for s in install_steps(root) if s.argv == ("go", "mod", "download")
    ]


def test_a_vendored_module_downloads_nothing(tmp_path: Path) -> None:
    assert downloads(vendored(tmp_path)) == []


@pytest.mark.parametrize("go", ["1.13", "1.9"])
def test_a_module_older_than_vendoring_by_default_still_downloads(tmp_path: Path, go: str) -> None:
    assert downloads(vendored(tmp_path, go)) == ["."]


def test_a_vendor_directory_without_its_list_still_downloads(tmp_path: Path) -> None:
    root = vendored(tmp_path)
    (root / "vendor" / "modules.txt").unlink()
    assert downloads(root) == ["."]


def test_a_nested_vendored_module_ci_tests_downloads_nothing(tmp_path: Path) -> None:
    ci = (
        "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: go test ./...\n        working-directory: ./sub\n"
    )
    root = vendored(tmp_path, at="sub/")
    write(root, {".github/workflows/ci.yml": ci, "go.mod": "module example.com/root\n\ngo 1.19\n"})
    assert any(os.path.normpath(c.cwd) == "sub" for c in plan_repository(root).checks)
    assert downloads(root) == ["."]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("body", "status"), [("dep.Two() * n", "VERIFIED"), ("dep.Two() + n + 1", "FAILED")]
)
def test_a_vendored_module_is_verified_with_no_proxy(
    tmp_path: Path, body: str, status: str
) -> None:
    repo = vendored(tmp_path / "repo", body=body)
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"), GOPROXY="off")
    done = assay("verify", "--install", "--json", "--no-cache", str(repo), env=env, timeout=300)
    no_traceback(done)
    report = json.loads(done.stdout)
    assert report["status"] == status, report["note"]
    (test,) = [c for c in report["checks"] if c["name"] == "go-test"]
    assert test["tests"]["executed"] == 1

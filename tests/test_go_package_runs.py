"""Go runs CI makes on packages no other run of theirs reaches are checks of their own.

gomarkdown's CI runs `go test -v . && go test -v ./ast && go test -v ./parser && go test -v
./html`; assay kept `go test -v .` alone as the first of four, and a change only `./ast`'s
tests catch (TestSiblingLinks) failed CI and was VERIFIED."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.plan import plan_repository
from assay.verdict import Kind
from tests.repos import workflow, write
from tests.test_go_cache import verify

TEST_DOUBLE = (
    'package sub\n\nimport "testing"\n\n'
    'func TestDouble(t *testing.T) {\n\tif Double(2) != 4 {\n\t\tt.Fatal("Double(2) != 4")\n\t}\n}\n'
)


def test_a_package_only_a_later_run_tests_fails_the_verdict(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "repo",
        {
            "go.mod": "module example.com/calc\n\ngo 1.19\n",
            "calc.go": "package calc\n\nfunc One() int { return 1 }\n",
            "calc_test.go": 'package calc\n\nimport "testing"\n\nfunc TestOne(t *testing.T) {}\n',
            "sub/double.go": "package sub\n\nfunc Double(x int) int { return x * 3 }\n",
            "sub/double_test.go": TEST_DOUBLE,
            ".github/workflows/ci.yml": workflow("go test -v . && go test -v ./sub"),
        },
    )
    report = verify(repo, tmp_path / "state")
    assert report["status"] == "FAILED", report["note"]
    tests = {c["name"]: c["verdict"] for c in report["checks"] if c["kind"] == "test"}
    assert tests == {"go-test": "pass", "go-test-sub": "fail"}, tests
    assert "example.com/calc/sub.TestDouble" in report["note"]


@pytest.mark.parametrize(
    ("steps", "planned"),
    [
        # `./...` reaches every package of the module: one run stands for the others.
        (("go test ./...", "go test -v ./sub"), {"go-test": "go test ./..."}),
        (("go test ./sub/...", "go test ./sub/deep"), {"go-test": "go test ./sub/..."}),
        # A directory's name is not a prefix of another's.
        (
            ("go test ./sub/...", "go test ./subtle/"),
            {"go-test": "go test ./sub/...", "go-test-subtle": "go test ./subtle/"},
        ),
        (
            ("go test -tags x .", "go test -tags x ./sub/..."),
            {"go-test": "go test -tags x .", "go-test-x-sub-all": "go test -tags x ./sub/..."},
        ),
    ],
)
def test_each_package_set_ci_tests_is_run_once(
    tmp_path: Path, steps: tuple[str, ...], planned: dict[str, str]
) -> None:
    write(
        tmp_path,
        {
            "go.mod": "module example.com/p\n\ngo 1.19\n",
            "p.go": "package p\n",
            ".github/workflows/ci.yml": workflow(*steps),
        },
    )
    tests = [c for c in plan_repository(tmp_path).checks if c.kind is Kind.TEST]
    assert {c.name: " ".join(c.argv) for c in tests} == planned

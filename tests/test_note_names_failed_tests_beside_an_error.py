"""A check whose output holds an error and failing tests names both in the note.

hcl's `go test ./...`: today's vet stops one package's tests from building
(`parser_test.go:243: Fatalf format %s has arg lt of wrong type`), as it did on the clean
tree; a change that broke the printer failed 27 of its tests, and the note named only the
vet error, as if the change had broken nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.repos import write
from tests.test_go_cache import verify

VET_ERROR = (
    'package a\n\nimport "testing"\n\nfunc TestA(t *testing.T) {\n'
    '\tif false {\n\t\tt.Fatalf("%d", "not a number")\n\t}\n}\n'
)
TEST_B = (
    'package b\n\nimport "testing"\n\nfunc TestDouble(t *testing.T) {\n'
    "\tif Double(2) != 4 {\n\t\tt.Fatal(Double(2))\n\t}\n}\n"
)


@pytest.mark.slow
def test_failing_tests_beside_a_package_that_does_not_build_are_named(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "repo",
        {
            "go.mod": "module example.com/m\n\ngo 1.19\n",
            "a/a.go": "package a\n",
            "a/a_test.go": VET_ERROR,
            "b/b.go": "package b\n\nfunc Double(n int) int { return n + 1 }\n",
            "b/b_test.go": TEST_B,
        },
    )
    report = verify(repo, tmp_path / "state")
    assert report["status"] == "FAILED", report["note"]
    assert "a/a_test.go:7" in report["note"], report["note"]
    assert "1 of 1 tests failed: example.com/m/b.TestDouble" in report["note"], report["note"]

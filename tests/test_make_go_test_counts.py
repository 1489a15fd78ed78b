"""A make target that runs `go test` is run with `GOFLAGS=-v`: without -v go prints only
the tests that failed, and a passing package as one `ok` line. pkg/errors' `make test`
with a changed message read as "11 of 11 tests failed" (51 ran), its clean tree as one
test passed. Real make and go under real bubblewrap."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.plan import plan_repository
from tests.repos import write
from tests.test_go_cache import verify

CALC = (
    "package calc\n\nfunc Double(n int) int {{ return {body} }}\n\nfunc One() int {{ return 1 }}\n"
)
TESTS = (
    'package calc\n\nimport "testing"\n\n'
    "func TestDouble(t *testing.T) {\n\tif Double(2) != 4 {\n\t\tt.Fatal(Double(2))\n\t}\n}\n\n"
    "func TestOne(t *testing.T) {\n\tif One() != 1 {\n\t\tt.Fatal(One())\n\t}\n}\n\n"
    "func TestTwo(t *testing.T) {\n\tif One()+One() != 2 {\n\t\tt.Fatal(One())\n\t}\n}\n"
)


def _tree(root: Path, body: str, makefile: str = "test:\n\tgo test ./...\n") -> Path:
    files = {
        "go.mod": "module example.com/calc\n\ngo 1.19\n",
        "calc.go": CALC.format(body=body),
        "calc_test.go": TESTS,
        "Makefile": makefile,
    }
    return write(root, files)


def test_a_make_target_running_go_test_asks_go_for_every_result(tmp_path: Path) -> None:
    (check,) = plan_repository(_tree(tmp_path / "go", "n * 2")).checks
    assert check.argv == ("make", "test") and check.env == {"GOFLAGS": "-v"}, check
    other = _tree(tmp_path / "other", "n * 2", makefile="test:\n\t./run-tests.sh\n")
    (check,) = [c for c in plan_repository(other).checks if c.argv == ("make", "test")]
    assert "GOFLAGS" not in check.env, check


@pytest.mark.parametrize(
    ("body", "status", "counts"), [("n * 2", "VERIFIED", (3, 0)), ("n + 1", "FAILED", (2, 1))]
)
def test_a_make_target_running_go_test_counts_every_test(
    tmp_path: Path, body: str, status: str, counts: tuple[int, int]
) -> None:
    report = verify(_tree(tmp_path / "repo", body), tmp_path / "state")
    assert report["status"] == status, report["note"]
    (test,) = [c for c in report["checks"] if c["name"] == "make-test"]
    assert (test["tests"]["passed"], test["tests"]["failed"]) == counts, test["tests"]


def test_the_callers_goflags_stand_with_the_targets_after_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.instrument import instrument

    (check,) = plan_repository(_tree(tmp_path / "go", "n * 2")).checks
    assert instrument(check, None, tmp_path).env["GOFLAGS"] == "-v"
    monkeypatch.setenv("GOFLAGS", "-mod=vendor")
    assert instrument(check, None, tmp_path).env["GOFLAGS"] == "-mod=vendor -v"


def test_a_make_target_running_go_test_stopped_at_the_deadline_names_the_hung_test(
    tmp_path: Path,
) -> None:
    """pkg/errors' `make test` with a loop in Error() was stopped as "a hang" and named
    nothing: go -v's `=== RUN` with no result, and the dump go prints on SIGQUIT, name it."""
    from assay.verdict import Status
    from tests.attacks import explain
    from tests.test_js_hang_named import _stopped

    spins = "func() int { for n >= 0 { n = (n + 1) % 5 }; return n }()"
    report = _stopped(_tree(tmp_path / "repo", spins))
    assert report.status is Status.INDETERMINATE, explain(report)
    # go inlines Double: the frame may be the test's own.
    assert "while running TestDouble (stuck at calc.go:3 in example.com/calc." in report.note, (
        report.note
    )


def test_a_hung_tests_place_below_a_gopath_link_is_named_from_the_tree() -> None:
    from assay.parsers.go_verbose_text import running_tests

    text = (
        "=== RUN   TestWrap\n--- PASS: TestWrap (0.00s)\n=== RUN   TestNew\n"
        "SIGQUIT: quit\n\ngoroutine 7 [running]:\n"
        "github.com/pkg/errors.(*fundamental).Error(...)\n"
        "\t/tmp/tmp.Ab/src/github.com/pkg/errors/errors.go:126\n"
        "github.com/pkg/errors.TestNew(0xc000)\n"
        "\t/tmp/tmp.Ab/src/github.com/pkg/errors/errors_test.go:30 +0x1d\n"
    )
    (named,) = running_tests(text, "/w", "github.com/pkg/errors")
    assert named == "TestNew (stuck at errors.go:126 in github.com/pkg/errors.(*fundamental).Error)"
    assert running_tests(text, "/w") == ("TestNew",)

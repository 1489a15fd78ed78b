"""gofmt as the gate a Go project's CI makes of it.

gofmt exits 0 whatever it lists; CI fails the step with a shell test of its output
(go-cmp: `diff -u <(echo -n) <(gofmt -d .)`; pkg/errors: `test -z "$(gofmt -s -l .)"`).
Read as no check at all, a change indented with spaces was VERIFIED while CI failed."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.discovery import Origin, discover
from assay.discovery.command_lines import checked_commands
from assay.plan import plan_repository
from tests.repos import write
from tests.test_go_cache import verify
from tests.test_workflow_actions import workflow

GO_MODULE = {"go.mod": "module example.com/p\n\ngo 1.19\n"}
FORMATTED = "package p\n\nfunc Double(x int) int {\n\treturn x * 2\n}\n"
SPACES = "package p\n\nfunc Double(x int) int {\n    return x * 2\n}\n"
TEST = (
    'package p\n\nimport "testing"\n\nfunc TestDouble(t *testing.T) {\n'
    '\tif Double(2) != 4 {\n\t\tt.Fatal("Double(2) != 4")\n\t}\n}\n'
)


@pytest.mark.parametrize(
    ("line", "listing"),
    [
        ('test -z "$(gofmt -l .)"', ["gofmt", "-l", "."]),
        ("diff -u <(echo -n) <(gofmt -d .)", ["gofmt", "-d", "."]),
        ('[ -z "$(gofmt -s -l . | grep -v vendor/)" ]', ["gofmt", "-s", "-l", "."]),
        ('test -z "$$(gofmt -s -l . | tee /dev/stderr)"', ["gofmt", "-s", "-l", "."]),
        # pkg/errors' Makefile: make's own `shell` function.
        ('test -z "$(shell gofmt -s -l . | grep -v vendor)"', ["gofmt", "-s", "-l", "."]),
    ],
)
def test_a_listing_a_shell_test_gates_on_is_a_command_of_the_line(
    line: str, listing: list[str]
) -> None:
    assert listing in checked_commands(line)


@pytest.mark.parametrize(
    ("step", "planned"),
    [
        ('run: test -z "$(gofmt -l .)"', "gofmt -l ."),
        ("run: diff -u <(echo -n) <(gofmt -d .)", "gofmt -d ."),
        ("run: gofmt -w .", None),  # rewrites the files: no check
        ('run: echo "$(go env GOPATH)"', None),
    ],
)
def test_ci_gating_on_gofmt_plans_it_as_the_go_lint(
    tmp_path: Path, step: str, planned: str | None
) -> None:
    write(tmp_path, {**GO_MODULE, "p.go": FORMATTED, ".github/workflows/ci.yml": workflow(step)})
    found = [" ".join(c.argv) for c in discover(tmp_path).candidates if c.origin is Origin.CI]
    assert found == ([planned] if planned else []), found


def test_a_linter_is_the_go_lint_and_gofmt_runs_beside_it(tmp_path: Path) -> None:
    steps = ("uses: golangci/golangci-lint-action@v6", 'run: test -z "$(gofmt -l .)"')
    write(tmp_path, {**GO_MODULE, "p.go": FORMATTED, ".github/workflows/ci.yml": workflow(*steps)})
    lints = [c.name for c in plan_repository(tmp_path).checks if c.kind.value == "lint"]
    assert lints == ["go-vet", "gofmt"]


@pytest.mark.parametrize(("source", "status"), [(FORMATTED, "VERIFIED"), (SPACES, "FAILED")])
def test_a_file_gofmt_would_change_fails_the_verdict(
    tmp_path: Path, source: str, status: str
) -> None:
    repo = write(
        tmp_path / "repo",
        {
            **GO_MODULE,
            "p.go": source,
            "p_test.go": TEST,
            ".github/workflows/ci.yml": workflow(
                "run: go test ./...", "run: diff -u <(echo -n) <(gofmt -d .)"
            ),
        },
    )
    report = verify(repo, tmp_path / "state")
    assert report["status"] == status, report["note"]
    [gofmt] = [c for c in report["checks"] if c["name"] == "gofmt"]
    assert gofmt["verdict"] == ("pass" if status == "VERIFIED" else "fail")
    assert gofmt["argv"][-2:] == ["-d", "."]
    if status == "FAILED":
        assert "p.go" in report["note"], report["note"]
        assert "-    return x * 2" in gofmt["stdout"]["text"]

"""Checks a GitHub workflow runs through an action (`uses:`), not a `run:` line.

pflag's CI lints with golangci/golangci-lint-action and tests with `go test`: read as a
project that states its Go checks and none of them lints, its `go vet` was dropped, and a
change that golangci-lint's govet rejects was VERIFIED."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from assay.discovery import Origin, discover
from assay.discovery.model import ProjectEnv
from assay.discovery.workflow_actions import action_run, govet_turned_off
from assay.plan import plan_repository
from tests.repos import write
from tests.test_go_cache import verify

ENV = ProjectEnv("python3", "PATH")
GO_MODULE = {"go.mod": "module example.com/p\n\ngo 1.19\n", "p.go": "package p\n"}
RUST_CRATE = {"Cargo.toml": '[package]\nname = "p"\nversion = "0.1.0"\n', "src/lib.rs": ""}


def workflow(*steps: str, defaults: str = "") -> str:
    """A workflow of one job; each step is YAML text, indented here."""
    body = "".join("      - " + step.replace("\n", "\n        ") + "\n" for step in steps)
    return (
        f"on: push\njobs:\n  lint:\n    runs-on: ubuntu-latest\n{defaults}"
        f"    steps:\n      - uses: actions/checkout@v4\n{body}"
    )


def ci_argv(root: Path) -> dict[str, str]:
    """`argv -> reason` of the CI's candidates."""
    return {" ".join(c.argv): c.reason for c in discover(root).candidates if c.origin is Origin.CI}


@pytest.mark.parametrize(
    ("files", "step", "argv"),
    [
        (
            RUST_CRATE,
            "uses: actions-rs/cargo@v1\nwith:\n  command: test\n  args: --all-features",
            "cargo test --all-features",
        ),
        (
            RUST_CRATE,
            "uses: actions-rs/clippy-check@v1\nwith:\n  args: -- -D warnings",
            "cargo clippy -- -D warnings",
        ),
        ({"pkg/__init__.py": ""}, "uses: astral-sh/ruff-action@v3", "ruff check ."),
        (
            {"pkg/__init__.py": ""},
            "uses: chartboost/ruff-action@v1\nwith:\n  src: pkg\n  args: format --check",
            "ruff format --check pkg",
        ),
        ({"pkg/__init__.py": ""}, "uses: psf/black@stable", "black --check --diff ."),
        (
            GO_MODULE,
            "uses: golangci/golangci-lint-action@v6\nwith:\n  args: --timeout=5m --build-tags=purego",
            "go vet -tags purego ./...",
        ),
    ],
)
def test_an_action_is_read_as_the_command_it_runs(
    tmp_path: Path, files: dict[str, str], step: str, argv: str
) -> None:
    write(tmp_path, {**files, ".github/workflows/ci.yml": workflow(step)})
    found = ci_argv(tmp_path)
    assert argv in found, found
    action = step.split()[1].split("@")[0]
    assert action in found[argv], found[argv]


def test_an_actions_check_is_cited_at_its_step_and_run_where_its_input_says(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        {
            **{f"api/{name}": text for name, text in GO_MODULE.items()},
            ".github/workflows/ci.yml": workflow(
                "uses: golangci/golangci-lint-action@v6\nwith:\n  working-directory: api",
                # A job's `defaults.run` is for run steps; an action has its own input.
                defaults="    defaults:\n      run:\n        working-directory: elsewhere\n",
            ),
        },
    )
    [vet] = [c for c in discover(tmp_path).candidates if c.origin is Origin.CI]
    assert (vet.argv, vet.cwd) == (("go", "vet", "./..."), "api")
    assert vet.source.file == ".github/workflows/ci.yml"
    assert vet.source.line == 10  # the `uses:` line
    assert "go vet, one of its default linters, stands in" in vet.reason


@pytest.mark.parametrize(
    "step",
    [
        "uses: actions/setup-go@v5",  # sets a toolchain up: no check
        "uses: actions-rs/cargo@v1\nwith:\n  command: test\n  use-cross: true",  # cross
        "uses: actions-rs/cargo@v1",  # no command
        "uses: [not, a, string]",
    ],
)
def test_other_actions_state_no_check(tmp_path: Path, step: str) -> None:
    write(tmp_path, {**RUST_CRATE, ".github/workflows/ci.yml": workflow(step)})
    assert ci_argv(tmp_path) == {}


@pytest.mark.parametrize(
    ("config", "off"),
    [
        ({"linters": {"disable": ["govet", "errcheck"]}}, True),
        ({"linters": {"disable-all": True, "enable": ["gofmt"]}}, True),
        ({"linters": {"default": "none", "enable": ["govet"]}}, False),
        ({"linters": {"enable": ["gofmt"]}}, False),
        ({"linters": ["govet"]}, False),
        (None, False),
    ],
)
def test_govet_is_off_only_where_the_configuration_says_so(config: object, off: bool) -> None:
    assert govet_turned_off(config) is off


def test_no_stand_in_when_golangci_lint_turns_govet_off() -> None:
    step = {"uses": "golangci/golangci-lint-action@v6"}
    assert action_run(step, ENV) is not None
    assert action_run(step, replace(ENV, golangci_runs_govet=False)) is None


def test_a_golangci_lint_run_line_keeps_go_vet_too(tmp_path: Path) -> None:
    """golang-lru installs golangci-lint with a script and runs it from the workspace, in
    each module's directory."""
    step = (
        "working-directory: ./arc\n"
        "run: $GITHUB_WORKSPACE/golangci-lint run --out-format=github-actions ./..."
    )
    write(tmp_path, {**GO_MODULE, "arc/go.mod": "module example.com/arc\n"})
    write(tmp_path, {".github/workflows/ci.yml": workflow("run: go test ./...", step)})
    [vet] = [
        c for c in discover(tmp_path).candidates if c.name == "go-vet" and c.origin is Origin.CI
    ]
    assert (vet.argv, vet.cwd) == (("go", "vet", "./..."), "./arc")
    assert vet.reason.startswith("CI job 'lint' (golangci-lint; go vet, one of its default")
    # Not a golangci-lint run: no stand-in.
    write(tmp_path, {".github/workflows/ci.yml": workflow("run: golangci-lint --version")})
    assert ci_argv(tmp_path) == {}


def pflag_like(root: Path, config: str | None = None) -> Path:
    files = {
        **GO_MODULE,
        ".github/workflows/ci.yml": workflow(
            "run: go test ./...", "uses: golangci/golangci-lint-action@v6"
        ),
    }
    if config is not None:
        files[".golangci.yml"] = config
    return write(root, files)


def test_go_vet_stays_where_ci_lints_with_golangci_lint(tmp_path: Path) -> None:
    names = {c.name for c in plan_repository(pflag_like(tmp_path / "a")).checks}
    assert names == {"go-vet", "go-test"}
    # govet turned off: the CI states its Go checks and none of them is go vet.
    off = pflag_like(tmp_path / "b", "linters:\n  disable:\n    - govet\n")
    assert {c.name for c in plan_repository(off).checks} == {"go-test"}


UNREACHABLE = 'package p\n\nfunc Answer() int {\n\treturn 42\n\tpanic("unreachable")\n}\n'  # vet's `unreachable` check, which `go test` does not run


@pytest.mark.parametrize(
    ("source", "status"), [("package p\n", "VERIFIED"), (UNREACHABLE, "FAILED")]
)
def test_a_finding_golangci_lints_govet_reports_fails_the_verdict(
    tmp_path: Path, source: str, status: str
) -> None:
    repo = pflag_like(tmp_path / "repo")
    report = _verify_p(repo, source, tmp_path / "state")
    assert report["status"] == status, report["note"]
    verdicts = {c["name"]: c["verdict"] for c in report["checks"]}
    assert verdicts == {"go-vet": "pass" if status == "VERIFIED" else "fail", "go-test": "pass"}


def test_a_module_that_states_no_checks_is_not_failed_by_vet(tmp_path: Path) -> None:
    """Nothing says the maintainers vet (go-cmp's tarball has no CI): a finding of vet's
    that `go test` does not check is theirs to accept."""
    report = _verify_p(write(tmp_path / "repo", GO_MODULE), UNREACHABLE, tmp_path / "state")
    assert report["status"] == "VERIFIED", report["note"]
    assert [c["name"] for c in report["checks"]] == ["go-test"]


def _verify_p(repo: Path, source: str, state: Path) -> dict[str, Any]:
    (repo / "p.go").write_text(source)
    (repo / "p.go").write_text(source)
    (repo / "p_test.go").write_text(
        'package p\n\nimport "testing"\n\nfunc TestNothing(t *testing.T) {}\n'
    )
    return verify(repo, state)


COMMANDER_SCRIPTS = {
    "check": "npm run check:type && npm run check:lint && npm run check:format",
    "check:format": "prettier --check .",
    "check:lint": "eslint .",
    "check:type": "tsc -p tsconfig.js.json",
    "fmt": "prettier --write . || true",
    "loop": "npm run loop",
    "test": "node --test",
}


@pytest.mark.parametrize(
    ("step", "kind"),
    [
        # commander.js: `check` says no kind; its body type-checks, lints and formats.
        ("run: npm run check", "typecheck"),
        ("run: npm run check:lint", "lint"),
        ("run: npm run loop", None),  # runs itself and nothing else
        ("run: npm run fmt", None),  # prettier --write: no check
    ],
)
def test_a_package_script_ci_runs_is_read_through_its_body(
    tmp_path: Path, step: str, kind: str | None
) -> None:
    import json

    write(
        tmp_path,
        {
            "package.json": json.dumps({"name": "p", "scripts": COMMANDER_SCRIPTS}),
            ".github/workflows/ci.yml": workflow(step),
        },
    )
    found = [c for c in discover(tmp_path).candidates if c.origin is Origin.CI]
    assert [c.kind.value for c in found] == ([kind] if kind else []), found
    if kind == "typecheck":
        assert "check:lint: eslint ." in found[0].reason
        planned = {c.name: c.argv for c in plan_repository(tmp_path).checks}
        assert planned["npm-typecheck"] == ("npm", "run", "check")


@pytest.mark.parametrize(("lib", "status"), [("", "VERIFIED"), ("const unused = 1;\n", "FAILED")])
def test_a_lint_ci_runs_through_a_package_script_fails_the_verdict(
    tmp_path: Path, lib: str, status: str
) -> None:
    """commander.js with an unused variable was VERIFIED: its CI's `npm run check` lints,
    and assay, reading the name alone, ran no lint."""
    import json

    scripts = {"check": "npm run check:lint", "check:lint": "eslint .", "test": "node --test"}
    repo = write(
        tmp_path / "repo",
        {
            "package.json": json.dumps(
                {"name": "p", "version": "1.0.0", "type": "module", "scripts": scripts}
            ),
            "eslint.config.mjs": 'export default [{ rules: { "no-unused-vars": "error" } }];\n',
            "lib.mjs": f"{lib}export const add = (a, b) => a + b;\n",
            "add.test.mjs": (
                'import { test } from "node:test";\nimport assert from "node:assert/strict";\n'
                'import { add } from "./lib.mjs";\n\ntest("adds", () => assert.equal(add(1, 2), 3));\n'
            ),
            ".github/workflows/ci.yml": workflow("run: npm test", "run: npm run check"),
        },
    )
    report = verify(repo, tmp_path / "state")
    assert report["status"] == status, report["note"]
    verdicts = {c["name"]: c["verdict"] for c in report["checks"]}
    assert verdicts["npm-lint"] == ("pass" if status == "VERIFIED" else "fail"), verdicts

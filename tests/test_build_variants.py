"""What a Go or Rust project's CI gates on beyond one default build and test run.

A test run CI repeats with other build tags or features is planned beside the default one
(`plan._another_build`): it compiles other files. xxhash's CI runs `go test` and then
`go test -tags purego`; a bug only in the purego file failed CI, and assay, which kept the
first run alone as the cheaper of two, said VERIFIED. And `cargo fmt --check` is a lint."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.plan import plan_repository
from assay.verdict import Kind
from tests.repos import workflow, write
from tests.test_go_cache import verify


def module(root: Path, purego: str) -> Path:
    return write(
        root,
        {
            "go.mod": "module example.com/calc\n\ngo 1.19\n",
            "double.go": "//go:build !purego\n\npackage calc\n\nfunc Double(x int) int { return x * 2 }\n",
            "double_purego.go": f"//go:build purego\n\npackage calc\n\nfunc Double(x int) int {{ return {purego} }}\n",
            "double_test.go": (
                'package calc\n\nimport "testing"\n\n'
                'func TestDouble(t *testing.T) {\n\tif Double(2) != 4 {\n\t\tt.Fatal("Double(2) != 4")\n\t}\n}\n'
            ),
            ".github/workflows/ci.yml": workflow("go test ./...", "go test -tags purego ./..."),
        },
    )


@pytest.mark.parametrize(("purego", "status"), [("x + x", "VERIFIED"), ("x * 3", "FAILED")])
def test_a_test_run_with_other_build_tags_is_run_too(
    tmp_path: Path, purego: str, status: str
) -> None:
    report = verify(module(tmp_path / "repo", purego), tmp_path / "state")
    assert report["status"] == status, report["note"]
    tests = {c["name"]: c["verdict"] for c in report["checks"] if c["kind"] == "test"}
    assert tests == {
        "go-test": "pass",
        "go-test-purego": "pass" if status == "VERIFIED" else "fail",
    }, tests


@pytest.mark.parametrize(
    ("steps", "planned"),
    [
        # fnv and shlex: `cargo test`, then again without the default features.
        (
            ("cargo test", "cargo test --no-default-features"),
            {
                "cargo-test": "cargo test",
                "cargo-test-no-default-features": "cargo test --no-default-features",
            },
        ),
        # One set of features, however spelt; Cargo.toml's own `cargo test` is no variant
        # the project runs.
        (
            ("cargo test --features a,b", "cargo test -F b --features a"),
            {"cargo-test": "cargo test --features a,b"},
        ),
        # The same run in two jobs (stable and beta) is one check.
        (("go test ./...", "go test ./..."), {"go-test": "go test ./..."}),
        (
            ("go test -race ./...", "go test -tags=x,y ./..."),
            {"go-test": "go test -race ./...", "go-test-x-y": "go test -tags=x,y ./..."},
        ),
    ],
)
def test_each_build_variant_ci_tests_is_one_check(
    tmp_path: Path, steps: tuple[str, ...], planned: dict[str, str]
) -> None:
    manifest = (
        {"Cargo.toml": '[package]\nname = "p"\nversion = "0.1.0"\n', "src/lib.rs": ""}
        if steps[0].startswith("cargo")
        else {"go.mod": "module example.com/p\n\ngo 1.19\n", "p.go": "package p\n"}
    )
    write(tmp_path, {**manifest, ".github/workflows/ci.yml": workflow(*steps)})
    tests = [c for c in plan_repository(tmp_path).checks if c.kind is Kind.TEST]
    assert {c.name: " ".join(c.argv) for c in tests} == planned


def test_a_build_for_another_target_is_left_out(tmp_path: Path) -> None:
    """scopeguard's CI adds thumbv6m-none-eabi with rustup and builds for it; assay has no
    such standard library, and the build failed "can't find crate for `core`", skipping
    every later check."""
    write(
        tmp_path,
        {
            "Cargo.toml": '[package]\nname = "p"\nversion = "0.1.0"\n',
            "src/lib.rs": "",
            ".github/workflows/ci.yml": workflow(
                "cargo build",
                "cargo build --no-default-features --target thumbv6m-none-eabi",
                "cargo test --target=wasm32-unknown-unknown --all-features",
                "cargo test",
            ),
        },
    )
    p = plan_repository(tmp_path)
    assert {c.name: " ".join(c.argv) for c in p.checks} == {
        "cargo-build": "cargo build",
        "cargo-test": "cargo test",
    }
    why = {d.what: d.reason for d in p.dropped}
    assert why["cargo build --no-default-features --target thumbv6m-none-eabi"] == (
        "builds for another target (thumbv6m-none-eabi), whose standard library is not installed"
    )


FORMATTED = "pub fn double(x: u32) -> u32 {\n    x * 2\n}\n"
UNFORMATTED = "pub fn double(x:u32)->u32{x*2}\n"
RUST_TEST = (
    "\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn doubles() {\n"
    "        assert_eq!(super::double(2), 4);\n    }\n}\n"
)


@pytest.mark.parametrize(("source", "status"), [(FORMATTED, "VERIFIED"), (UNFORMATTED, "FAILED")])
def test_cargo_fmt_check_in_ci_is_the_crates_lint(tmp_path: Path, source: str, status: str) -> None:
    """fnv and strsim gate on `cargo fmt --check` alone: a formatting change failed their
    CI while assay, which did not read the step, said VERIFIED."""
    repo = write(
        tmp_path / "repo",
        {
            "Cargo.toml": '[package]\nname = "p"\nversion = "0.1.0"\nedition = "2021"\n',
            "src/lib.rs": source + RUST_TEST,
            ".github/workflows/ci.yml": workflow("cargo build", "cargo test", "cargo fmt --check"),
        },
    )
    report = verify(repo, tmp_path / "state")
    assert report["status"] == status, report["note"]
    [lint] = [c for c in report["checks"] if c["kind"] == "lint"]
    assert lint["argv"][1:3] == ["fmt", "--check"]
    if status == "FAILED":  # where, from the repository: the workspace's path means nothing
        assert report["note"] == "cargo-lint failed (exited 1): Diff in src/lib.rs:1:.", report[
            "note"
        ]

"""A crate whose CI builds with `RUSTFLAGS=-Dwarnings`, written before Rust 1.80, is judged
by its code, not by the lint that release added for cfg names cargo was not told of.

semver 1.0.14 (its build.rs sets `no_alloc_crate` and others, as crates did before
`cargo::rustc-check-cfg`) failed on its pristine tree, 26 errors of `unexpected_cfgs`.
Any other warning still fails the check, as in the crate's CI."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from tests.cli import assay, assay_env, no_traceback, verified_json
from tests.repos import write

CI = "on: push\nenv:\n  RUSTFLAGS: -Dwarnings\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
CI += "    steps:\n      - uses: actions/checkout@v4\n      - run: cargo test\n"
BUILD = 'fn main() {\n    println!("cargo:rustc-cfg=fast_double");\n}\n'
LIB = (
    "#[cfg(fast_double)]\npub fn double(x: u32) -> u32 {\n    x << 1\n}\n\n"
    "#[cfg(not(fast_double))]\npub fn double(x: u32) -> u32 {\n    x * 2\n}\n\n"
    "#[test]\nfn doubles() {\n    assert_eq!(double(2), 4);\n}\n"
)
UNUSED = LIB.replace("    x << 1\n", "    let spare = 1;\n    x << 1\n")


def crate(root: Path, lib: str) -> Path:
    return write(
        root,
        {
            "Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2018"\n',
            "build.rs": BUILD,
            "src/lib.rs": lib,
            ".github/workflows/ci.yml": CI,
        },
    )


def verify(repo: Path, state: Path) -> dict[str, Any]:
    assert shutil.which("cargo"), "cargo is not installed: the Rust toolchain .ci/run provides"
    return verified_json(repo, state)


def test_a_cfg_its_build_script_sets_undeclared_is_no_error(tmp_path: Path) -> None:
    report = verify(crate(tmp_path / "calc", LIB), tmp_path / "state")
    assert report["status"] == "VERIFIED", report["note"] or report["output"]
    (check,) = [c for c in report["checks"] if c["kind"] == "test"]
    assert check["check"]["env"]["RUSTFLAGS"] == "-Dwarnings -A unexpected_cfgs", check["check"]


def test_any_other_warning_still_fails_under_its_ci_flags(tmp_path: Path) -> None:
    report = verify(crate(tmp_path / "calc", UNUSED), tmp_path / "state")
    assert report["status"] == "FAILED", report["output"]
    assert "spare" in report["note"], report["note"]


def test_a_crate_that_declares_its_cfgs_keeps_the_lint(tmp_path: Path) -> None:
    repo = crate(tmp_path / "calc", LIB)
    (repo / "build.rs").write_text(
        BUILD.replace(
            "    println!(", '    println!("cargo::rustc-check-cfg=cfg(other)");\n    println!(', 1
        )
    )
    report = verify(repo, tmp_path / "state")
    assert report["status"] == "FAILED", report["output"]
    assert "fast_double" in report["note"], report["note"]


def test_a_build_script_that_is_a_fifo_is_not_waited_on(tmp_path: Path) -> None:
    """The tree's files are read as discovery reads them: a FIFO named build.rs, which an
    open would wait on for ever, is taken for a declaration (the flags stay)."""
    repo = crate(tmp_path / "calc", LIB)
    (repo / "build.rs").unlink()
    os.mkfifo(repo / "build.rs")
    done = assay("plan", "--json", str(repo), env=assay_env(), timeout=60)
    no_traceback(done)
    (check,) = [c for c in json.loads(done.stdout)["checks"] if c["kind"] == "test"]
    assert check["env"]["RUSTFLAGS"] == "-Dwarnings", check

"""Rust: cargo build, cargo clippy, cargo test."""

from __future__ import annotations

from pathlib import Path

from assay.evidence import Check
from assay.languages import LanguageAdapter
from assay.toolchains import Language
from assay.verdict import Kind


def checks(root: Path) -> list[Check]:
    source = "default:rust"
    return [
        # `build`, not `check`: the test step reuses the artifacts, so it costs nothing extra.
        Check(
            "cargo-build",
            Kind.BUILD,
            ("cargo", "build", "--all-targets"),
            tool="cargo",
            source=source,
            reason="the crate and its tests must compile",
        ),
        Check(
            "cargo-clippy",
            Kind.LINT,
            ("cargo", "clippy", "--all-targets", "--", "-D", "warnings"),
            tool="cargo",
            source=source,
            reason="clippy is Rust's linter; warnings fail the check",
        ),
        Check(
            "cargo-test",
            Kind.TEST,
            ("cargo", "test"),
            tool="cargo",
            source=source,
            reason="cargo test runs unit, integration and doc tests",
        ),
    ]


ADAPTER = LanguageAdapter(language=Language.RUST, markers=("Cargo.toml",), checks=checks)

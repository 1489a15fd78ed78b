"""Rust: cargo (check, build, test by subcommand) and rustc."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from assay.evidence import Check
from assay.tools.instrumented import Instrumented, Request
from assay.tools.spec import (
    Command,
    Ecosystem,
    EcosystemSpec,
    Manifest,
    Match,
    Native,
    TamperMarkers,
    ToolSpec,
    after_subcommand,
    install_step,
)
from assay.verdict import Kind

_HINT = "install Rust (https://rustup.rs, or Debian: `apt-get install {}`)"

#: `cargo <subcommand>` -> the kind it answers and the check's name.
SUBCOMMANDS: Mapping[str, tuple[Kind, str]] = {
    "test": (Kind.TEST, "cargo-test"),
    "check": (Kind.BUILD, "cargo-check"),
    "build": (Kind.BUILD, "cargo-build"),
    "nextest": (Kind.TEST, "cargo-test"),
}


def _cargo(request: Request) -> Instrumented:
    argv = request.argv
    subcommand = argv[1] if len(argv) > 1 else ""
    if subcommand in ("build", "check", "test", "clippy") and not request.has("--message-format"):
        argv = after_subcommand(argv, subcommand, "--message-format=json")
    return request.runs(argv)


def _subcommand(rest: list[str]) -> Match | None:
    sub = SUBCOMMANDS.get(rest[0]) if rest else None
    return Match(sub[0], tuple(rest[1:]), name=sub[1]) if sub else None


def _lints(rest: list[str]) -> Match | None:
    """`cargo clippy`, and `cargo fmt --check` (without `--check` it rewrites the files)."""
    linting = rest[:1] == ["clippy"] or (rest[:1] == ["fmt"] and "--check" in rest)
    return Match(Kind.LINT, tuple(rest[1:])) if linting else None


def crate_natives(
    path: str, text: str, root_names: frozenset[str]
) -> tuple[list[Native], list[str]]:
    """`cargo check` (build) and `cargo test` for a Cargo.toml."""
    import tomllib  # here: only a repository with a Cargo.toml needs the parser

    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError) as exc:
        return [], [f"{path}: not valid TOML: {exc}"]
    workspace = ("--workspace",) if isinstance(data.get("workspace"), dict) else ()
    features = _test_features(data, qualified=bool(workspace))
    selection = (*workspace, "--features", ",".join(features)) if features else workspace
    why = f" with the features its test targets require ({', '.join(features)})" if features else ""
    return [
        Native(
            Kind.BUILD,
            ("cargo", "check", *selection),
            "cargo",
            f"Rust crate: cargo check type-checks without producing binaries{why}",
            name="cargo-check",
        ),
        Native(
            Kind.TEST,
            ("cargo", "test", *selection),
            "cargo",
            f"Rust crate: cargo test{why}",
            name="cargo-test",
        ),
    ], []


def _test_features(data: Mapping[str, object], *, qualified: bool) -> list[str]:
    """The features the package's `[[test]]` targets name in `required-features`, in order.

    Cargo silently skips a test target whose required features are off, so a plain
    `cargo test` of such a crate runs none of those tests and a wrong result passes.
    Only the tests' own requirements are turned on, not `--all-features`: a crate's other
    features may need a nightly compiler or exclude one another. In a workspace the
    features are named `package/feature`, which cargo accepts whichever packages are selected.
    """
    package = data.get("package")
    targets = data.get("test")
    if not isinstance(package, dict) or not isinstance(targets, list):
        return []
    name = package.get("name")
    features: list[str] = []
    for target in targets:
        required = target.get("required-features") if isinstance(target, dict) else None
        for feature in required if isinstance(required, list) else []:
            if not isinstance(feature, str) or not _FEATURE.fullmatch(feature):
                continue
            spelled = f"{name}/{feature}" if qualified and isinstance(name, str) else feature
            if spelled not in features:
                features.append(spelled)
    return features


#: A feature name as cargo accepts it (and `dep/feature`): nothing else reaches an argv.
_FEATURE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_+.-]*(?:/[A-Za-z0-9_][A-Za-z0-9_+.-]*)?")


def _cargo_home(deps: Path) -> Mapping[str, str]:
    return {"CARGO_HOME": str(deps / "cargo")}


def install_steps(root: Path) -> list[Check]:
    if not (root / "Cargo.toml").is_file():
        return []
    return [
        install_step("rust", ("cargo", "fetch"), "Cargo.toml", "crate dependencies", tool="cargo")
    ]


CARGO = ToolSpec(
    name="cargo",
    ecosystem=Ecosystem.RUST,
    binaries=("cargo",),
    install_hint=_HINT.format("cargo"),
    commands=(Command(("cargo",), match=_subcommand),),
    instrument=_cargo,
    parser=("rust", "parse_cargo"),
    canary=("rust", "plant_cargo_test"),
    dependency_env=_cargo_home,
    # `runner` runs the test binaries, `rustc-wrapper` the compiler, a toolchain file picks
    # which cargo answers. build.rs is not here: it is the crate's code, and the change's
    # own is the one to judge (what it writes into protected files is put back before tests).
    config_files=(
        "**/.cargo/config",
        "**/.cargo/config.toml",
        "rust-toolchain",
        "rust-toolchain.toml",
        # What clippy and rustfmt check.
        "**/clippy.toml",
        "**/.clippy.toml",
        "**/rustfmt.toml",
        "**/.rustfmt.toml",
    ),
)
RUSTC = ToolSpec(
    name="rustc",
    ecosystem=Ecosystem.RUST,
    binaries=("rustc",),
    install_hint=_HINT.format("rustc"),
    parser=("rust", "parse_rustc"),
)

ECOSYSTEM = EcosystemSpec(
    ecosystem=Ecosystem.RUST,
    label="rust",
    tools=(CARGO, RUSTC),
    manifests=(Manifest(("Cargo.toml",), crate_natives),),
    test_files=("tests/**", "**/tests/**", "benches/**"),
    config_sections={
        "Cargo.toml": (
            "test",
            "dev-dependencies",
            "profile.test",
            "lib.test",
            "lib.harness",
            "lib.doctest",
            "package.autotests",
            "workspace.members",
            "workspace.default-members",
            "workspace.exclude",
            # What the tests' dependencies resolve to: a patched-in copy can assert nothing.
            "patch",
            "replace",
            # What clippy checks (`[lints.clippy]`, inherited from the workspace's).
            "lints",
            "workspace.lints",
        )
    },
    markers=TamperMarkers(
        test_names=(
            re.compile(r"#\[test\]\s*(?:#\[[^\]]*\]\s*)*(?:pub\s+)?(?:async\s+)?fn\s+(\w+)"),
        ),
        skip=r"#\[ignore\b",
        trivial_assertions=r"\bassert!\s*\(\s*true\s*\)|\bassert_eq!\s*\(\s*(?P<same>\w+)\s*,\s*(?P=same)\s*\)",
        assertions=r"\bassert(?:_eq|_ne)?!\s*\(",
        in_file=r"#\[cfg\(test\)\]|#\[test\]",
        source_suffixes=(".rs",),
    ),
    install=install_steps,
    # `cargo clippy` and `cargo fmt --check`: known lints whose output is read generically.
    generic_commands=(Command(("cargo",), match=_lints),),
    steering_env=("RUSTUP", "CARGO", "RUSTC"),
    home_dirs=(".cargo/bin", ".rustup"),
)

"""Detector 6: ecosystem manifests mapped to native commands (Cargo.toml, go.mod, tsconfig.json).

Also the config files of node tools (eslint, jest, vitest): a configured tool
is a native command even when no package.json script names it.
"""

from __future__ import annotations

import tomllib

from assay.discovery.files import RepoFiles
from assay.discovery.model import (
    Candidate,
    DetectorReport,
    Ecosystem,
    Origin,
    ProjectEnv,
    Source,
    report,
)
from assay.discovery.text import json_error, load_jsonc
from assay.verdict import Kind

NAME = "manifests"

ESLINT_CONFIGS = (
    "eslint.config.js",
    "eslint.config.mjs",
    "eslint.config.cjs",
    "eslint.config.ts",
    ".eslintrc.js",
    ".eslintrc.cjs",
    ".eslintrc.json",
    ".eslintrc.yml",
    ".eslintrc.yaml",
    ".eslintrc",
)
JEST_CONFIGS = (
    "jest.config.js",
    "jest.config.ts",
    "jest.config.mjs",
    "jest.config.cjs",
    "jest.config.json",
)
VITEST_CONFIGS = ("vitest.config.ts", "vitest.config.js", "vitest.config.mts", "vitest.config.mjs")


_REFERENCES_NOTE = (
    "tsconfig.json uses project references; `tsc --noEmit` checks the root project only"
)


def _candidate(
    kind: Kind,
    argv: tuple[str, ...],
    tool: str,
    ecosystem: Ecosystem,
    path: str,
    why: str,
    *,
    redundant_with: frozenset[str] = frozenset(),
    notes: tuple[str, ...] = (),
) -> Candidate:
    return Candidate(
        kind=kind,
        argv=argv,
        tool=tool,
        ecosystem=ecosystem,
        origin=Origin.MANIFEST,
        source=Source(path, 1),
        reason=why,
        redundant_with=redundant_with,
        notes=notes,
    )


def cargo_candidates(text: str) -> tuple[list[Candidate], list[str]]:
    """`cargo check` (build) and `cargo test` for a Cargo.toml. Pure."""
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError) as exc:
        return [], [f"Cargo.toml: not valid TOML: {exc}"]
    workspace = ("--workspace",) if isinstance(data.get("workspace"), dict) else ()
    return [
        _candidate(
            Kind.BUILD,
            ("cargo", "check", *workspace),
            "cargo-check",
            Ecosystem.RUST,
            "Cargo.toml",
            "Rust crate: cargo check type-checks without producing binaries",
        ),
        _candidate(
            Kind.TEST,
            ("cargo", "test", *workspace),
            "cargo-test",
            Ecosystem.RUST,
            "Cargo.toml",
            "Rust crate: cargo test",
        ),
    ], []


def go_candidates(text: str) -> tuple[list[Candidate], list[str]]:
    """`go build`, `go vet` and `go test` over every package of a module. Pure."""
    if not any(line.strip().startswith("module") for line in text.splitlines()):
        return [], ["go.mod: no `module` directive"]
    why = "Go module (go.mod)"
    return [
        # go vet compiles every package, so a planned vet makes the build redundant.
        _candidate(
            Kind.BUILD,
            ("go", "build", "./..."),
            "go-build",
            Ecosystem.GO,
            "go.mod",
            why,
            redundant_with=frozenset({"go-vet"}),
        ),
        _candidate(Kind.LINT, ("go", "vet", "./..."), "go-vet", Ecosystem.GO, "go.mod", why),
        _candidate(Kind.TEST, ("go", "test", "./..."), "go-test", Ecosystem.GO, "go.mod", why),
    ], []


def tsconfig_candidate(text: str, env: ProjectEnv) -> tuple[list[Candidate], list[str]]:
    """`tsc --noEmit`: the cheapest full type-check of a TypeScript project. Pure."""
    errors: list[str] = []
    notes: tuple[str, ...] = ()
    try:
        data = load_jsonc(text)
        if isinstance(data, dict) and data.get("references"):
            notes = (_REFERENCES_NOTE,)
    except (ValueError, RecursionError) as exc:
        # tsc reports a broken tsconfig itself, with positions; plan it anyway.
        errors.append(json_error("tsconfig.json", exc))
    candidate = _candidate(
        Kind.TYPECHECK,
        (env.node_tool("tsc"), "--noEmit"),
        "tsc",
        Ecosystem.NODE,
        "tsconfig.json",
        "TypeScript project: tsc --noEmit type-checks without emitting",
        notes=notes,
    )
    return [candidate], errors


def detect(files: RepoFiles, env: ProjectEnv) -> DetectorReport:
    parsers = {
        "Cargo.toml": cargo_candidates,
        "go.mod": go_candidates,
        "tsconfig.json": lambda text: tsconfig_candidate(text, env),
    }
    texts, errors = files.read_texts(parsers)
    found: list[Candidate] = []
    for path, text in texts.items():
        more, problems = parsers[path](text)
        found += more
        errors += problems
    found += _node_tool_configs(files, env)
    return report(NAME, found, errors=errors)


def _node_tool_configs(files: RepoFiles, env: ProjectEnv) -> list[Candidate]:
    root = set(files.list_dir("."))
    found = []
    for configs, kind, tool, args in (
        (ESLINT_CONFIGS, Kind.LINT, "eslint", (".",)),
        (JEST_CONFIGS, Kind.TEST, "jest", ("--ci",)),
        (VITEST_CONFIGS, Kind.TEST, "vitest", ("run",)),
    ):
        path = next((c for c in configs if c in root), None)
        if path is not None:
            found.append(
                _candidate(
                    kind,
                    (env.node_tool(tool), *args),
                    tool,
                    Ecosystem.NODE,
                    path,
                    f"{tool} configured in {path}",
                )
            )
    return found

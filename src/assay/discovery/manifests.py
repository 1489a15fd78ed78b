"""Detector 6: ecosystem manifests mapped to native commands (Cargo.toml, go.mod, pom.xml,
tsconfig.json). Which root files imply which commands is declared with each ecosystem
(`EcosystemSpec.manifests` in `assay.tools`); tsconfig.json is read here.

Also the config files of node tools (eslint, jest, vitest): a configured tool
is a native command even when no package.json script names it.
"""

from __future__ import annotations

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
from assay.tools import ECOSYSTEMS, ROOT_CONFIGURED
from assay.tools.spec import Native
from assay.verdict import Kind

NAME = "manifests"

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
    name: str | None = None,
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
        name=name,
    )


def native_candidates(ecosystem: Ecosystem, path: str, natives: list[Native]) -> list[Candidate]:
    """The commands a declared manifest implies, as candidates found in `path`. Pure."""
    return [
        _candidate(
            n.kind,
            n.argv,
            n.tool,
            ecosystem,
            path,
            n.reason,
            redundant_with=n.redundant_with,
            name=n.name,
        )
        for n in natives
    ]


def _declared(ecosystem: Ecosystem, manifest: str, text: str) -> tuple[list[Candidate], list[str]]:
    """One declared manifest's candidates, for a manifest read alone (no root listing)."""
    spec = next(
        m
        for e in ECOSYSTEMS
        if e.ecosystem is ecosystem
        for m in e.manifests
        if manifest in m.files
    )
    natives, errors = spec.read(manifest, text, frozenset({manifest}))
    return native_candidates(ecosystem, manifest, natives), errors


def cargo_candidates(text: str) -> tuple[list[Candidate], list[str]]:
    """`cargo check` (build) and `cargo test` for a Cargo.toml (declared in `assay.tools.rust`)."""
    return _declared(Ecosystem.RUST, "Cargo.toml", text)


def go_candidates(text: str) -> tuple[list[Candidate], list[str]]:
    """`go build`, `go vet` and `go test` over a module (declared in `assay.tools.go`)."""
    return _declared(Ecosystem.GO, "go.mod", text)


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
    root = frozenset(files.list_dir("."))
    found: list[Candidate] = []
    errors: list[str] = []
    # Every ecosystem's declared manifests: the first of each present at the root is read.
    for ecosystem in ECOSYSTEMS:
        for manifest in ecosystem.manifests:
            path = next((name for name in manifest.files if name in root), None)
            if path is None:
                continue
            texts, problems = files.read_texts([path])
            errors += problems
            if path in texts:
                natives, more = manifest.read(path, texts[path], root)
                found += native_candidates(ecosystem.ecosystem, path, natives)
                errors += more
    texts, problems = files.read_texts(["tsconfig.json"])
    errors += problems
    if "tsconfig.json" in texts:
        more_found, more = tsconfig_candidate(texts["tsconfig.json"], env)
        found += more_found
        errors += more
    found += _node_tool_configs(files, env)
    return report(NAME, found, errors=errors)


def _node_tool_configs(files: RepoFiles, env: ProjectEnv) -> list[Candidate]:
    """Tools the project configures at its root (`jest.config.js`), run as it configures them."""
    root = set(files.list_dir("."))
    found = []
    for spec, config in ROOT_CONFIGURED:
        path = next((c for c in config.files if c in root), None)
        if path is not None:
            found.append(
                _candidate(
                    config.kind,
                    (env.node_tool(spec.name), *config.args),
                    spec.name,
                    spec.ecosystem,
                    path,
                    f"{spec.name} configured in {path}",
                )
            )
    return found

"""Detector 2: package.json scripts, the package manager, workspaces and npm lifecycle hooks."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from assay.discovery.command_lines import masks_failure, recognise_line
from assay.discovery.files import RepoFiles, UnreadableFile
from assay.discovery.model import (
    Candidate,
    DetectorReport,
    Dropped,
    Ecosystem,
    Origin,
    ProjectEnv,
    Source,
    report,
)
from assay.discovery.text import json_error, line_of, load_yaml
from assay.verdict import Kind

NAME = "package.json"

#: Script names per kind, preferred first (the cost is the position).
SCRIPTS: dict[Kind, tuple[str, ...]] = {
    Kind.BUILD: ("build",),
    # fastq's is `typescript` (tsc over its .d.ts tests): a type error there was VERIFIED.
    Kind.TYPECHECK: (
        *("typecheck", "type-check", "tsc", "types", "check-types", "check:types"),
        *("types:check", "typescript", "test:types", "test-types", "lint:types"),
    ),
    Kind.LINT: ("lint",),
    Kind.TEST: ("test",),
}

#: Marker in `Candidate.runs`: the test script's `pretest` hook runs the build script.
RUNS_BUILD_SCRIPT = "npm-script:build"

#: Most workspace packages read; beyond this the rest are listed but not opened.
MAX_WORKSPACE_PACKAGES = 500

# `npm init` writes this placeholder; it always fails and tests nothing.
_PLACEHOLDER_TEST = re.compile(r"no test specified.*exit 1", re.DOTALL)
_PLAIN_TSC = re.compile(r"^\s*tsc(\s+(-p|--project|-b|--build)(\s+[\w./-]+)?)?\s*$")


@dataclass(frozen=True, slots=True)
class Manifest:
    """The parts of one package.json discovery uses."""

    path: str
    text: str
    scripts: dict[str, str]
    workspaces: tuple[str, ...]


def parse_manifest(text: str, path: str) -> tuple[Manifest | None, list[str], list[Dropped]]:
    """Parse package.json text: (manifest, errors, dropped entries). Pure."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return None, [json_error(path, exc)], []
    if not isinstance(data, dict):
        return None, [f"{path}: expected a JSON object at the top level"], []
    dropped: list[Dropped] = []
    raw_scripts = data.get("scripts", {})
    scripts: dict[str, str] = {}
    if isinstance(raw_scripts, dict):
        for name, body in raw_scripts.items():
            if isinstance(body, str):
                scripts[name] = body
            else:
                line = line_of(text, rf'"{re.escape(name)}"\s*:')
                dropped.append(Dropped(f"script {name!r}", Source(path, line), "not a string"))
    elif raw_scripts is not None:
        return None, [f"{path}: 'scripts' must be an object"], []
    return Manifest(path, text, scripts, _workspace_patterns(data.get("workspaces"))), [], dropped


def _workspace_patterns(value: Any) -> tuple[str, ...]:
    if isinstance(value, dict):
        value = value.get("packages")
    if isinstance(value, list):
        return tuple(p for p in value if isinstance(p, str))
    return ()


def script_candidates(
    manifest: Manifest, manager: str, *, cwd: str = "."
) -> tuple[list[Candidate], list[Dropped], list[str]]:
    """Candidates for the check scripts of one package.json. Pure."""
    found: list[Candidate] = []
    dropped: list[Dropped] = []
    notes: list[str] = []
    scripts_at = manifest.text.find('"scripts"')
    for kind, names in SCRIPTS.items():
        for cost, name in enumerate(names):
            body = manifest.scripts.get(name)
            if body is None:
                continue
            source = Source(
                manifest.path,
                line_of(manifest.text, rf'"{re.escape(name)}"\s*:', after=max(scripts_at, 0)),
            )
            if masks_failure(body):
                dropped.append(
                    Dropped(
                        f"script {name!r}",
                        source,
                        f"it ignores failures ({body[:80]!r}): it would exit 0 whatever the code does",
                    )
                )
                continue
            if kind is Kind.TEST and _PLACEHOLDER_TEST.search(body):
                dropped.append(
                    Dropped(
                        f"script {name!r}", source, "the `npm init` placeholder; it tests nothing"
                    )
                )
                continue
            runs = frozenset(r.name for r in recognise_line(body))
            redundant: frozenset[str] = frozenset()
            extra_notes: list[str] = []
            if kind is Kind.BUILD and _PLAIN_TSC.match(body):
                redundant = frozenset({"tsc"})
            pre = manifest.scripts.get(f"pre{name}")
            if pre is not None:
                extra_notes.append(f"`pre{name}` hook runs first: {pre}")
                if kind is Kind.TEST and _runs_build(pre):
                    runs |= {RUNS_BUILD_SCRIPT}
                notes.append(
                    f"{manifest.path}: `{name}` has a `pre{name}` hook ({pre}); it runs with it"
                )
            found.append(
                Candidate(
                    kind=kind,
                    argv=run_script(manager, name),
                    tool="npm-test",
                    ecosystem=Ecosystem.NODE,
                    origin=Origin.PACKAGE_JSON,
                    source=source,
                    reason=f"script {name!r}: {body}",
                    cwd=cwd,
                    cost=cost,
                    runs=runs,
                    redundant_with=redundant
                    | ({RUNS_BUILD_SCRIPT} if kind is Kind.BUILD else frozenset()),
                    notes=tuple(extra_notes),
                )
            )
    return found, dropped, notes


def _runs_build(body: str) -> bool:
    return bool(re.search(r"\b(run\s+build|tsc\b|build\b)", body))


def run_script(manager: str, script: str) -> tuple[str, ...]:
    return (manager, "run", script)


def workspace_command(manager: str, script: str, yarn_berry: bool) -> tuple[str, ...]:
    """One command that runs `script` in every workspace package that has it."""
    if manager == "pnpm":
        return ("pnpm", "-r", "--if-present", "run", script)
    if manager == "yarn":
        return (
            ("yarn", "workspaces", "foreach", "-A", "run", script)
            if yarn_berry
            else ("yarn", "workspaces", "run", script)
        )
    if manager == "bun":
        return ("bun", "run", "--filter", "*", script)
    return ("npm", "run", script, "--workspaces", "--if-present")


def detect(files: RepoFiles, env: ProjectEnv) -> DetectorReport:
    try:
        text = files.read_text("package.json")
    except UnreadableFile as exc:
        return report(NAME, errors=[str(exc)])
    if text is None:
        return report(NAME)
    manifest, errors, dropped = parse_manifest(text, "package.json")
    if manifest is None:
        return report(NAME, errors=errors)
    found, more_dropped, notes = script_candidates(manifest, env.package_manager)
    dropped += more_dropped
    notes.append(f"package manager: {env.package_manager} (from {env.package_manager_source})")
    patterns = list(manifest.workspaces) + _pnpm_workspaces(files, errors)
    if patterns:
        packages = workspace_packages(files, patterns)
        notes.append(f"workspaces: {len(packages)} package(s) ({_preview(packages)})")
        found += _workspace_candidates(files, env, packages, found, errors, dropped)
    return report(NAME, found, dropped=dropped, errors=errors, notes=notes)


def _preview(names: list[str], limit: int = 10) -> str:
    return ", ".join(names[:limit]) + (" ..." if len(names) > limit else "")


def _pnpm_workspaces(files: RepoFiles, errors: list[str]) -> list[str]:
    try:
        text = files.read_text("pnpm-workspace.yaml")
    except UnreadableFile as exc:
        errors.append(str(exc))
        return []
    # Deeply nested YAML raises RecursionError, not YAMLError; load_yaml turns both into
    # a message, so a bad workspace file cannot cost the root package's scripts.
    data, error = load_yaml(text or "", "pnpm-workspace.yaml")
    if error:
        errors.append(error)
        return []
    packages = data.get("packages") if isinstance(data, dict) else None
    return [p for p in packages if isinstance(p, str)] if isinstance(packages, list) else []


def workspace_packages(files: RepoFiles, patterns: list[str]) -> list[str]:
    """Package directories matching workspace globs, by listing directories (never a walk)."""
    found: list[str] = []
    for pattern in patterns:
        if pattern.startswith("!"):
            continue
        pattern = pattern.strip("/").removeprefix("./")
        if "*" not in pattern:
            candidates = [pattern]
        else:
            base, _, tail = pattern.partition("*")
            base = base.rstrip("/") or "."
            candidates = [
                f"{base}/{name}" if base != "." else name for name in files.list_dir(base)
            ]
            if tail.startswith("*"):  # `packages/**`: one more level, no deeper
                candidates += [
                    f"{c}/{name}" for c in list(candidates) for name in files.list_dir(c)
                ]
        for directory in candidates:
            if (
                directory not in found
                and "node_modules" not in directory.split("/")
                and files.is_file(f"{directory}/package.json")
            ):
                found.append(directory)
        if len(found) >= MAX_WORKSPACE_PACKAGES:
            break
    return sorted(found[:MAX_WORKSPACE_PACKAGES])


def _workspace_candidates(
    files: RepoFiles,
    env: ProjectEnv,
    packages: list[str],
    root_found: list[Candidate],
    errors: list[str],
    dropped: list[Dropped],
) -> list[Candidate]:
    """For kinds the root does not script: one workspace-wide command per script name."""
    covered = {c.kind for c in root_found}
    have: dict[str, list[str]] = {}
    for directory in packages:
        path = f"{directory}/package.json"
        try:
            text = files.read_text(path)
        except UnreadableFile as exc:
            errors.append(str(exc))
            continue
        manifest, problems, _ = parse_manifest(text or "{}", path)
        errors.extend(problems)
        if manifest is None:
            continue
        for kind, names in SCRIPTS.items():
            for name in names:
                body = manifest.scripts.get(name)
                if body is not None and not (kind is Kind.TEST and _PLACEHOLDER_TEST.search(body)):
                    have.setdefault(name, []).append(directory)
    yarn_berry = files.is_file(".yarnrc.yml")
    found = []
    for kind, names in SCRIPTS.items():
        if kind in covered:
            continue
        for cost, name in enumerate(names):
            if name not in have:
                continue
            dirs = have[name]
            found.append(
                Candidate(
                    kind=kind,
                    argv=workspace_command(env.package_manager, name, yarn_berry),
                    tool="npm-test",
                    ecosystem=Ecosystem.NODE,
                    origin=Origin.PACKAGE_JSON,
                    source=Source(f"{dirs[0]}/package.json"),
                    reason=f"script {name!r} in {len(dirs)} workspace package(s)",
                    cost=cost,
                    redundant_with=frozenset({RUNS_BUILD_SCRIPT})
                    if kind is Kind.BUILD
                    else frozenset(),
                )
            )
    return found

"""Detector 5: CI configuration (GitHub workflows, GitLab CI): the commands CI runs.

CI is not emulated. Its `run:` lines confirm what other sources found and
contribute environment variables; on their own they are candidates of low rank.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from assay.discovery.commands import project_argv, recognise_line
from assay.discovery.files import RepoFiles, UnreadableFile
from assay.discovery.make import logical_lines
from assay.discovery.model import (
    Candidate,
    DetectorReport,
    Dropped,
    Origin,
    ProjectEnv,
    Source,
    report,
)

NAME = "ci"

WORKFLOW_DIR = ".github/workflows"
GITLAB_CI = ".gitlab-ci.yml"

#: Most workflow files read.
MAX_WORKFLOWS = 50

_GITLAB_RESERVED = frozenset(
    {
        "stages",
        "variables",
        "default",
        "include",
        "workflow",
        "image",
        "services",
        "before_script",
        "after_script",
        "cache",
        "pages",
    }
)


def _load_yaml(text: str, path: str) -> tuple[Any, str | None]:
    try:
        return yaml.safe_load(text), None
    except yaml.YAMLError as exc:
        return None, f"{path}: not valid YAML: {' '.join(str(exc).split())[:200]}"
    except (RecursionError, ValueError) as exc:
        return None, f"{path}: not valid YAML: {type(exc).__name__}"


def plain_env(*layers: Any) -> dict[str, str]:
    """Merge env mappings (later wins), keeping literal values; `${{ }}` expressions are CI-only."""
    merged: dict[str, str] = {}
    for layer in layers:
        if not isinstance(layer, Mapping):
            continue
        for name, value in layer.items():
            if not isinstance(name, str) or isinstance(value, (dict, list)) or value is None:
                continue
            text = str(value).lower() if isinstance(value, bool) else str(value)
            if "${{" not in text and "$" not in text:
                merged[name] = text
    return merged


def script_candidates(
    script: str, path: str, text: str, env: ProjectEnv, ci_env: dict[str, str], cwd: str, where: str
) -> tuple[list[Candidate], list[Dropped]]:
    """Candidates from one `run:` script (several lines). Pure."""
    found: list[Candidate] = []
    dropped: list[Dropped] = []
    for _, line in logical_lines(script):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        hits = recognise_line(line)
        if not hits:
            continue
        source = Source(path, _line_in(text, line))
        if "${{" in line:
            dropped.append(
                Dropped(line, source, "uses a CI expression (${{ ... }}) assay cannot evaluate")
            )
            continue
        for hit in hits:
            found.append(
                Candidate(
                    kind=hit.kind,
                    argv=project_argv(hit, env),
                    tool=hit.tool,
                    ecosystem=hit.ecosystem,
                    origin=Origin.CI,
                    source=source,
                    reason=f"CI {where} runs: {' '.join(hit.argv)}",
                    cwd=cwd,
                    env={**ci_env, **dict(hit.env)},
                )
            )
    return found, dropped


def _line_in(text: str, line: str) -> int | None:
    index = text.find(line[:60])
    return text.count("\n", 0, index) + 1 if index >= 0 else None


def parse_workflow(
    text: str, path: str, env: ProjectEnv
) -> tuple[list[Candidate], list[Dropped], list[str]]:
    """Candidates from the `run:` steps of one GitHub workflow. Pure."""
    data, error = _load_yaml(text, path)
    if error:
        return [], [], [error]
    if data is None:
        return [], [], []
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), dict):
        return [], [], [f"{path}: not a workflow (no `jobs` mapping)"]
    found: list[Candidate] = []
    dropped: list[Dropped] = []
    for job_id, job in data["jobs"].items():
        if not isinstance(job, dict) or not isinstance(job.get("steps"), list):
            continue
        defaults = (
            job.get("defaults", {}).get("run", {}) if isinstance(job.get("defaults"), dict) else {}
        )
        for step in job["steps"]:
            if not isinstance(step, dict) or not isinstance(step.get("run"), str):
                continue
            cwd = step.get("working-directory") or (
                defaults.get("working-directory") if isinstance(defaults, dict) else None
            )
            cwd = cwd if isinstance(cwd, str) and "${{" not in cwd else "."
            more, more_dropped = script_candidates(
                step["run"],
                path,
                text,
                env,
                plain_env(data.get("env"), job.get("env"), step.get("env")),
                cwd,
                f"job {job_id!r}",
            )
            found += more
            dropped += more_dropped
    return found, dropped, []


def parse_gitlab(
    text: str, path: str, env: ProjectEnv
) -> tuple[list[Candidate], list[Dropped], list[str]]:
    """Candidates from the `script:` lines of GitLab CI jobs. Pure."""
    data, error = _load_yaml(text, path)
    if error:
        return [], [], [error]
    if data is None:
        return [], [], []
    if not isinstance(data, dict):
        return [], [], [f"{path}: expected a mapping of jobs"]
    found: list[Candidate] = []
    dropped: list[Dropped] = []
    for job_id, job in data.items():
        if not isinstance(job_id, str) or job_id in _GITLAB_RESERVED or job_id.startswith("."):
            continue
        if not isinstance(job, dict):
            continue
        script = job.get("script")
        lines = (
            [script]
            if isinstance(script, str)
            else [s for s in script if isinstance(s, str)]
            if isinstance(script, list)
            else []
        )
        for line in lines:
            more, more_dropped = script_candidates(
                line,
                path,
                text,
                env,
                plain_env(data.get("variables"), job.get("variables")),
                ".",
                f"job {job_id!r}",
            )
            found += more
            dropped += more_dropped
    return found, dropped, []


def detect(files: RepoFiles, env: ProjectEnv) -> DetectorReport:
    found: list[Candidate] = []
    dropped: list[Dropped] = []
    errors: list[str] = []
    paths = [
        f"{WORKFLOW_DIR}/{name}"
        for name in files.list_dir(WORKFLOW_DIR)
        if re.search(r"\.ya?ml$", name)
    ][:MAX_WORKFLOWS]
    sources = [(p, parse_workflow) for p in paths] + [(GITLAB_CI, parse_gitlab)]
    for path, parse in sources:
        try:
            text = files.read_text(path)
        except UnreadableFile as exc:
            errors.append(str(exc))
            continue
        if text is None:
            continue
        more, more_dropped, problems = parse(text, path, env)
        found += more
        dropped += more_dropped
        errors += problems
    return report(NAME, found, dropped=dropped, errors=errors)

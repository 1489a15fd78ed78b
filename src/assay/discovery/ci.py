"""Detector 5: CI configuration (GitHub workflows, GitLab CI): the commands CI runs.

CI is not emulated. Its `run:` lines confirm what other sources found and
contribute environment variables; on their own they are candidates of low rank.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from assay.discovery.command_lines import candidate_from, recognise_line
from assay.discovery.files import RepoFiles
from assay.discovery.make import logical_lines
from assay.discovery.model import (
    Candidate,
    DetectorReport,
    Dropped,
    FileParser,
    Origin,
    ProjectEnv,
    Source,
    parsed_report,
)
from assay.discovery.text import line_at, load_yaml

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
        found += [
            candidate_from(
                hit,
                env,
                Origin.CI,
                source,
                f"CI {where} runs: {' '.join(hit.argv)}",
                cwd=cwd,
                extra_env=ci_env,
            )
            for hit in hits
        ]
    return found, dropped


def _line_in(text: str, line: str) -> int | None:
    # The script was re-joined from YAML, so find its first characters in the raw text.
    index = text.find(line[:60])
    return line_at(text, index) if index >= 0 else None


def parse_workflow(
    text: str, path: str, env: ProjectEnv
) -> tuple[list[Candidate], list[Dropped], list[str]]:
    """Candidates from the `run:` steps of one GitHub workflow. Pure."""
    data, error = load_yaml(text, path)
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
        job_cwd = _mapping(_mapping(job.get("defaults")).get("run")).get("working-directory")
        for step in job["steps"]:
            if not isinstance(step, dict) or not isinstance(step.get("run"), str):
                continue
            cwd = step.get("working-directory") or job_cwd
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


def _mapping(value: Any) -> Mapping[Any, Any]:
    return value if isinstance(value, Mapping) else {}


def parse_gitlab(
    text: str, path: str, env: ProjectEnv
) -> tuple[list[Candidate], list[Dropped], list[str]]:
    """Candidates from the `script:` lines of GitLab CI jobs. Pure."""
    data, error = load_yaml(text, path)
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
        lines = [script] if isinstance(script, str) else script if isinstance(script, list) else []
        for line in [s for s in lines if isinstance(s, str)]:
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
    workflows = [
        f"{WORKFLOW_DIR}/{name}"
        for name in files.list_dir(WORKFLOW_DIR)
        if re.search(r"\.ya?ml$", name)
    ][:MAX_WORKFLOWS]
    parsers: dict[str, FileParser] = {path: parse_workflow for path in workflows}
    parsers[GITLAB_CI] = parse_gitlab
    texts, errors = files.read_texts(parsers)
    return parsed_report(NAME, parsers, texts, errors, env)

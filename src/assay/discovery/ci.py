"""Detector 5: CI configuration: the commands CI runs.

GitHub workflows are read job by job here (their working directories and `${{ }}`
expressions need it); the YAML-configured systems (GitLab, Travis, CircleCI, Azure
Pipelines, Woodpecker, Buildkite, Drone) are one table (`ci_systems`); a Jenkinsfile is
read as text (`jenkins`). Every script goes through `ci_scripts`, where a `make` line
is resolved through the root Makefile.

CI is not emulated. Its commands confirm what other sources found and
contribute environment variables; on their own they are candidates of low rank.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from assay.discovery.ci_scripts import (
    CIText,
    Parsed,
    plain_env,
    repository_scripts,
    script_candidates,
)
from assay.discovery.ci_systems import (
    CI_SYSTEMS,
    GITLAB,
    GITLAB_CI,
    CISystem,
    parse_ci_file,
    parse_gitlab,
)
from assay.discovery.files import RepoFiles, UnreadableFile
from assay.discovery.jenkins import JENKINSFILE, parse_jenkinsfile
from assay.discovery.make import Makefile, read_root_makefile
from assay.discovery.model import (
    Candidate,
    DetectorReport,
    Dropped,
    FileParser,
    ProjectEnv,
    parsed_report,
)
from assay.discovery.text import load_yaml
from assay.discovery.workflow_actions import action_run

__all__ = [
    "CI_SYSTEMS",
    "GITLAB",
    "GITLAB_CI",
    "JENKINSFILE",
    "NAME",
    "CISystem",
    "detect",
    "parse_ci_file",
    "parse_gitlab",
    "parse_jenkinsfile",
    "parse_workflow",
    "plain_env",
]

NAME = "ci"

WORKFLOW_DIR = ".github/workflows"

#: Most workflow files read (per CI directory).
MAX_WORKFLOWS = 50

_YAML = re.compile(r"\.ya?ml$")


def _mapping(value: Any) -> Mapping[Any, Any]:
    return value if isinstance(value, Mapping) else {}


def parse_workflow(
    text: str,
    path: str,
    env: ProjectEnv,
    makefile: Makefile | None = None,
    scripts: Mapping[str, str] | None = None,
) -> Parsed:
    """Candidates from the `run:` steps of one GitHub workflow, and from the steps whose
    action runs a check (`workflow_actions`). Pure."""
    data, error = load_yaml(text, path)
    if error:
        return [], [], [error]
    if data is None:
        return [], [], []
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), dict):
        return [], [], [f"{path}: not a workflow (no `jobs` mapping)"]
    raw = CIText(text)
    found: list[Candidate] = []
    dropped: list[Dropped] = []
    for job_id, job in data["jobs"].items():
        if not isinstance(job, dict) or not isinstance(job.get("steps"), list):
            continue
        job_cwd = _mapping(_mapping(job.get("defaults")).get("run")).get("working-directory")
        # A job that runs on another job's artifact sets its variables for that artifact
        # (redux-thunk's `TEST_DIST: true` tests the packed tarball it installs); here the
        # tree is what is tested, so its commands run without them.
        on_artifact = any(_uses(step, "actions/download-artifact") for step in job["steps"])
        for step in job["steps"]:
            if raw.remaining <= 0:
                break
            if not isinstance(step, dict):
                continue
            where, at = f"CI job {job_id!r}", None
            if isinstance(step.get("run"), str):
                script, cwd = step["run"], step.get("working-directory") or job_cwd
            elif (action := action_run(step, env)) is not None:
                # A job's `defaults.run` is for its run steps, not for an action's.
                script, cwd = action.script, action.cwd
                where, at = f"{where} ({action.how})", str(step["uses"])
            else:
                continue
            cwd = cwd if isinstance(cwd, str) and "${{" not in cwd else "."
            for each in matrix_expanded(script, job):
                more, more_dropped = script_candidates(
                    each,
                    path,
                    raw,
                    env,
                    {}
                    if on_artifact
                    else plain_env(data.get("env"), job.get("env"), step.get("env")),
                    cwd,
                    where,
                    makefile=makefile,
                    scripts=scripts,
                    at=at,
                )
                found += [replace(c, job=f"{path}#{job_id}") for c in more]
                dropped += more_dropped
    return found, dropped, []


#: `${{ matrix.NAME }}` in a step's script.
_MATRIX_VALUE = re.compile(r"\$\{\{\s*matrix\.([A-Za-z_][\w-]*)\s*\}\}")
#: The most scripts one step's matrix values make (a matrix is usually a handful).
MAX_MATRIX_SCRIPTS = 16


def matrix_expanded(script: str, job: Mapping[str, Any]) -> list[str]:
    """`script` once for each combination of the literal values its job's
    `strategy.matrix` lists for the `${{ matrix.NAME }}` it names (ms' `pnpm run ${{
    matrix.task }}` over `task: [format, lint, typecheck, attw]`: four checks CI gates on);
    as it is when it names none, or one whose values are not a literal list."""
    names = list(dict.fromkeys(_MATRIX_VALUE.findall(script)))
    matrix = _mapping(_mapping(job.get("strategy")).get("matrix"))
    values: list[list[str]] = []
    for name in names:
        listed = matrix.get(name)
        if not isinstance(listed, list) or not listed:
            return [script]
        if not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in listed):
            return [script]
        values.append([str(v) for v in listed])
    if not names:
        return [script]
    scripts: list[str] = []
    for combination in itertools.islice(itertools.product(*values), MAX_MATRIX_SCRIPTS):
        chosen = dict(zip(names, combination, strict=True))
        scripts.append(_MATRIX_VALUE.sub(functools.partial(_chosen, chosen), script))
    return list(dict.fromkeys(scripts))


def _chosen(values: Mapping[str, str], match: re.Match[str]) -> str:
    return values[match.group(1)]


def _uses(step: object, action: str) -> bool:
    """Whether `step` runs the GitHub action `action` (at any version)."""
    uses = step.get("uses") if isinstance(step, dict) else None
    return isinstance(uses, str) and uses.split("@")[0] == action


def _parser(system: CISystem, makefile: Makefile | None, scripts: Mapping[str, str]) -> FileParser:
    def parse(text: str, path: str, env: ProjectEnv) -> Parsed:
        return parse_ci_file(system, text, path, env, makefile, scripts)

    return parse


def detect(files: RepoFiles, env: ProjectEnv) -> DetectorReport:
    makefile = read_root_makefile(files)
    parsed = makefile[1] if makefile else None
    scripts: dict[str, str] = {}  # filled once the CI files are read, before they are parsed
    parsers: dict[str, FileParser] = {
        path: _with_context(parse_workflow, parsed, scripts)
        for path in _yaml_in(files, WORKFLOW_DIR)
    }
    for system in CI_SYSTEMS:
        paths = [*system.files, *(p for d in system.dirs for p in _yaml_in(files, d))]
        parsers.update({path: _parser(system, parsed, scripts) for path in paths})
    parsers[JENKINSFILE] = _with_context(parse_jenkinsfile, parsed, scripts)
    texts, errors = files.read_texts(parsers)
    scripts.update(repository_scripts(texts.values(), _reader(files)))
    return parsed_report(NAME, parsers, texts, errors, env)


def _with_context(
    parse: Callable[[str, str, ProjectEnv, Makefile | None, Mapping[str, str]], Parsed],
    makefile: Makefile | None,
    scripts: Mapping[str, str],
) -> FileParser:
    def parser(text: str, path: str, env: ProjectEnv) -> Parsed:
        return parse(text, path, env, makefile, scripts)

    return parser


def _reader(files: RepoFiles) -> Callable[[str], str | None]:
    """`files.read_text` for a script a CI line names: one that cannot be used is none."""

    def read(rel: str) -> str | None:
        try:
            return files.read_text(rel)
        except UnreadableFile:
            return None

    return read


def _yaml_in(files: RepoFiles, directory: str) -> list[str]:
    return [f"{directory}/{n}" for n in files.list_dir(directory) if _YAML.search(n)][
        :MAX_WORKFLOWS
    ]

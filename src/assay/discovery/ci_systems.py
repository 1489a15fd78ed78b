"""CI systems configured in YAML (GitLab, Travis, CircleCI, Azure Pipelines, Woodpecker,
Buildkite, Drone), each one `CISystem` value: which files, which keys hold shell
scripts, which hold environment variables. One walk reads them all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from assay.discovery.ci_scripts import CIText, Parsed, plain_env, script_candidates
from assay.discovery.command_lines import split_commands
from assay.discovery.make import Makefile
from assay.discovery.model import Candidate, Dropped, ProjectEnv
from assay.discovery.text import load_yaml, load_yaml_documents

GITLAB_CI = ".gitlab-ci.yml"

#: Most YAML nodes visited in one CI file; anchors are visited once, so this bounds a
#: file that is large rather than one that is clever.
MAX_NODES = 50_000
#: Deepest nesting followed in a CI file (real ones are a dozen levels deep).
MAX_DEPTH = 64


@dataclass(frozen=True, slots=True)
class CISystem:
    """How one YAML-configured CI system names the shell commands it runs."""

    label: str
    """How reasons name it (`Travis CI`)."""
    files: tuple[str, ...] = ()
    """Paths read when present."""
    dirs: tuple[str, ...] = ()
    """Directories whose `*.yml`/`*.yaml` files are read too."""
    scripts: frozenset[tuple[str, ...]] = frozenset()
    """Keys whose values are shell: `("script",)` anywhere, `("run", "command")` for a
    `command` inside a `run` mapping. A value is a string or a list of strings."""
    env: frozenset[str] = frozenset()
    """Keys whose mappings hold environment variables, inherited by everything below."""
    documents: bool = False
    """The file holds several YAML documents (`---`), each a pipeline."""
    skip_top: frozenset[str] = frozenset()
    """Top-level keys that are settings, not jobs."""
    skip_hidden: bool = False
    """Top-level keys starting with `.` are templates, not jobs."""
    jobs_at_top: bool = False
    """Top-level keys are job names (GitLab), for the reasons shown."""
    expressions: tuple[str, ...] = ()
    """Text the CI system substitutes before the shell sees the line; assay cannot."""


def _keys(*paths: str) -> frozenset[tuple[str, ...]]:
    return frozenset(tuple(p.split(".")) for p in paths)


GITLAB = CISystem(
    "GitLab CI",
    files=(GITLAB_CI,),
    scripts=_keys("script"),
    env=frozenset({"variables"}),
    skip_top=frozenset(
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
    ),
    skip_hidden=True,
    jobs_at_top=True,
)
TRAVIS = CISystem(
    "Travis CI",
    files=(".travis.yml",),
    scripts=_keys("script"),
    env=frozenset({"env"}),
)
CIRCLECI = CISystem(
    "CircleCI",
    files=(".circleci/config.yml", ".circleci/config.yaml"),
    scripts=_keys("run", "run.command"),
    env=frozenset({"environment"}),
    expressions=("<<",),
)
AZURE = CISystem(
    "Azure Pipelines",
    files=("azure-pipelines.yml", "azure-pipelines.yaml", ".azure-pipelines.yml"),
    scripts=_keys("script", "bash"),
    env=frozenset({"variables", "env"}),
    expressions=("${{", "$(", "$["),
)
WOODPECKER = CISystem(
    "Woodpecker CI",
    files=(".woodpecker.yml", ".woodpecker.yaml"),
    dirs=(".woodpecker",),
    scripts=_keys("commands"),
    env=frozenset({"environment"}),
)
BUILDKITE = CISystem(
    "Buildkite",
    files=(".buildkite/pipeline.yml", ".buildkite/pipeline.yaml", "buildkite.yml"),
    scripts=_keys("command", "commands"),
    env=frozenset({"env"}),
)
DRONE = CISystem(
    "Drone CI",
    files=(".drone.yml", ".drone.yaml"),
    scripts=_keys("commands"),
    env=frozenset({"environment"}),
    documents=True,
)

#: Every YAML-configured CI system read besides GitHub workflows.
CI_SYSTEMS: tuple[CISystem, ...] = (GITLAB, TRAVIS, CIRCLECI, AZURE, WOODPECKER, BUILDKITE, DRONE)


@dataclass(frozen=True, slots=True)
class _Script:
    """One shell script found in a CI file, with where it sits and what it inherits."""

    text: str
    where: str
    env: dict[str, str]


def _assignments(words: Any) -> dict[str, str]:
    """`NAME=value` strings (one, a list, or a space-separated line) as a mapping."""
    if isinstance(words, str):
        try:
            words = split_commands(words)[0] if words.strip() else []
        except (ValueError, IndexError):
            return {}
    if not isinstance(words, list):
        return {}
    pairs = {}
    for word in words:
        if isinstance(word, str) and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", word):
            name, _, value = word.partition("=")
            pairs[name] = value
    return plain_env(pairs)


def env_of(value: Any) -> dict[str, str]:
    """The literal variables of one env setting, in any of the shapes CI systems use: a
    mapping, Azure's list of `{name, value}`, Travis's `NAME=value` line or `global` list."""
    if isinstance(value, Mapping):
        merged = plain_env(value)
        if "global" in value:  # Travis: env.global is set for every job; env.jobs is a matrix
            merged.update(_assignments(value["global"]))
            merged.pop("global", None)
        return merged
    if isinstance(value, list):
        pairs = {
            item["name"]: item.get("value")
            for item in value
            if isinstance(item, Mapping) and isinstance(item.get("name"), str)
        }
        return plain_env(pairs)
    if isinstance(value, str):
        return _assignments(value)
    return {}


def parse_ci_file(
    system: CISystem,
    text: str,
    path: str,
    env: ProjectEnv,
    makefile: Makefile | None = None,
    scripts: Mapping[str, str] | None = None,
) -> Parsed:
    """Candidates from every shell script one CI system's file runs. Pure."""
    if system.documents:
        documents, error = load_yaml_documents(text, path)
    else:
        data, error = load_yaml(text, path)
        documents = [data]
    if error:
        return [], [], [error]
    documents = [d for d in documents if d is not None]
    if any(not isinstance(d, dict) for d in documents):
        return [], [], [f"{path}: expected a mapping at the top level"]
    raw = CIText(text)
    found: list[Candidate] = []
    dropped: list[Dropped] = []
    for document in documents:
        for script in find_scripts(system, document):
            if raw.remaining <= 0:
                break
            where = f"{system.label} {script.where}".strip()
            more, more_dropped = script_candidates(
                script.text,
                path,
                raw,
                env,
                script.env,
                ".",
                where,
                makefile=makefile,
                scripts=scripts,
                expressions=("${{", *system.expressions),
            )
            found += more
            dropped += more_dropped
    return found, dropped, []


def find_scripts(system: CISystem, document: Mapping[Any, Any]) -> list[_Script]:
    """Every script under `system`'s script keys, in file order, each with the environment
    its enclosing mappings set and the job or step it belongs to. Each YAML node is
    visited once (anchors are shared, so an alias bomb costs nothing). Pure."""
    scripts: list[_Script] = []
    seen: set[int] = set()
    budget = [MAX_NODES]

    def visit(node: Any, parent: str, env: dict[str, str], where: str, depth: int) -> None:
        if depth > MAX_DEPTH or budget[0] <= 0 or id(node) in seen:
            return
        seen.add(id(node))
        budget[0] -= 1
        if isinstance(node, list):
            for item in node:
                visit(item, parent, env, where, depth + 1)
            return
        if not isinstance(node, Mapping):
            return
        for key in system.env:
            env = {**env, **env_of(node.get(key))}
        named = next((node[k] for k in _NAME_KEYS if isinstance(node.get(k), str)), None)
        if named is not None:
            where = f"{_ENTRY_KINDS.get(parent, 'step')} {named!r}"
        for key, value in node.items():
            if not isinstance(key, str) or key in system.env:
                continue
            if depth == 0 and (key in system.skip_top or (system.skip_hidden and key[:1] == ".")):
                continue
            if (key,) in system.scripts or (parent, key) in system.scripts:
                texts = [value] if isinstance(value, str) else value
                if isinstance(texts, list) and all(isinstance(t, str) for t in texts):
                    scripts.extend(_Script(t, where, env) for t in texts)
                    continue
            # A job or step named by its key (`jobs: {test: ...}`, GitLab's top-level jobs).
            if depth == 0 and system.jobs_at_top:
                inner = f"job {key!r}"
            elif parent in _ENTRY_KINDS and isinstance(value, Mapping):
                inner = f"{_ENTRY_KINDS[parent]} {key!r}"
            else:
                inner = where
            visit(value, key, env, inner, depth + 1)

    visit(document, "", {}, "", 0)
    return scripts


#: Keys that hold a job or step's name in list-shaped configurations.
_NAME_KEYS = ("name", "label", "displayName", "job", "stage")
#: Keys whose entries are jobs, stages or steps, and what reasons call each entry.
_ENTRY_KINDS = {"jobs": "job", "stages": "stage", "steps": "step", "pipeline": "step"}


def parse_gitlab(text: str, path: str, env: ProjectEnv) -> Parsed:
    """Candidates from the `script:` lines of GitLab CI jobs. Pure."""
    return parse_ci_file(GITLAB, text, path, env)

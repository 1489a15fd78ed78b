"""Detector 5: CI configuration: the commands CI runs.

GitHub workflows are read job by job (their working directories and `${{ }}`
expressions need it); every other YAML-configured system (GitLab, Travis,
CircleCI, Azure Pipelines, Woodpecker, Buildkite, Drone) is one `CISystem`
value: which files, which keys hold shell scripts, which hold environment
variables. A Jenkinsfile is Groovy and is read as text for its `sh` steps,
never evaluated. A `make` line is resolved through the root Makefile, so
`make all` counts when the targets it builds run checks.

CI is not emulated. Its commands confirm what other sources found and
contribute environment variables; on their own they are candidates of low rank.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from assay.discovery.command_lines import (
    SCRIPT_KINDS,
    Recognised,
    candidate_from,
    recognise,
    split_commands,
)
from assay.discovery.files import RepoFiles
from assay.discovery.make import (
    Makefile,
    TargetRuns,
    invocation_targets,
    logical_lines,
    read_root_makefile,
    target_runs,
)
from assay.discovery.model import (
    Candidate,
    DetectorReport,
    Dropped,
    Ecosystem,
    FileParser,
    Origin,
    ProjectEnv,
    Source,
    parsed_report,
)
from assay.discovery.text import line_at, load_yaml, load_yaml_documents

NAME = "ci"

WORKFLOW_DIR = ".github/workflows"
GITLAB_CI = ".gitlab-ci.yml"
JENKINSFILE = "Jenkinsfile"

#: Most workflow files read (per CI directory).
MAX_WORKFLOWS = 50
#: Most YAML nodes visited in one CI file; anchors are visited once, so this bounds a
#: file that is large rather than one that is clever.
MAX_NODES = 50_000
#: Deepest nesting followed in a CI file (real ones are a dozen levels deep).
MAX_DEPTH = 64

_YAML = re.compile(r"\.ya?ml$")


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


# --------------------------------------------------------------------------- shared


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


#: Most check commands read from one CI file; real ones name a few dozen.
MAX_COMMANDS_PER_FILE = 500


class CIText:
    """One CI file's raw text: where a re-joined script line sits in it, and how many more
    commands may be read from it (a file of a million `pytest` lines costs a bounded amount)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.remaining = MAX_COMMANDS_PER_FILE
        self._at = 0  # the last offset found, and its line: counting moves on from there
        self._line = 1

    def line_of(self, line: str) -> int | None:
        """The line `line` starts on: searched from the last one found (scripts come in
        file order), then from the top."""
        fragment = line[:60]
        index = self.text.find(fragment, self._at)
        if index < 0:
            index = self.text.find(fragment)
        if index < 0:
            return None
        if index < self._at:
            self._at, self._line = 0, 1
        self._line += self.text.count("\n", self._at, index)
        self._at = index
        return self._line


def script_candidates(
    script: str,
    path: str,
    text: str | CIText,
    env: ProjectEnv,
    ci_env: dict[str, str],
    cwd: str,
    where: str,
    *,
    makefile: Makefile | None = None,
    expressions: tuple[str, ...] = ("${{",),
) -> tuple[list[Candidate], list[Dropped]]:
    """Candidates from one CI script (several lines). Pure."""
    raw = text if isinstance(text, CIText) else CIText(text)
    found: list[Candidate] = []
    dropped: list[Dropped] = []
    for _, line in logical_lines(script):
        line = line.strip()
        if raw.remaining <= 0:
            break
        if not line or line.startswith("#"):
            continue
        hits = _line_hits(line, makefile if cwd == "." else None)
        if not hits:
            continue
        raw.remaining -= 1
        source = Source(path, raw.line_of(line))
        used = next((e for e in expressions if e in line), None)
        if used is not None:
            dropped.append(
                Dropped(line, source, f"uses a CI expression ({used} ...) assay cannot evaluate")
            )
            continue
        for hit, runs in hits:
            if runs is not None and runs.masking is not None:
                dropped.append(
                    Dropped(
                        " ".join(hit.argv),
                        source,
                        f"a target it builds ignores failures ({runs.masking.strip()[:80]!r})",
                    )
                )
                continue
            reason = f"{where} runs: {' '.join(hit.argv)}"
            if runs is not None and runs.lines:
                reason += f" (its targets run: {'; '.join(runs.lines)[:200]})"
            candidate = candidate_from(
                hit, env, Origin.CI, source, reason, cwd=cwd, extra_env=ci_env
            )
            if runs is not None:
                candidate = dataclasses.replace(
                    candidate, runs=frozenset(h.name for h in runs.hits)
                )
            found.append(candidate)
    return found, dropped


def _line_hits(line: str, makefile: Makefile | None) -> list[tuple[Recognised, TargetRuns | None]]:
    """The checks one shell line runs; a `make` call is read through the Makefile."""
    try:
        commands = split_commands(line)
    except ValueError:
        return []
    hits: list[tuple[Recognised, TargetRuns | None]] = []
    for words in commands:
        made = _make_hit(words, makefile) if makefile is not None else None
        if made is not None:
            hits.append(made)
            continue
        hit = recognise(words)
        if hit is not None:
            hits.append((hit, None))
    return hits


def _make_hit(words: list[str], makefile: Makefile) -> tuple[Recognised, TargetRuns] | None:
    """`make [targets]` as the check its targets answer, from what their recipes run."""
    targets = invocation_targets(words, makefile)
    if targets is None:
        return None
    runs = [target_runs(makefile, t) for t in targets]
    merged = TargetRuns(
        hits=tuple(h for r in runs for h in r.hits),
        named=tuple(SCRIPT_KINDS[t] for t in targets if t in SCRIPT_KINDS)
        + tuple(k for r in runs for k in r.named),
        lines=tuple(line for r in runs for line in r.lines),
        masking=next((r.masking for r in runs if r.masking is not None), None),
    )
    kind = merged.kind
    if kind is None:
        return None
    # Leading `NAME=value` words are the command's environment; later ones are make's own.
    at = next((i for i, w in enumerate(words) if not _ASSIGNMENT.match(w)), len(words))
    env = tuple((w.partition("=")[0], w.partition("=")[2]) for w in words[:at])
    argv = tuple(words[at:])
    return Recognised(kind, "make", Ecosystem.GENERIC, argv[1:], argv, env, name="make"), merged


_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _mapping(value: Any) -> Mapping[Any, Any]:
    return value if isinstance(value, Mapping) else {}


Parsed = tuple[list[Candidate], list[Dropped], list[str]]


# --------------------------------------------------------------------------- GitHub


def parse_workflow(
    text: str, path: str, env: ProjectEnv, makefile: Makefile | None = None
) -> Parsed:
    """Candidates from the `run:` steps of one GitHub workflow. Pure."""
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
        for step in job["steps"]:
            if raw.remaining <= 0:
                break
            if not isinstance(step, dict) or not isinstance(step.get("run"), str):
                continue
            cwd = step.get("working-directory") or job_cwd
            cwd = cwd if isinstance(cwd, str) and "${{" not in cwd else "."
            more, more_dropped = script_candidates(
                step["run"],
                path,
                raw,
                env,
                plain_env(data.get("env"), job.get("env"), step.get("env")),
                cwd,
                f"CI job {job_id!r}",
                makefile=makefile,
            )
            found += more
            dropped += more_dropped
    return found, dropped, []


# --------------------------------------------------------------------------- other YAML CI


def parse_ci_file(
    system: CISystem, text: str, path: str, env: ProjectEnv, makefile: Makefile | None = None
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


def _parser(system: CISystem, makefile: Makefile | None) -> FileParser:
    def parse(text: str, path: str, env: ProjectEnv) -> Parsed:
        return parse_ci_file(system, text, path, env, makefile)

    return parse


def parse_gitlab(text: str, path: str, env: ProjectEnv) -> Parsed:
    """Candidates from the `script:` lines of GitLab CI jobs. Pure."""
    return parse_ci_file(GITLAB, text, path, env)


# --------------------------------------------------------------------------- Jenkins

# `sh 'x'`, `sh "x"`, `sh '''x'''`, `sh(script: "x", ...)`, `sh label: 'l', script: 'x'`
_SH_STEP = re.compile(
    r"\bsh\b\s*\(?\s*(?:label\s*:\s*(?:'[^'\n]*'|\"[^\"\n]*\")\s*,\s*)?(?:script\s*:\s*)?('''|\"\"\"|'|\")"
)
_STAGE = re.compile(r"\bstage\s*\(\s*['\"]([^'\"\n]+)['\"]")
_ENVIRONMENT_BLOCK = re.compile(r"\benvironment\s*\{([^{}]*)\}")
_ENV_ENTRY = re.compile(
    r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?:'([^'\n]*)'|\"([^\"$\n]*)\")\s*$", re.MULTILINE
)
_RETURN_STATUS = re.compile(r"[^\n)]*?\breturnStatus\s*:\s*true")


def parse_jenkinsfile(
    text: str, path: str, env: ProjectEnv, makefile: Makefile | None = None
) -> Parsed:
    """Candidates from the `sh` steps of a Jenkinsfile, read as text (Groovy is never run). Pure."""
    found: list[Candidate] = []
    dropped: list[Dropped] = []
    raw = CIText(text)
    pipeline_env = _jenkins_env(text)
    stages = [(m.start(), m.group(1)) for m in _STAGE.finditer(text)]
    at = 0
    while (match := _SH_STEP.search(text, at)) is not None:
        quote, start = match.group(1), match.end()
        end = _closing(text, start, quote)
        if end < 0:
            break  # an unclosed string runs to the end of the file
        at = end + len(quote)
        body = _unescape(text[start:end])
        before = bisect.bisect_left(stages, (match.start(), ""))
        where = f"Jenkins stage {stages[before - 1][1]!r}" if before else "Jenkinsfile"
        interpolated = quote.startswith('"') and re.search(r"(?<!\\)\$", text[start:end])
        if interpolated or _RETURN_STATUS.match(text, at):
            why = (
                "uses a Groovy expression ($...) assay cannot evaluate"
                if interpolated
                else "its step sets returnStatus: true, so a failure does not fail the build"
            )
            dropped += [
                Dropped(line.strip(), Source(path, line_at(text, start)), why)
                for _, line in logical_lines(body)
                if _line_hits(line.strip(), None)
            ]
            continue
        more, more_dropped = script_candidates(
            body, path, raw, env, pipeline_env, ".", where, makefile=makefile
        )
        found += more
        dropped += more_dropped
    return found, dropped, []


def _closing(text: str, start: int, quote: str) -> int:
    """Where the Groovy string opened just before `start` ends (a one-quote string ends on
    its line), or -1."""
    limit = len(text) if len(quote) == 3 else text.find("\n", start) % (len(text) + 1)
    at = start
    while (at := text.find(quote, at, limit)) >= 0:
        backslashes = 0
        while at - backslashes - 1 >= start and text[at - backslashes - 1] == "\\":
            backslashes += 1
        if backslashes % 2 == 0:
            return at
        at += 1
    return -1


def _unescape(body: str) -> str:
    return re.sub(r"\\(['\"\\$])", r"\1", body)


def _jenkins_env(text: str) -> dict[str, str]:
    """Literal variables of the pipeline-level `environment { }` block (before `stages`)."""
    stages = text.find("stages")
    block = _ENVIRONMENT_BLOCK.search(text)
    if block is None or (stages >= 0 and block.start() > stages):
        return {}
    return plain_env(
        {
            m.group(1): m.group(2) if m.group(2) is not None else m.group(3)
            for m in _ENV_ENTRY.finditer(block.group(1))
        }
    )


# --------------------------------------------------------------------------- detect


def detect(files: RepoFiles, env: ProjectEnv) -> DetectorReport:
    makefile = read_root_makefile(files)
    parsed = makefile[1] if makefile else None
    parsers: dict[str, FileParser] = {
        path: _with_makefile(parse_workflow, parsed) for path in _yaml_in(files, WORKFLOW_DIR)
    }
    for system in CI_SYSTEMS:
        paths = [*system.files, *(p for d in system.dirs for p in _yaml_in(files, d))]
        parsers.update({path: _parser(system, parsed) for path in paths})
    parsers[JENKINSFILE] = _with_makefile(parse_jenkinsfile, parsed)
    texts, errors = files.read_texts(parsers)
    return parsed_report(NAME, parsers, texts, errors, env)


def _with_makefile(
    parse: Callable[[str, str, ProjectEnv, Makefile | None], Parsed], makefile: Makefile | None
) -> FileParser:
    def parser(text: str, path: str, env: ProjectEnv) -> Parsed:
        return parse(text, path, env, makefile)

    return parser


def _yaml_in(files: RepoFiles, directory: str) -> list[str]:
    return [f"{directory}/{n}" for n in files.list_dir(directory) if _YAML.search(n)][
        :MAX_WORKFLOWS
    ]

"""The values discovery produces: candidates, each detector's answer, and the whole result."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from assay.tools.spec import Ecosystem
from assay.verdict import Kind

__all__ = [
    "Candidate",
    "DetectorAnswer",
    "DetectorReport",
    "Dropped",
    "Ecosystem",
    "FileParser",
    "Origin",
    "ProjectEnv",
    "Source",
    "parsed_report",
    "report",
]


class DetectorAnswer(enum.StrEnum):
    """A detector's answer about one source of checks."""

    FOUND = "found"
    """The source exists and yielded at least one candidate."""
    NOT_APPLICABLE = "not_applicable"
    """The source is absent, or present but says nothing about checks."""
    ERROR = "error"
    """The source exists but could not be read or parsed; the message says why."""


#: A candidate's cost when its detector says nothing of it (`Candidate.cost`).
DEFAULT_COST = 5


class Origin(enum.IntEnum):
    """Where a candidate came from; a lower value outranks a higher one."""

    ASSAY_CONFIG = 1
    PACKAGE_JSON = 2
    PYTHON_CONFIG = 3
    TASK_RUNNER = 4
    CI = 5
    MANIFEST = 6
    DOCS = 7
    FALLBACK = 8

    @property
    def label(self) -> str:
        return self.name.lower().replace("_", "-")


@dataclass(frozen=True, slots=True)
class Source:
    """A place in the repository: a file and, when known, a 1-based line."""

    file: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass(frozen=True, slots=True)
class Candidate:
    """One way the repository could answer one kind of question."""

    kind: Kind
    argv: tuple[str, ...]
    tool: str
    """The declared tool (`assay.tools`) whose output the parsers read (`pytest`, `go`, `make`)."""
    ecosystem: Ecosystem
    origin: Origin
    source: Source
    reason: str
    """Why this command answers the question, in a phrase."""
    cwd: str = "."
    env: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float | None = None
    cost: int = DEFAULT_COST
    """Relative expense among candidates of the same kind and origin; lower is cheaper."""
    runs: frozenset[str] = frozenset()
    """Checks a generic wrapper is known to run, by check name (an npm script
    `tsc --noEmit` runs `tsc`, a make target `go vet` runs `go-vet`)."""
    redundant_with: frozenset[str] = frozenset()
    """Check names whose planned check already answers this one (a build that is just `tsc`)."""
    notes: tuple[str, ...] = ()
    """Facts worth showing with the check (a `pretest` hook that builds first)."""
    name: str | None = None
    """The check's name when it is not the tool's (`go-test`, `cargo-check` for one tool)."""
    stated: tuple[tuple[str, ...], ...] = ()
    """The check commands, word by word as the project writes them, that this candidate
    runs (a make target's recipe lines `ruff check pkg tests`, a CI step's own command)."""
    job: str | None = None
    """The CI job whose step this is (`.github/workflows/ci.yml#test`): a job runs its
    steps in order, so its lines say what it runs before what."""
    composed: tuple[str, ...] | None = None
    """Set when assay composed the command from a tool's configuration instead of reading
    it where the project states it: the tool's subcommand words (`("check",)` for `ruff
    check .`, `()` for `mypy .`). A command the project states for the same tool and
    subcommand is run in its place (`plan`)."""
    patterns: frozenset[str] = frozenset()
    """Words of `argv` the project's shell would expand (`tests/*.py` unquoted in a CI
    step): the plan gives the tree's matches in their place (`shell_globs`)."""
    widens: tuple[tuple[str, ...], ...] = ()
    """Commands this one runs together with variants of them (parson's `make all`: `make
    test`, `testcpp`, `test_hash_collisions`): where CI runs this one, it is planned in
    their place, for a change can fail only a variant (`plan.choose`)."""
    goals: tuple[str, ...] = ()
    """For a make command, the targets it builds: those it names, else the Makefile's
    default goal (CI's bare `make` and the task runner's `make all` build the same)."""

    @property
    def check_name(self) -> str:
        """What the planned check is called; also what `runs` and `redundant_with` name."""
        return self.name or self.tool

    @property
    def command(self) -> str:
        return " ".join(self.argv)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "argv": list(self.argv),
            "tool": self.tool,
            "name": self.check_name,
            "ecosystem": self.ecosystem.value,
            "origin": self.origin.label,
            "source": str(self.source),
            "reason": self.reason,
            "cwd": self.cwd,
            "env": dict(self.env),
            "timeout_s": self.timeout_s,
            "notes": list(self.notes),
        }


@dataclass(frozen=True, slots=True)
class Dropped:
    """A candidate, or a would-be candidate, that was not kept, and why."""

    what: str
    """The command or entry that was dropped (`npm run test`, `tox.ini [testenv]`)."""
    source: Source
    reason: str

    def __str__(self) -> str:
        return f"dropped {self.what} ({self.source}): {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        return {"what": self.what, "source": str(self.source), "reason": self.reason}


@dataclass(frozen=True, slots=True)
class DetectorReport:
    """One detector's answer: found (with candidates), not applicable, or error (with why)."""

    detector: str
    outcome: DetectorAnswer
    candidates: tuple[Candidate, ...] = ()
    dropped: tuple[Dropped, ...] = ()
    errors: tuple[str, ...] = ()
    """Problems with the source, each naming the file (`package.json: not valid JSON ...`)."""
    notes: tuple[str, ...] = ()
    unplanned: tuple[str, ...] = ()
    """Checks the project runs that the tree under judgement kept from being planned
    (`--protect`: the base's hooks, handed a change's tree they could not list): each
    keeps the verdict from VERIFIED."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "detector": self.detector,
            "outcome": self.outcome.value,
            "candidates": [c.to_dict() for c in self.candidates],
            "dropped": [d.to_dict() for d in self.dropped],
            "errors": list(self.errors),
            "notes": list(self.notes),
            "unplanned": list(self.unplanned),
        }


def report(
    detector: str,
    candidates: list[Candidate] | tuple[Candidate, ...] = (),
    *,
    dropped: list[Dropped] | tuple[Dropped, ...] = (),
    errors: list[str] | tuple[str, ...] = (),
    notes: list[str] | tuple[str, ...] = (),
    unplanned: list[str] | tuple[str, ...] = (),
) -> DetectorReport:
    """A report whose outcome follows from its content: any error wins, then any candidate."""
    if errors:
        outcome = DetectorAnswer.ERROR
    elif candidates:
        outcome = DetectorAnswer.FOUND
    else:
        outcome = DetectorAnswer.NOT_APPLICABLE
    return DetectorReport(
        detector=detector,
        outcome=outcome,
        candidates=tuple(candidates),
        dropped=tuple(dropped),
        errors=tuple(errors),
        notes=tuple(notes),
        unplanned=tuple(unplanned),
    )


@dataclass(frozen=True, slots=True)
class ProjectEnv:
    """The project's own tools: where its interpreter and node binaries live."""

    python: str
    """The interpreter planned Python commands use (`.venv/bin/python`, or `python3`)."""
    python_source: str
    """How it was chosen (`in-tree virtualenv .venv`, `.pdm-python`, `PATH`)."""
    venv_dirs: tuple[str, ...] = ()
    """In-tree virtualenv directories, relative to the root; linters must not scan them."""
    venv_tools: frozenset[str] = frozenset()
    """Python tools installed in the in-tree virtualenv (`pytest`, `ruff`, ...)."""
    tool_paths: Mapping[str, str] = field(default_factory=dict)
    """Python tools' executables in the project's own environments, relative to the root:
    its virtualenvs' `bin`, then tox's (`flake8` -> `.tox/lint/bin/flake8`)."""
    node_bin: str | None = None
    """`node_modules/.bin` when present, relative to the root."""
    node_tools: frozenset[str] = frozenset()
    """Executables found in `node_bin` among the ones assay plans (`tsc`, `eslint`, ...)."""
    package_manager: str = "npm"
    package_manager_source: str = "default"
    package_scripts: Mapping[str, str] = field(default_factory=dict)
    """The root package.json's scripts, by name: what a CI line's `npm run check` runs."""
    hatch_scripts: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)
    """pyproject.toml's hatch scripts, by environment and name: what `hatch run cov` runs."""
    golangci_runs_govet: bool = True
    """Whether the project's golangci-lint runs govet (`.golangci.yml` may turn it off):
    where it does, `go vet` stands in for a golangci-lint run (`workflow_actions`)."""
    notes: tuple[str, ...] = ()
    tree: str | None = None
    """The tree the checks run in and the environment lies in, where the plan is read from
    another (the base commit's, under `--protect`): what the change holds is listed there."""

    @property
    def in_tree_python(self) -> bool:
        return self.python_source != "PATH"

    def python_module(self, module: str, *args: str) -> tuple[str, ...]:
        """`<python> -m module args`: the project's interpreter runs the tool, so the
        project's own installed packages and plugins are the ones in play."""
        return (self.python, "-m", module, *args)

    def python_tool(self, name: str, *args: str) -> tuple[str, ...]:
        """A standalone Python tool (a linter): from the virtualenv when installed there, else
        from another of the project's environments (tox's), else from PATH (a linter does
        not need the project's packages to run)."""
        if self.in_tree_python and name in self.venv_tools:
            return self.python_module(name, *args)
        return (self.tool_paths.get(name, name), *args)

    def node_tool(self, name: str) -> str:
        """The command for a node tool: the project's copy when installed, else the bare name."""
        if self.node_bin and name in self.node_tools:
            return f"{self.node_bin}/{name}"
        return name

    def to_dict(self) -> dict[str, Any]:
        return {
            "python": self.python,
            "python_source": self.python_source,
            "venv_dirs": list(self.venv_dirs),
            "venv_tools": sorted(self.venv_tools),
            "tool_paths": dict(sorted(self.tool_paths.items())),
            "node_bin": self.node_bin,
            "node_tools": sorted(self.node_tools),
            "package_manager": self.package_manager,
            "package_manager_source": self.package_manager_source,
            "notes": list(self.notes),
        }


#: Reads one file's text (text, path, env) into (candidates, dropped, errors). Pure.
FileParser = Callable[[str, str, ProjectEnv], tuple[list[Candidate], list[Dropped], list[str]]]


def parsed_report(
    detector: str,
    parsers: Mapping[str, FileParser],
    texts: Mapping[str, str],
    read_errors: list[str],
    env: ProjectEnv,
) -> DetectorReport:
    """A report from running each file's parser over its text (`texts` keys are `parsers` keys)."""
    found: list[Candidate] = []
    dropped: list[Dropped] = []
    errors = list(read_errors)
    for path, text in texts.items():
        more, more_dropped, problems = parsers[path](text, path, env)
        found += more
        dropped += more_dropped
        errors += problems
    return report(detector, found, dropped=dropped, errors=errors)

"""A task on disk: a folder holding `task.toml`, `instruction.md` and, optionally,
`solution.patch` (the oracle's answer).

`task.toml` is validated against the JSON Schema shipped beside this module
(`task.schema.json`, `task_schema()`); its `schema` key names the format's version, and
a major version this code does not know is refused with a clear error rather than read
by guesswork.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from assay.errors import AssayError

#: The major version of the task format this code reads.
SCHEMA_MAJOR = 1
TASK_FILE = "task.toml"
INSTRUCTION_FILE = "instruction.md"
SOLUTION_FILE = "solution.patch"
#: A task's files are written by people, not by the code under test, but are still bounded.
MAX_TASK_FILE_BYTES = 1024 * 1024
#: The agent's wall time when the task names none.
DEFAULT_WALL_S = 1800.0
#: How often a failing test is run again before it counts, when the task does not say.
DEFAULT_RERUN_FAILURES = 2


class TaskError(AssayError):
    """A task folder that cannot be used as it is; the message says which and why."""


@dataclass(frozen=True, slots=True)
class Source:
    """Where a task's code is: a git repository or a bundle, at its base commit."""

    commit: str
    repo: Path | None = None
    bundle: Path | None = None

    def describe(self) -> str:
        return f"{self.repo or self.bundle} at {self.commit}"


@dataclass(frozen=True, slots=True)
class Limits:
    """What the agent may spend: `wall_s` by the runner's deadline, tokens and cost on the
    usage the agent reports (`assay.eval.agent_limits`)."""

    wall_s: float = DEFAULT_WALL_S
    tokens: int | None = None
    cost_usd: float | None = None
    cpus: float | None = None
    """CPUs an attempt is given room for on a cluster node (`--executor ray`; default 1)."""
    memory_mb: int | None = None
    """Memory an attempt is given room for on a cluster node (`--executor ray`)."""


@dataclass(frozen=True, slots=True)
class TaskSpec:
    """One task, as `task.toml` and its folder define it."""

    id: str
    language: str
    source: Source
    instruction: str
    folder: Path
    schema: str = "1.0"
    version: str = "1"
    difficulty: str | None = None
    template: str | None = None
    tags: tuple[str, ...] = ()
    kinds: tuple[str, ...] | None = None
    """The kinds of check that verify it (None: every kind discovered)."""
    verify_timeout_s: float | None = None
    install: bool = False
    """Build the environment from the base's manifests before verifying (`--install`):
    for a repository whose tests need installed dependencies."""
    install_commands: tuple[str, ...] = ()
    """Shell commands run after the install steps (`install`), in the sandbox, network on:
    the task's own environment set-up."""
    rerun_failures: int = DEFAULT_RERUN_FAILURES
    """Failing tests run again up to this many times, each in a fresh process: one that
    passes on a rerun is flaky (`assay.reruns`), named, and never counted either way."""
    protected: tuple[str, ...] = ()
    """Globs of paths (beyond what `--protect` protects) the agent's change may not touch."""
    fail_to_pass: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    solution: Path | None = None
    """`solution.patch`, when the folder has one."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": self.schema,
            "id": self.id,
            "version": self.version,
            "language": self.language,
            "difficulty": self.difficulty,
            "template": self.template,
            "tags": list(self.tags),
            "folder": str(self.folder),
            "source": {
                "repo": str(self.source.repo) if self.source.repo else None,
                "bundle": str(self.source.bundle) if self.source.bundle else None,
                "commit": self.source.commit,
            },
            "kinds": list(self.kinds) if self.kinds is not None else None,
            "install": self.install,
            "install_commands": list(self.install_commands),
            "rerun_failures": self.rerun_failures,
            "protected": list(self.protected),
            "fail_to_pass": list(self.fail_to_pass),
            "pass_to_pass": list(self.pass_to_pass),
            "limits": {
                "wall_s": self.limits.wall_s,
                "tokens": self.limits.tokens,
                "cost_usd": self.limits.cost_usd,
                "cpus": self.limits.cpus,
                "memory_mb": self.limits.memory_mb,
            },
        }


@cache
def task_schema() -> dict[str, Any]:
    """The published JSON Schema of `task.toml`."""
    text = resources.files("assay.eval").joinpath("task.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def load_task(folder: str | Path) -> TaskSpec:
    """The task in `folder`; raises `TaskError` naming the folder and what is wrong."""
    root = Path(folder)
    if not root.is_dir():
        raise TaskError(f"{root}: not a task folder (no such directory)")
    data = _read_toml(root / TASK_FILE)
    check_schema_version(data, where=str(root / TASK_FILE))
    _validate(data, where=str(root / TASK_FILE))
    instruction = _read_text(root / INSTRUCTION_FILE)
    if not instruction.strip():
        raise TaskError(f"{root / INSTRUCTION_FILE}: the instruction is empty")
    solution = root / SOLUTION_FILE
    verification = data.get("verification", {})
    limits = data.get("limits", {})
    return TaskSpec(
        id=data["id"],
        language=data["language"],
        source=_source(root, data["source"]),
        instruction=instruction,
        folder=root.resolve(),
        schema=data["schema"],
        version=str(data.get("version", "1")),
        difficulty=data.get("difficulty"),
        template=data.get("template"),
        tags=tuple(data.get("tags", ())),
        kinds=tuple(verification["kinds"]) if "kinds" in verification else None,
        verify_timeout_s=verification.get("timeout_s"),
        install=bool(verification.get("install", False)),
        install_commands=tuple(verification.get("install_commands", ())),
        rerun_failures=int(verification.get("rerun_failures", DEFAULT_RERUN_FAILURES)),
        protected=tuple(data.get("protected", ())),
        fail_to_pass=tuple(data.get("fail_to_pass", ())),
        pass_to_pass=tuple(data.get("pass_to_pass", ())),
        limits=Limits(
            wall_s=float(limits.get("wall_s", DEFAULT_WALL_S)),
            tokens=limits.get("tokens"),
            cost_usd=limits.get("cost_usd"),
            cpus=limits.get("cpus"),
            memory_mb=limits.get("memory_mb"),
        ),
        solution=solution.resolve() if solution.is_file() else None,
    )


def find_task_folders(paths: list[str] | tuple[str, ...]) -> list[Path]:
    """Task folders named by `paths`: a folder holding `task.toml`, or a folder of them."""
    found: list[Path] = []
    for given in paths:
        path = Path(given)
        if (path / TASK_FILE).is_file():
            found.append(path)
        elif path.is_dir():
            inner = sorted(p.parent for p in path.glob(f"*/{TASK_FILE}"))
            if not inner:
                raise TaskError(f"{path}: no {TASK_FILE} in it or in its sub-folders")
            found.extend(inner)
        else:
            raise TaskError(f"{path}: no such task folder")
    return found


def check_schema_version(data: dict[str, Any], *, where: str) -> None:
    """Refuse a `schema` whose major version is not `SCHEMA_MAJOR`, before anything else is
    read: a newer format may mean something else by the same keys."""
    version = data.get("schema")
    if not isinstance(version, str):
        raise TaskError(f'{where}: no `schema` key (write schema = "{SCHEMA_MAJOR}.0")')
    major = version.split(".", 1)[0]
    if major != str(SCHEMA_MAJOR):
        raise TaskError(
            f"{where}: task schema {version!r} is not supported: this assay reads "
            f"schema {SCHEMA_MAJOR}.x (upgrade assay to read it)"
        )


def _validate(data: dict[str, Any], *, where: str) -> None:
    import jsonschema  # type: ignore[import-untyped]

    validator = jsonschema.Draft202012Validator(task_schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        lines = [f"{_at(e.absolute_path)}: {e.message}" for e in errors[:5]]
        raise TaskError(f"{where} does not match the task schema:\n  " + "\n  ".join(lines))


def _at(path: Any) -> str:
    return ".".join(str(part) for part in path) or "(top level)"


def _source(root: Path, data: dict[str, Any]) -> Source:
    # Relative to the task folder, so a folder of tasks can be moved as a whole.
    if "bundle" in data:
        bundle = (root / data["bundle"]).resolve()
        if not bundle.is_relative_to(root.resolve()):
            raise TaskError(f"{root / TASK_FILE}: source.bundle must be in the task folder")
        return Source(commit=data["commit"], bundle=bundle)
    return Source(commit=data["commit"], repo=(root / data["repo"]).resolve())


def _read_toml(path: Path) -> dict[str, Any]:
    text = _read_text(path)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TaskError(f"{path}: not valid TOML ({exc})") from None


def _read_text(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_TASK_FILE_BYTES + 1)
    except FileNotFoundError:
        raise TaskError(f"{path}: missing") from None
    except OSError as exc:
        raise TaskError(f"{path}: could not be read ({exc.strerror})") from None
    if len(data) > MAX_TASK_FILE_BYTES:
        raise TaskError(f"{path}: larger than {MAX_TASK_FILE_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise TaskError(f"{path}: not UTF-8 text") from None

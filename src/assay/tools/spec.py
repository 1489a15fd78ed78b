"""The shape of a tool declaration: everything assay knows about one tool, in one value.

A tool is declared once, in its ecosystem's module (`assay.tools.python`, `.node`, ...);
discovery's recogniser, the plan's tuning, the toolchain registry, the instrumentation,
the parsers, install steps, dependency caches and protected files are all read from
these declarations, so a tool cannot be known to one of them and forgotten by another.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from assay.evidence import Check, CheckerId

# Declared in the index (readable without loading any declaration), used by them from here.
from assay.tools.index import ANY_VERSION, Ecosystem
from assay.tools.instrumented import Rule
from assay.verdict import Kind

# --------------------------------------------------------------------------- recognising

#: Script or target names (`npm run test`, `make lint`) and the kind they answer.
SCRIPT_KINDS: Mapping[str, Kind] = {
    "test": Kind.TEST,
    "tests": Kind.TEST,
    "lint": Kind.LINT,
    "typecheck": Kind.TYPECHECK,
    "type-check": Kind.TYPECHECK,
    "types": Kind.TYPECHECK,
    "tsc": Kind.TYPECHECK,
    "mypy": Kind.TYPECHECK,
    "build": Kind.BUILD,
    "compile": Kind.BUILD,
}


@dataclass(frozen=True, slots=True)
class Match:
    """What a command line runs, as one `Command` reads it."""

    kind: Kind
    args: tuple[str, ...]
    """The tool's own arguments (after `pytest`, after `go test`)."""
    name: str | None = None
    """The check's name when it is not the tool's (`go-test` for the `go` tool)."""


#: Options that ask a tool about itself: a command of only these runs no check.
ASKS_THE_TOOL = frozenset({"--version", "-V", "--help", "-h"})

#: Reads the words after the tool's first word; None when the command is not a check.
Matcher = Callable[[list[str]], "Match | None"]


@dataclass(frozen=True, slots=True)
class Command:
    """One way a command line names a tool: its first word, and which question it answers."""

    words: tuple[str, ...]
    """Basenames of the first word (`pytest`, `py.test`)."""
    kind: Kind | None = None
    """The question every use answers; None: `match` decides."""
    match: Matcher | None = None
    """Decides from the arguments (`go test` vs `go vet`, `tsc --watch` is no check)."""

    def read(self, rest: list[str]) -> Match | None:
        if self.match is not None:
            return self.match(rest)
        assert self.kind is not None, "a Command needs a kind or a matcher"
        return Match(self.kind, tuple(rest))


class Launch(enum.StrEnum):
    """How a recognised command is re-targeted at the project's own copy of the tool."""

    AS_WRITTEN = "as-written"
    PYTHON_MODULE = "python-module"
    """`<project python> -m tool`: the project's packages and plugins are the ones in play."""
    PYTHON_TOOL = "python-tool"
    """From the project's virtualenv when installed there, else from PATH."""
    NODE_BIN = "node-bin"
    """From `node_modules/.bin` when installed there, else from PATH."""


# --------------------------------------------------------------------------- instrumenting


#: Makes a discovered argv quiet, fail-fast and side-effect free: (argv, fail_fast) -> argv.
Tuner = Callable[[list[str], bool], list[str]]


def after_subcommand(argv: tuple[str, ...], subcommand: str, *flags: str) -> tuple[str, ...]:
    """`flags` inserted right after `subcommand` (before package lists and `--`)."""
    if subcommand not in argv:
        return argv
    at = argv.index(subcommand) + 1
    return (*argv[:at], *flags, *argv[at:])


_NUMBERS = re.compile(r"\d+")


def version_at_least(checker: CheckerId | None, wanted: tuple[int, ...]) -> bool:
    """Whether the probed version is at least `wanted` (False when nothing was probed)."""
    if checker is None:
        return False
    numbers = tuple(int(n) for n in _NUMBERS.findall(checker.version)[: len(wanted)])
    return numbers >= wanted


# --------------------------------------------------------------------------- the declaration


@dataclass(frozen=True, slots=True)
class RootConfig:
    """A tool the project configures at its root (`jest.config.js`) and so runs, even
    where no script or CI step names it."""

    files: tuple[str, ...]
    """Names at the repository root, most specific first; the first present is cited."""
    kind: Kind
    args: tuple[str, ...] = ()
    """The tool's arguments for a one-shot, non-interactive check (`vitest run`)."""


@dataclass(frozen=True, slots=True)
class Launcher:
    """A word that runs another command (`uv run pytest`, `npx tsc`, `time make test`)."""

    subcommand: bool = False
    """The command follows a `run`/`exec` subcommand (`uv run X`), not the word itself."""
    options: bool = False
    """Options may stand between the launcher and the command (`npx --no-install tsc`)."""
    valued: frozenset[str] = frozenset()
    """Those options that take the next word as their value (`uv run --group dev ruff`)."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """Everything assay knows about one logical tool (the name `Check.tool` spells)."""

    name: str
    ecosystem: Ecosystem
    binaries: tuple[str, ...] = ()
    """Binaries to look for on PATH, in order of preference. Empty: not a toolchain of its
    own (a command the repository names); it is identified by its file's digest, never run."""
    version_args: tuple[str, ...] = ("--version",)
    version_pattern: re.Pattern[str] = ANY_VERSION
    """Group 1 is the version string as the tool reports it."""
    module: str | None = None
    """The Python module name when the tool can also run as `python -m <module>`."""
    install_hint: str = ""
    local_dirs: tuple[str, ...] = ()
    """Project-local bin directories (relative to the root) searched before PATH."""
    commands: tuple[Command, ...] = ()
    """How discovery recognises the tool in a written command line."""
    launch: Launch = Launch.AS_WRITTEN
    tune: Tuner | None = None
    instrument: Rule | None = None
    parser: tuple[str, str] = ("generic", "parse")
    """(module under `assay.parsers`, function): imported on first use."""
    canary: tuple[str, str] | None = None
    """(module under `assay.canaries`, function): plants the canary tests of one test run
    (one must fail, one must pass); None: its runs carry none, and their evidence says so."""
    wrapper: bool = False
    """Runs whatever the project says (`make test`, `npm test`): its output is read
    generically and its check is named after the command, not the tool."""
    check_only_build: bool = False
    """A build whose output nothing later reads (byte-compiling into a scratch prefix):
    it runs beside the type checkers and linters instead of before them."""
    config_files: tuple[str, ...] = ()
    """Globs of files that decide how the tool finds, runs or reports tests, or what it
    checks and how strictly (protected)."""
    dependency_env: Callable[[Path], Mapping[str, str]] | None = None
    """Where the tool keeps downloaded dependencies, given the workspace's deps directory."""
    root_config: RootConfig | None = None
    """Config files whose presence at the root means the project runs this tool."""

    @property
    def is_toolchain(self) -> bool:
        """Whether assay can find and identify this tool by itself (it has binaries)."""
        return bool(self.binaries)


# --------------------------------------------------------------------------- manifests


@dataclass(frozen=True, slots=True)
class Native:
    """A command a manifest implies (`pom.xml` -> `mvn -q test`), before discovery ranks it."""

    kind: Kind
    argv: tuple[str, ...]
    tool: str
    reason: str
    name: str | None = None
    redundant_with: frozenset[str] = frozenset()
    """Check names whose planned check already answers this one."""


#: Reads one manifest: (its path, its text, the names at the root) -> (commands, problems).
ManifestReader = Callable[[str, str, frozenset[str]], "tuple[list[Native], list[str]]"]


@dataclass(frozen=True, slots=True)
class Manifest:
    """Root files that say how a project builds and tests; read as text, never run."""

    files: tuple[str, ...]
    """Names at the repository root; the first one present is the manifest read."""
    read: ManifestReader


# --------------------------------------------------------------------------- ecosystems


@dataclass(frozen=True, slots=True)
class TamperMarkers:
    """How an ecosystem's test files name tests, skip them and assert (for tampering).

    Each pattern is a regex fragment joined with the other ecosystems' by `|`: groups
    a fragment refers back to must be named, uniquely across ecosystems."""

    test_names: tuple[re.Pattern[str], ...] = ()
    """Each match's last group is a test's name."""
    skip: str = ""
    only: str = ""
    """Focus markers that silently drop every other test (`.only`, `fit`)."""
    trivial_assertions: str = ""
    """Assertions that cannot fail (`assert True`); matched per line."""
    assertions: str = ""
    in_file: str = ""
    """Where tests start inside a source file (Rust's `#[cfg(test)]`): from its first match
    on, a changed source file is judged with these markers, as a test file is."""
    source_suffixes: tuple[str, ...] = ()
    """The source files `in_file` is looked for in."""


@dataclass(frozen=True, slots=True)
class EcosystemSpec:
    """One ecosystem: its tools, its test files, how a fresh clone gets its dependencies."""

    ecosystem: Ecosystem
    tools: tuple[ToolSpec, ...]
    label: str = "unknown"
    """How messages name it: a missing toolchain is reported as `typescript toolchain missing`."""
    manifests: tuple[Manifest, ...] = ()
    """Root files that imply native commands (discovery's manifest detector reads them)."""
    test_files: tuple[str, ...] = ()
    """Globs of test files, protected from a change under verification."""
    config_sections: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Shared files where only some sections decide how tests run: file -> dotted keys."""
    markers: TamperMarkers = field(default_factory=TamperMarkers)
    install: Callable[[Path], list[Check]] | None = None
    """Install steps for a project at a root (`assay verify --install`)."""
    generic_commands: tuple[Command, ...] = ()
    """Commands recognised as checks of this ecosystem whose output is read generically
    (the `shell` tool): flake8, mocha, `cargo clippy`."""
    steering_env: tuple[str, ...] = ()
    """Environment variable prefixes that can change which version of a tool answers."""
    home_dirs: tuple[str, ...] = ()
    """Toolchain directories under a home (`.cargo/bin`) a sandbox may show read-only."""
    launchers: Mapping[str, Launcher] = field(default_factory=dict)
    """Words that run another command, dropped before recognising the real one."""


# --------------------------------------------------------------------------- install steps

#: Deadline for one install step: downloading dependencies is slow, but not unbounded.
INSTALL_TIMEOUT_S = 900.0


def install_step(
    name: str, argv: tuple[str, ...], source: str, reason: str, tool: str | None = None
) -> Check:
    """One install step: a build-kind check with the install deadline."""
    return Check(
        name=f"install-{name}",
        kind=Kind.BUILD,
        argv=argv,
        timeout_s=INSTALL_TIMEOUT_S,
        tool=tool,
        source=source,
        reason=reason,
    )

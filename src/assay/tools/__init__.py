"""Every tool assay knows, declared once per ecosystem (`python`, `node`, `go`, `rust`,
`java`, `generic`), and the views the rest of assay reads from those declarations.

Adding a language is adding a module here with its `ECOSYSTEM` and listing it in
`ECOSYSTEMS`; the recogniser, plan, toolchain registry, instrumentation, parsers,
install steps, dependency caches and protected files follow from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from assay.evidence import Check
from assay.tools import generic, go, java, node, python, rust
from assay.tools.spec import (
    Command,
    Ecosystem,
    EcosystemSpec,
    Launch,
    Launcher,
    Match,
    RootConfig,
    ToolSpec,
)

__all__ = [
    "ECOSYSTEMS",
    "SHELL",
    "TOOLS",
    "Ecosystem",
    "EcosystemSpec",
    "Recognition",
    "ToolSpec",
    "dependency_caches",
    "ecosystem_spec",
    "install_steps",
    "recognise_words",
    "tool_spec",
]

#: The logical tool of commands run as written and read generically.
SHELL = generic.SHELL

#: Every ecosystem, in the order their install steps run and their tools are listed.
ECOSYSTEMS: tuple[EcosystemSpec, ...] = (
    python.ECOSYSTEM,
    node.ECOSYSTEM,
    go.ECOSYSTEM,
    rust.ECOSYSTEM,
    java.ECOSYSTEM,
    generic.ECOSYSTEM,
)


def _tools() -> Mapping[str, ToolSpec]:
    tools: dict[str, ToolSpec] = {}
    for ecosystem in ECOSYSTEMS:
        for spec in ecosystem.tools:
            if spec.name in tools:
                raise RuntimeError(f"tool {spec.name!r} is declared twice")
            if spec.ecosystem is not ecosystem.ecosystem:
                raise RuntimeError(f"tool {spec.name!r} is declared in the wrong ecosystem")
            tools[spec.name] = spec
    return tools


#: Every declared tool, by the name `Check.tool` spells.
TOOLS: Mapping[str, ToolSpec] = _tools()


def tool_spec(name: str | None) -> ToolSpec | None:
    """The declaration of tool `name`, or None when assay does not know it."""
    return TOOLS.get(name or "")


def ecosystem_spec(ecosystem: Ecosystem) -> EcosystemSpec:
    return next(e for e in ECOSYSTEMS if e.ecosystem is ecosystem)


# --------------------------------------------------------------------------- recognising


@dataclass(frozen=True, slots=True)
class Recognition:
    """A command line's first word and arguments read as one declared tool's check."""

    tool: str
    ecosystem: Ecosystem
    match: Match


def _by_word() -> Mapping[str, tuple[tuple[str, Ecosystem, Command], ...]]:
    table: dict[str, list[tuple[str, Ecosystem, Command]]] = {}
    for ecosystem in ECOSYSTEMS:
        entries = [
            (spec.name, ecosystem.ecosystem, c) for spec in ecosystem.tools for c in spec.commands
        ]
        entries += [(SHELL, ecosystem.ecosystem, c) for c in ecosystem.generic_commands]
        for tool, eco, command in entries:
            for word in command.words:
                table.setdefault(word, []).append((tool, eco, command))
    return {word: tuple(entries) for word, entries in table.items()}


#: First words of command lines -> the declared commands that may read them, in order.
COMMAND_WORDS: Mapping[str, tuple[tuple[str, Ecosystem, Command], ...]] = _by_word()


def recognise_words(head: str, rest: list[str]) -> Recognition | None:
    """The check `head rest...` runs (`head` is the basename of the first word), or None."""
    for tool, ecosystem, command in COMMAND_WORDS.get(head, ()):
        match = command.read(rest)
        if match is not None:
            return Recognition(tool, ecosystem, match)
    return None


def command_words(tool: str) -> frozenset[str]:
    """The first words tool `tool` is recognised by (`tsc`, `vue-tsc`)."""
    spec = TOOLS.get(tool)
    return frozenset(w for c in (spec.commands if spec else ()) for w in c.words)


#: Words that run another command (`uv run`, `npx`, `time`), from every ecosystem.
LAUNCHERS: Mapping[str, Launcher] = {w: l for e in ECOSYSTEMS for w, l in e.launchers.items()}


def _words_launched(*launches: Launch) -> frozenset[str]:
    return frozenset(
        w for spec in TOOLS.values() if spec.launch in launches for w in command_words(spec.name)
    )


#: Programs a project installs into its virtualenv's bin directory and assay plans from there.
VENV_TOOL_WORDS = _words_launched(Launch.PYTHON_MODULE, Launch.PYTHON_TOOL)

#: Programs a project installs into `node_modules/.bin`: the declared node tools and the
#: node test runners whose output is read generically (mocha).
NODE_BIN_WORDS = _words_launched(Launch.NODE_BIN) | frozenset(
    w for c in node.ECOSYSTEM.generic_commands for w in c.words
)

#: Tools a project runs because it configures them at its root, with their declaration.
ROOT_CONFIGURED: tuple[tuple[ToolSpec, RootConfig], ...] = tuple(
    (spec, spec.root_config) for spec in TOOLS.values() if spec.root_config is not None
)


# --------------------------------------------------------------------------- environments


def install_steps(root: Path) -> list[Check]:
    """The install steps for the project at `root`, ecosystem by ecosystem."""
    return [step for e in ECOSYSTEMS if e.install is not None for step in e.install(root)]


def dependency_caches(workspace: Path) -> dict[str, str]:
    """Where installed dependencies go: inside the workspace, so that later checks (each
    with its own scratch HOME) find what the install steps downloaded."""
    deps = workspace / ".assay-deps"
    caches: dict[str, str] = {}
    for spec in TOOLS.values():
        if spec.dependency_env is not None:
            caches.update(spec.dependency_env(deps))
    return caches


def steering_env_prefixes() -> tuple[str, ...]:
    """Environment variable prefixes that can change which version of a tool answers."""
    return tuple(dict.fromkeys(p for e in ECOSYSTEMS for p in e.steering_env))


def home_toolchain_dirs() -> tuple[str, ...]:
    """Toolchain directories under a home, relative to it (what a sandbox may show)."""
    return tuple(dict.fromkeys(d for e in ECOSYSTEMS for d in e.home_dirs))

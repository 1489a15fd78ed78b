"""Every tool assay knows, declared once per ecosystem (`python`, `node`, `go`, `rust`,
`java`, `cmake`, `autotools`, `meson`, `generic`), and the views the rest of assay reads
from those declarations.

Adding a language is adding a module here with its `ECOSYSTEM` and listing it, its tools,
steering variables and home directories in `assay.tools.index`; the recogniser, plan,
toolchain registry, instrumentation, parsers, install steps, dependency caches and
protected files follow from it.

The declarations load lazily: `tool_spec(name)` imports the one module that declares
`name` (the index says which), and the tables below (`TOOLS`, `ECOSYSTEMS`,
`COMMAND_WORDS`...) are built, from every module, when first read.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.tools.index import (
    HOME_DIRS,
    MODULES,
    SHELL,
    STEERING_ENV,
    TOOL_ECOSYSTEMS,
    TOOL_NAMES,
    Ecosystem,
)

if TYPE_CHECKING:
    from assay.evidence import Check
    from assay.tools.spec import (
        Command,
        EcosystemSpec,
        Launch,
        Launcher,
        Match,
        RootConfig,
        ToolSpec,
    )

    #: Every ecosystem, in the order their install steps run and their tools are listed.
    ECOSYSTEMS: tuple[EcosystemSpec, ...]
    #: Every declared tool, by the name `Check.tool` spells.
    TOOLS: Mapping[str, ToolSpec]
    #: First words of command lines -> the declared commands that may read them, in order.
    COMMAND_WORDS: Mapping[str, tuple[tuple[str, Ecosystem, Command], ...]]
    #: Words that run another command (`uv run`, `npx`, `time`), from every ecosystem.
    LAUNCHERS: Mapping[str, Launcher]
    #: Programs a project installs into its virtualenv's bin directory and assay plans from there.
    VENV_TOOL_WORDS: frozenset[str]
    #: Programs a project installs into `node_modules/.bin`: the declared node tools and the
    #: node test runners whose output is read generically (mocha).
    NODE_BIN_WORDS: frozenset[str]
    #: Tools a project runs because it configures them at its root, with their declaration.
    ROOT_CONFIGURED: tuple[tuple[ToolSpec, RootConfig], ...]

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

_loaded: dict[Ecosystem, EcosystemSpec] = {}


def ecosystem_spec(ecosystem: Ecosystem) -> EcosystemSpec:
    """The declarations of `ecosystem`, its module imported (and checked) on first use."""
    spec = _loaded.get(ecosystem)
    if spec is None:
        # `__import__`, not `importlib.import_module`: `-X importtime` shows what it loads.
        module = __import__(f"assay.tools.{MODULES[ecosystem]}", fromlist=["ECOSYSTEM"])
        spec = module.ECOSYSTEM
        _check_indexed(spec)
        _loaded[ecosystem] = spec
    return spec


def _check_indexed(spec: EcosystemSpec) -> None:
    """Refuse a module that declares other than `assay.tools.index` says it does."""
    eco = spec.ecosystem
    names = tuple(t.name for t in spec.tools)
    if names != TOOL_NAMES[eco]:
        raise RuntimeError(f"{eco} declares {names}, the index lists {TOOL_NAMES[eco]}")
    wrong = [t.name for t in spec.tools if t.ecosystem is not eco]
    if wrong:
        raise RuntimeError(f"tools {wrong} are declared in the wrong ecosystem ({eco})")
    if spec.steering_env != STEERING_ENV[eco] or spec.home_dirs != HOME_DIRS[eco]:
        raise RuntimeError(f"{eco}'s steering variables or home directories differ from the index")


def tool_spec(name: str | None) -> ToolSpec | None:
    """The declaration of tool `name`, or None when assay does not know it (nothing loaded)."""
    ecosystem = TOOL_ECOSYSTEMS.get(name or "")
    if ecosystem is None:
        return None
    return next(t for t in ecosystem_spec(ecosystem).tools if t.name == name)


@functools.cache
def _ecosystems() -> tuple[EcosystemSpec, ...]:
    return tuple(ecosystem_spec(e) for e in MODULES)


@functools.cache
def _tools() -> Mapping[str, ToolSpec]:
    tools: dict[str, ToolSpec] = {}
    for ecosystem in _ecosystems():
        for spec in ecosystem.tools:
            if spec.name in tools:
                raise RuntimeError(f"tool {spec.name!r} is declared twice")
            tools[spec.name] = spec
    return tools


def __getattr__(name: str) -> Any:
    """The tables of every declaration, each built once, when first read."""
    build = _TABLES.get(name)
    if build is None:
        if name in ("EcosystemSpec", "ToolSpec"):
            from assay.tools import spec

            return getattr(spec, name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return build()


# --------------------------------------------------------------------------- recognising


@dataclass(frozen=True, slots=True)
class Recognition:
    """A command line's first word and arguments read as one declared tool's check."""

    tool: str
    ecosystem: Ecosystem
    match: Match


@functools.cache
def _by_word() -> Mapping[str, tuple[tuple[str, Ecosystem, Command], ...]]:
    table: dict[str, list[tuple[str, Ecosystem, Command]]] = {}
    for ecosystem in _ecosystems():
        entries = [
            (spec.name, ecosystem.ecosystem, c) for spec in ecosystem.tools for c in spec.commands
        ]
        entries += [(SHELL, ecosystem.ecosystem, c) for c in ecosystem.generic_commands]
        for tool, eco, command in entries:
            for word in command.words:
                table.setdefault(word, []).append((tool, eco, command))
    return {word: tuple(entries) for word, entries in table.items()}


def recognise_words(head: str, rest: list[str]) -> Recognition | None:
    """The check `head rest...` runs (`head` is the basename of the first word), or None."""
    for tool, ecosystem, command in _by_word().get(head, ()):
        match = command.read(rest)
        if match is not None:
            return Recognition(tool, ecosystem, match)
    return None


def command_words(tool: str) -> frozenset[str]:
    """The first words tool `tool` is recognised by (`tsc`, `vue-tsc`)."""
    spec = tool_spec(tool)
    return frozenset(w for c in (spec.commands if spec else ()) for w in c.words)


@functools.cache
def _launchers() -> Mapping[str, Launcher]:
    return {w: l for e in _ecosystems() for w, l in e.launchers.items()}


def _words_launched(*launches: Launch) -> frozenset[str]:
    return frozenset(
        w for spec in _tools().values() if spec.launch in launches for w in command_words(spec.name)
    )


@functools.cache
def _venv_tool_words() -> frozenset[str]:
    from assay.tools.spec import Launch

    return _words_launched(Launch.PYTHON_MODULE, Launch.PYTHON_TOOL)


@functools.cache
def _node_bin_words() -> frozenset[str]:
    from assay.tools.spec import Launch

    node = ecosystem_spec(Ecosystem.NODE)
    return _words_launched(Launch.NODE_BIN) | frozenset(
        w for c in node.generic_commands for w in c.words
    )


@functools.cache
def _root_configured() -> tuple[tuple[ToolSpec, RootConfig], ...]:
    return tuple(
        (spec, spec.root_config) for spec in _tools().values() if spec.root_config is not None
    )


# --------------------------------------------------------------------------- environments


def install_steps(root: Path) -> list[Check]:
    """The install steps for the project at `root`, ecosystem by ecosystem."""
    return [step for e in _ecosystems() if e.install is not None for step in e.install(root)]


#: Where in the workspace the install steps keep what they download.
DEPENDENCY_DIR = ".assay-deps"


def dependency_caches(workspace: Path) -> dict[str, str]:
    """Where installed dependencies go: inside the workspace, so that later checks (each
    with its own scratch HOME) find what the install steps downloaded."""
    deps = workspace / DEPENDENCY_DIR
    caches: dict[str, str] = {}
    for spec in _tools().values():
        if spec.dependency_env is not None:
            caches.update(spec.dependency_env(deps))
    return caches


def steering_env_prefixes() -> tuple[str, ...]:
    """Environment variable prefixes that can change which version of a tool answers."""
    return tuple(dict.fromkeys(p for e in MODULES for p in STEERING_ENV[e]))


def home_toolchain_dirs() -> tuple[str, ...]:
    """Toolchain directories under a home, relative to it (what a sandbox may show)."""
    return tuple(dict.fromkeys(d for e in MODULES for d in HOME_DIRS[e]))


_TABLES = {
    "ECOSYSTEMS": _ecosystems,
    "TOOLS": _tools,
    "COMMAND_WORDS": _by_word,
    "LAUNCHERS": _launchers,
    "VENV_TOOL_WORDS": _venv_tool_words,
    "NODE_BIN_WORDS": _node_bin_words,
    "ROOT_CONFIGURED": _root_configured,
}

"""assay's own configuration: `[tool.assay]` in pyproject.toml or an `assay.toml` (pure parsing).

The schema, every key optional::

    [tool.assay]                    # or the top level of assay.toml
    timeout = 60                    # a fixed deadline per check, in seconds (default: none, but
                                    # stopped after 60 s without output and at 600 s)
    require_tests = true            # VERIFIED needs a test check that ran tests
    required = ["build", "test"]    # kinds that must be planned, or the plan says so
    skip = ["lint"]                 # kinds never planned
    protect = ["fixtures/**"]       # more paths `--base REF` guards (globs, `**/` spans dirs)

    [tool.assay.commands]           # explicit commands, one per kind; they outrank discovery
    test = "pytest -q -x"           # a shell-like string (split, never run by a shell)
    lint = ["ruff", "check", "."]   # or an argv list
    typecheck = { command = "mypy src", timeout = 300, tool = "mypy", cwd = ".", env = { X = "1" } }

Unknown keys are errors, not ignored: a misspelt `requre_tests` silently ignored
would quietly weaken the gate.

Under `assay verify --base REF --protect` every key is read from the base commit's
configuration, never the change's: a change cannot name its own commands, drop tests or
unprotect its fixtures. `protect` adds to the files assay always guards there (tests,
runner configuration, CI): they are restored from the base, and a change to them is a
tampering signal.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from assay.errors import AssayError
from assay.verdict import Kind

_TOP_KEYS = frozenset({"timeout", "require_tests", "required", "skip", "commands", "protect"})
_COMMAND_KEYS = frozenset({"command", "timeout", "tool", "cwd", "env"})


class ConfigError(AssayError, ValueError):
    """assay's configuration exists but is malformed; the message names the file and key."""


@dataclass(frozen=True, slots=True)
class ConfiguredCommand:
    """One explicit command from the configuration."""

    kind: Kind
    argv: tuple[str, ...]
    line: int | None = None
    timeout_s: float | None = None
    tool: str | None = None
    """The logical tool, when given; otherwise recognised from the command."""
    cwd: str = "."
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AssayConfig:
    """What the repository's assay configuration asks for."""

    source: str
    """The file it came from (`assay.toml`, `pyproject.toml`)."""
    timeout_s: float | None = None
    require_tests: bool | None = None
    required: frozenset[Kind] = frozenset()
    skip: frozenset[Kind] = frozenset()
    commands: tuple[ConfiguredCommand, ...] = ()
    protect: tuple[str, ...] = ()
    """Globs of repository-relative paths guarded like tests (`assay.protect`)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "timeout_s": self.timeout_s,
            "require_tests": self.require_tests,
            "required": sorted(k.value for k in self.required),
            "skip": sorted(k.value for k in self.skip),
            "commands": {c.kind.value: list(c.argv) for c in self.commands},
            "protect": list(self.protect),
        }


def load_toml(text: str, source: str) -> dict[str, Any]:
    """Parse TOML text, turning every parser complaint into a ConfigError naming `source`."""
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError) as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}") from None


def from_pyproject(text: str) -> AssayConfig | None:
    """The `[tool.assay]` table of a pyproject.toml, or None when it has none."""
    data = load_toml(text, "pyproject.toml")
    tool = data.get("tool")
    if not isinstance(tool, dict) or "assay" not in tool:
        return None
    return parse_config(tool["assay"], "pyproject.toml", text, table="tool.assay")


def from_assay_toml(text: str) -> AssayConfig:
    """An assay.toml: its top level, or its `[tool.assay]` table if it has one."""
    data = load_toml(text, "assay.toml")
    tool = data.get("tool")
    if isinstance(tool, dict) and "assay" in tool and len(data) == 1:
        return parse_config(tool["assay"], "assay.toml", text, table="tool.assay")
    return parse_config(data, "assay.toml", text, table="")


def parse_config(data: Any, source: str, text: str = "", *, table: str = "") -> AssayConfig:
    """Validate an already-parsed configuration table."""
    where = f"{source} [{table}]" if table else source
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a table, got {_type(data)}")
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_TOP_KEYS))})"
        )
    commands_table = data.get("commands", {})
    if not isinstance(commands_table, dict):
        raise ConfigError(f"{where}: 'commands' must be a table of kind = command")
    commands_header = f"{table}.commands" if table else "commands"
    return AssayConfig(
        source=source,
        timeout_s=_timeout(data.get("timeout"), f"{where} timeout"),
        require_tests=_bool(data.get("require_tests"), f"{where} require_tests"),
        required=_kinds(data.get("required", []), f"{where} required"),
        skip=_kinds(data.get("skip", []), f"{where} skip"),
        protect=_globs(data.get("protect", []), f"{where} protect"),
        commands=tuple(
            _command(name, value, f"{where} commands.{name}", _line_of(text, name, commands_header))
            for name, value in commands_table.items()
        ),
    )


def _command(name: str, value: Any, where: str, line: int | None) -> ConfiguredCommand:
    kind = _kind(name, where)
    options: dict[str, Any] = {}
    if isinstance(value, dict):
        unknown = sorted(set(value) - _COMMAND_KEYS)
        if unknown:
            known = ", ".join(sorted(_COMMAND_KEYS))
            raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known: {known})")
        if "command" not in value:
            raise ConfigError(f"{where}: missing 'command'")
        options = value
        value = value["command"]
    argv = _argv(value, where)
    env = options.get("env", {})
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in env.items()
    ):
        raise ConfigError(f"{where}.env: expected a table of string = string")
    tool = options.get("tool")
    if tool is not None and (not isinstance(tool, str) or not tool):
        raise ConfigError(f"{where}.tool: expected a tool name string")
    cwd = options.get("cwd", ".")
    if not isinstance(cwd, str) or not cwd:
        raise ConfigError(f"{where}.cwd: expected a directory string")
    return ConfiguredCommand(
        kind=kind,
        argv=argv,
        line=line,
        timeout_s=_timeout(options.get("timeout"), f"{where}.timeout"),
        tool=tool,
        cwd=cwd,
        env=dict(env),
    )


def _argv(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        try:
            argv = tuple(shlex.split(value))
        except ValueError as exc:
            raise ConfigError(f"{where}: cannot split command {value!r}: {exc}") from None
    elif isinstance(value, list) and all(isinstance(w, str) for w in value):
        argv = tuple(value)
    else:
        raise ConfigError(
            f"{where}: expected a command string or a list of strings, got {_type(value)}"
        )
    if not argv or not argv[0]:
        raise ConfigError(f"{where}: empty command")
    return argv


def _kind(name: Any, where: str) -> Kind:
    try:
        return Kind(name)
    except ValueError:
        known = ", ".join(k.value for k in Kind)
        raise ConfigError(f"{where}: unknown kind {name!r} (known: {known})") from None


def _kinds(value: Any, where: str) -> frozenset[Kind]:
    if not isinstance(value, list):
        raise ConfigError(f"{where}: expected a list of kinds, got {_type(value)}")
    return frozenset(_kind(v, where) for v in value)


def _globs(value: Any, where: str) -> tuple[str, ...]:
    """Repository-relative globs: a path that leaves the repository guards nothing there."""
    if not isinstance(value, list):
        raise ConfigError(f"{where}: expected a list of path globs, got {_type(value)}")
    globs: list[str] = []
    for glob in value:
        if not isinstance(glob, str) or not glob.strip():
            raise ConfigError(f"{where}: expected a non-empty path glob, got {glob!r}")
        parts = glob.removeprefix("./").split("/")
        if glob.startswith("/") or "\\" in glob or "\0" in glob or ".." in parts:
            raise ConfigError(
                f"{where}: {glob!r} is not a path inside the repository "
                "(relative, `/`-separated, no `..`)"
            )
        globs.append(glob.removeprefix("./"))
    return tuple(dict.fromkeys(globs))


def _timeout(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 86_400:
        raise ConfigError(
            f"{where}: expected a number of seconds between 0 and 86400, got {value!r}"
        )
    return float(value)


def _bool(value: Any, where: str) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise ConfigError(f"{where}: expected true or false, got {value!r}")


def _type(value: Any) -> str:
    return {dict: "a table", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


def _line_of(text: str, key: str, header: str) -> int | None:
    """Best-effort 1-based line where `key = ...` is written (tomllib keeps no positions).

    The search starts at the `[header]` line when there is one, so a command's line is
    not taken from an earlier `test = [...]` in `[project.optional-dependencies]`."""
    lines = text.splitlines()
    header_line = re.compile(rf"^\s*\[\s*{re.escape(header)}\s*\]")
    start = next((i for i, line in enumerate(lines) if header_line.match(line)), 0)
    pattern = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
    for number, line in enumerate(lines[start:], start=start + 1):
        if pattern.match(line):
            return number
    return None

"""Recognising check commands in text: which kind and tool a shell line runs (pure).

Used wherever a command is written down rather than configured: Makefile
recipes, CI `run:` steps, tox `commands`, README code blocks. It never runs
anything; it reads words.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from assay.discovery.model import Ecosystem, ProjectEnv
from assay.verdict import Kind

#: Words that run another command, dropped before looking at the real one.
_RUNNER_PREFIXES: dict[str, int] = {
    "uv": 2,  # uv run X
    "poetry": 2,
    "pdm": 2,
    "hatch": 2,
    "pipenv": 2,
    "rye": 2,
    "npx": 1,
    "bunx": 1,
    "pnpx": 1,
    "time": 1,
    "exec": 1,
    "command": 1,
}

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True, slots=True)
class Recognised:
    """What a command line runs, with the tool's own arguments."""

    kind: Kind
    tool: str
    ecosystem: Ecosystem
    args: tuple[str, ...]
    """Arguments after the tool (after `pytest`, after `go test`)."""
    argv: tuple[str, ...]
    """The whole command as written, without leading variable assignments."""
    env: tuple[tuple[str, str], ...] = ()
    """Leading `NAME=value` assignments."""
    script: str | None = None
    """For package-manager and task-runner commands: the script or target invoked."""


def split_commands(line: str) -> list[list[str]]:
    """Shell words of each simple command in `line` (split on `&&`, `||`, `;`, `|`).

    Raises ValueError for text the shell would not accept (an unclosed quote)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    commands: list[list[str]] = [[]]
    for token in lexer:
        if token and set(token) <= set(";&|"):
            commands.append([])
        else:
            commands[-1].append(token)
    return [c for c in commands if c]


def recognise_line(line: str) -> list[Recognised]:
    """Every check command in one shell line, in order; [] when none or unparsable."""
    try:
        commands = split_commands(line)
    except ValueError:
        return []
    found = []
    for words in commands:
        hit = recognise(words)
        if hit is not None:
            found.append(hit)
    return found


def recognise(words: list[str] | tuple[str, ...]) -> Recognised | None:
    """The check a single command runs, or None when it is not one assay knows."""
    words = list(words)
    env: list[tuple[str, str]] = []
    while words and _ASSIGNMENT.match(words[0]):
        name, _, value = words.pop(0).partition("=")
        env.append((name, value))
    if words and words[0] == "env":
        words.pop(0)
        while words and _ASSIGNMENT.match(words[0]):
            name, _, value = words.pop(0).partition("=")
            env.append((name, value))
    argv = tuple(words)
    core = _strip_runners(words)
    if not core:
        return None
    hit = _recognise_core(core)
    if hit is None:
        return None
    kind, tool, ecosystem, args, script = hit
    return Recognised(kind, tool, ecosystem, tuple(args), argv, tuple(env), script)


def _strip_runners(words: list[str]) -> list[str]:
    words = list(words)
    for _ in range(4):  # `uv run python -m pytest` peels twice; bounded
        if not words:
            return words
        head = _basename(words[0])
        if head in _RUNNER_PREFIXES and (
            _RUNNER_PREFIXES[head] == 1 or (len(words) > 1 and words[1] in ("run", "exec"))
        ):
            words = words[_RUNNER_PREFIXES[head] :]
            while words and words[0].startswith("-") and head in ("npx", "bunx", "pnpx", "uv"):
                words = words[1:]  # npx --no-install tsc, uv run --frozen pytest
            continue
        if _is_python(head) and len(words) > 2 and words[1] == "-m":
            words = words[2:]
            continue
        break
    return words


def _is_python(name: str) -> bool:
    return re.fullmatch(r"python(3(\.\d+)?)?", name) is not None


def _basename(word: str) -> str:
    return word.rsplit("/", 1)[-1]


_ToolHit = tuple[Kind, str, Ecosystem, list[str], str | None]

#: Tools recognised by their first word alone: name -> (kind, logical tool, ecosystem).
_SIMPLE: dict[str, tuple[Kind, str, Ecosystem]] = {
    "pytest": (Kind.TEST, "pytest", Ecosystem.PYTHON),
    "py.test": (Kind.TEST, "pytest", Ecosystem.PYTHON),
    "mypy": (Kind.TYPECHECK, "mypy", Ecosystem.PYTHON),
    "pyright": (Kind.TYPECHECK, "pyright", Ecosystem.PYTHON),
    "basedpyright": (Kind.TYPECHECK, "pyright", Ecosystem.PYTHON),
    "flake8": (Kind.LINT, "shell", Ecosystem.PYTHON),
    "pylint": (Kind.LINT, "shell", Ecosystem.PYTHON),
    "compileall": (Kind.BUILD, "compileall", Ecosystem.PYTHON),
    "tsc": (Kind.TYPECHECK, "tsc", Ecosystem.NODE),
    "vue-tsc": (Kind.TYPECHECK, "tsc", Ecosystem.NODE),
    "eslint": (Kind.LINT, "eslint", Ecosystem.NODE),
    "jest": (Kind.TEST, "jest", Ecosystem.NODE),
    "mocha": (Kind.TEST, "shell", Ecosystem.NODE),
}

_PACKAGE_MANAGERS = ("npm", "pnpm", "yarn", "bun")
_PM_BUILTINS = frozenset(
    {
        "install",
        "i",
        "ci",
        "add",
        "remove",
        "exec",
        "dlx",
        "create",
        "init",
        "publish",
        "link",
        "outdated",
        "audit",
        "config",
        "version",
        "cache",
        "why",
        "list",
        "ls",
        "pack",
        "rebuild",
    }
)

#: Script or target names and the kind they answer.
SCRIPT_KINDS: dict[str, Kind] = {
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


def _recognise_core(words: list[str]) -> _ToolHit | None:
    head = _basename(words[0])
    rest = words[1:]
    if head in _SIMPLE:
        kind, tool, ecosystem = _SIMPLE[head]
        if head == "tsc" and any(a in ("-w", "--watch", "--init") for a in rest):
            return None
        if head == "jest" and "--watch" in rest:
            return None
        return kind, tool, ecosystem, rest, None
    if head == "unittest":
        return Kind.TEST, "unittest", Ecosystem.PYTHON, rest, None
    if head == "ruff":
        if rest[:1] == ["check"] or (rest[:1] == ["format"] and "--check" in rest):
            return Kind.LINT, "ruff", Ecosystem.PYTHON, rest, None
        if rest and not rest[0].startswith("-") and rest[0] not in ("check", "format"):
            return None  # ruff server, ruff rule ...
        return (Kind.LINT, "ruff", Ecosystem.PYTHON, rest, None) if not rest else None
    if head == "black" and "--check" in rest:
        return Kind.LINT, "shell", Ecosystem.PYTHON, rest, None
    if head == "vitest":
        if rest[:1] in (["watch"], ["dev"]):
            return None
        return Kind.TEST, "vitest", Ecosystem.NODE, rest, None
    if head == "node" and "--test" in rest:
        return Kind.TEST, "node-test", Ecosystem.NODE, rest, None
    if head == "go" and rest:
        sub = {
            "test": (Kind.TEST, "go-test"),
            "vet": (Kind.LINT, "go-vet"),
            "build": (Kind.BUILD, "go-build"),
        }.get(rest[0])
        if sub:
            return sub[0], sub[1], Ecosystem.GO, rest[1:], None
        return None
    if head == "cargo" and rest:
        sub = {
            "test": (Kind.TEST, "cargo-test"),
            "check": (Kind.BUILD, "cargo-check"),
            "build": (Kind.BUILD, "cargo-build"),
            "clippy": (Kind.LINT, "shell"),
            "nextest": (Kind.TEST, "cargo-test"),
        }.get(rest[0])
        if sub:
            return sub[0], sub[1], Ecosystem.RUST, rest[1:], None
        return None
    if head in _PACKAGE_MANAGERS and rest:
        return _package_script(rest)
    if head in ("make", "gmake", "just"):
        targets = [w for w in rest if not w.startswith("-") and "=" not in w]
        if targets and targets[0] in SCRIPT_KINDS:
            tool = "make" if head != "just" else "shell"
            return SCRIPT_KINDS[targets[0]], tool, Ecosystem.GENERIC, rest, targets[0]
        return None
    if head in ("tox", "nox") and rest[:1] != ["--version"]:
        return Kind.TEST, "shell", Ecosystem.PYTHON, rest, None
    return None


def _package_script(rest: list[str]) -> _ToolHit | None:
    script = rest[1] if rest[0] in ("run", "run-script") and len(rest) > 1 else rest[0]
    if script in _PM_BUILTINS or script.startswith("-"):
        return None
    kind = SCRIPT_KINDS.get(script)
    if kind is None and script.startswith("test"):
        kind = Kind.TEST
    if kind is None:
        return None
    return kind, "npm-test", Ecosystem.NODE, rest, script


_PYTHON_RUNNERS = frozenset({"pytest", "unittest"})
_PYTHON_LINTERS = frozenset({"mypy", "ruff", "pyright"})
_NODE_BINARIES = {"tsc": "tsc", "eslint": "eslint", "jest": "jest", "vitest": "vitest"}


def project_argv(hit: Recognised, env: ProjectEnv) -> tuple[str, ...]:
    """The command re-targeted at the project's own tools: its interpreter, its node_modules."""
    if hit.tool in _PYTHON_RUNNERS:
        return env.python_module(hit.tool, *hit.args)
    if hit.tool in _PYTHON_LINTERS:
        return env.python_tool(_tool_word(hit), *hit.args)
    if hit.tool in _NODE_BINARIES and hit.argv:
        name = _tool_word(hit)
        return (env.node_tool(name), *hit.args)
    return hit.argv


def _tool_word(hit: Recognised) -> str:
    """The tool's own word in the command (`vue-tsc`, `basedpyright`), after any runner prefix."""
    for word in hit.argv:
        base = _basename(word)
        if base in _SIMPLE or base in ("ruff", "vitest"):
            return base
    return hit.tool

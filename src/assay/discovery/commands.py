"""Recognising check commands in text: which kind and tool a shell line runs (pure).

Used wherever a command is written down rather than configured: Makefile
recipes, CI `run:` steps, tox `commands`, README code blocks. It never runs
anything; it reads words.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass

from assay.discovery.model import Candidate, Ecosystem, Origin, ProjectEnv, Source
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


#: Shell that turns a failing command into a success: `cmd || true`, `cmd || :`,
#: `cmd || exit 0`, `cmd; true` at the end, and make's `-` prefix on a recipe line.
_MASKED_FAILURE = re.compile(r"\|\|\s*(true|:|exit\s+0)(?![\w-])|;\s*(true|:)\s*$|^\s*@?-")


def masks_failure(line: str) -> bool:
    """Whether `line` makes a failing command exit 0: a check built on it proves nothing."""
    return _MASKED_FAILURE.search(line) is not None


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
    env = _take_assignments(words)
    if words[:1] == ["env"]:  # `FOO=1 env BAR=2 pytest`
        words.pop(0)
        env += _take_assignments(words)
    argv = tuple(words)
    core = _strip_runners(words)
    hit = _recognise_core(core) if core else None
    if hit is None:
        return None
    kind, tool, ecosystem, args = hit
    return Recognised(kind, tool, ecosystem, tuple(args), argv, tuple(env))


def _take_assignments(words: list[str]) -> list[tuple[str, str]]:
    """Remove the leading `NAME=value` words from `words`, returning them as pairs."""
    env = []
    while words and _ASSIGNMENT.match(words[0]):
        name, _, value = words.pop(0).partition("=")
        env.append((name, value))
    return env


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
        if is_python(head) and len(words) > 2 and words[1] == "-m":
            words = words[2:]
            continue
        break
    return words


def is_python(name: str) -> bool:
    """`python`, `python3` or `python3.12`: an interpreter the project's own may stand in for."""
    return re.fullmatch(r"python(3(\.\d+)?)?", name) is not None


def _basename(word: str) -> str:
    return word.rsplit("/", 1)[-1]


_ToolHit = tuple[Kind, str, Ecosystem, list[str]]

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
        return kind, tool, ecosystem, rest
    if head == "unittest":
        return Kind.TEST, "unittest", Ecosystem.PYTHON, rest
    if head == "ruff":
        # Not `ruff format` (it rewrites files), nor `ruff server`, `ruff rule` ...
        linting = not rest or rest[0] == "check" or (rest[0] == "format" and "--check" in rest)
        return (Kind.LINT, "ruff", Ecosystem.PYTHON, rest) if linting else None
    if head == "black" and "--check" in rest:
        return Kind.LINT, "shell", Ecosystem.PYTHON, rest
    if head == "vitest":
        if rest[:1] in (["watch"], ["dev"]):
            return None
        return Kind.TEST, "vitest", Ecosystem.NODE, rest
    if head == "node" and "--test" in rest:
        return Kind.TEST, "node-test", Ecosystem.NODE, rest
    if head == "go" and rest:
        sub = {
            "test": (Kind.TEST, "go-test"),
            "vet": (Kind.LINT, "go-vet"),
            "build": (Kind.BUILD, "go-build"),
        }.get(rest[0])
        if sub:
            return sub[0], sub[1], Ecosystem.GO, rest[1:]
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
            return sub[0], sub[1], Ecosystem.RUST, rest[1:]
        return None
    if head in _PACKAGE_MANAGERS and rest:
        return _package_script(rest)
    if head in ("make", "gmake", "just"):
        targets = [w for w in rest if not w.startswith("-") and "=" not in w]
        if targets and targets[0] in SCRIPT_KINDS:
            tool = "make" if head != "just" else "shell"
            return SCRIPT_KINDS[targets[0]], tool, Ecosystem.GENERIC, rest
        return None
    if head in ("tox", "nox") and rest[:1] != ["--version"]:
        return Kind.TEST, "shell", Ecosystem.PYTHON, rest
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
    return kind, "npm-test", Ecosystem.NODE, rest


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


def candidate_from(
    hit: Recognised,
    env: ProjectEnv,
    origin: Origin,
    source: Source,
    reason: str,
    *,
    cwd: str = ".",
    extra_env: Mapping[str, str] | None = None,
) -> Candidate:
    """A recognised command as a candidate, re-targeted at the project's own tools.

    The command's own `NAME=value` assignments override `extra_env` (CI or tox settings)."""
    return Candidate(
        kind=hit.kind,
        argv=project_argv(hit, env),
        tool=hit.tool,
        ecosystem=hit.ecosystem,
        origin=origin,
        source=source,
        reason=reason,
        cwd=cwd,
        env={**(extra_env or {}), **dict(hit.env)},
    )


def _tool_word(hit: Recognised) -> str:
    """The tool's own word in the command (`vue-tsc`, `basedpyright`), after any runner prefix."""
    for word in hit.argv:
        base = _basename(word)
        if base in _SIMPLE or base in ("ruff", "vitest"):
            return base
    return hit.tool

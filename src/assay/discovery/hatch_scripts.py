"""`hatch run SCRIPT` read as the commands the script runs (pure).

hatch makes its environment as it runs, which in the sandbox, offline, it cannot
(sqlparse 0.5.1's CI: `hatch run cov`, "Could not find a version that satisfies the
requirement editables"). A script is the project's own words for its checks, so each
command it runs is recognised as a CI line's would be, and run from the project's
environment: `cov = ["test-cov", "cov-report"]`, `test-cov = "coverage run -m pytest
{args:tests}"` is `pytest tests`.

Scripts live in `[tool.hatch.envs.NAME.scripts]` (hatch.toml's `[envs.NAME.scripts]`), a
string or a list of strings each; a command whose first word names another script of the
environment runs that script with the rest as its arguments; `{args}` and
`{args:default}` take the arguments the script was called with; a command starting `- `,
or one the shell makes succeed (`|| true`), ignores its failure, so it is no check. hatch
runs each command through a shell, so `a && b` is two. A command with any other
placeholder (`{root}`, `{matrix:...}`) is left out: its words are unknown.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from collections.abc import Mapping

from assay.discovery.command_lines import masks_failure, split_commands

#: The default environment, whose scripts every other inherits.
DEFAULT_ENV = "default"
#: The most scripts one `hatch run` is followed through.
MAX_DEPTH = 8
_ARGS = re.compile(r"\{args(?::(?P<default>[^{}]*))?\}")
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")

#: `env -> script -> commands`.
Scripts = Mapping[str, Mapping[str, tuple[str, ...]]]


#: hatch's own configuration file: its tables are pyproject.toml's `[tool.hatch]`, without
#: the prefix (hatch-vcs 0.5.0 keeps its environments and scripts there alone).
HATCH_TOML = "hatch.toml"


def read_scripts(
    pyproject: str, hatch_toml: str | None = None
) -> dict[str, dict[str, tuple[str, ...]]]:
    """The scripts of each hatch environment in `pyproject` (a pyproject.toml's text) and
    `hatch_toml` (a hatch.toml's), hatch.toml's environment where both define one, as hatch
    prefers that file; {} when there are none or the text is not TOML."""
    found = _scripts(hatch_envs(pyproject, ("tool", "hatch", "envs")))
    if hatch_toml is not None:
        found.update(_scripts(hatch_envs(hatch_toml, ("envs",))))
    return found


def hatch_envs(text: str, keys: tuple[str, ...]) -> dict[str, object]:
    """The table at `keys` of the TOML `text` (hatch's environments); {} when there is none
    or the text is not TOML."""
    try:
        table: object = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return {}
    for key in keys:
        table = table.get(key) if isinstance(table, dict) else None
    return table if isinstance(table, dict) else {}


def _scripts(envs: dict[str, object]) -> dict[str, dict[str, tuple[str, ...]]]:
    found: dict[str, dict[str, tuple[str, ...]]] = {}
    for env, table in envs.items():
        scripts = table.get("scripts") if isinstance(table, dict) else None
        if not isinstance(scripts, dict):
            continue
        found[env] = {
            name: (body,) if isinstance(body, str) else tuple(b for b in body if isinstance(b, str))
            for name, body in scripts.items()
            if isinstance(body, str | list)
        }
    return found


def script_commands(words: list[str], scripts: Scripts) -> list[list[str]] | None:
    """The commands `hatch run [ENV:]SCRIPT ARGS` (`words`) runs, each as words; None when
    `words` runs no script of `scripts` (another command, or `hatch run pytest`)."""
    if len(words) < 3 or words[0].rsplit("/", 1)[-1] != "hatch" or words[1] != "run":
        return None
    env, _, name = words[2].rpartition(":")
    env = env or DEFAULT_ENV
    if _body(scripts, env, name) is None:
        return None
    commands: list[list[str]] = []
    _follow(scripts, env, name, words[3:], commands, 0)
    return commands


def _body(scripts: Scripts, env: str, name: str) -> tuple[str, ...] | None:
    return scripts.get(env, {}).get(name) or scripts.get(DEFAULT_ENV, {}).get(name)


def _follow(
    scripts: Scripts, env: str, name: str, args: list[str], into: list[list[str]], depth: int
) -> None:
    body = _body(scripts, env, name)
    if body is None or depth >= MAX_DEPTH:
        return
    passed = shlex.join(args)
    for command in body:
        if command.lstrip().startswith("- ") or masks_failure(command):
            continue  # its failure is ignored: no check
        line = _ARGS.sub(lambda m: passed or (m["default"] or ""), command)
        if _PLACEHOLDER.search(line):
            continue
        try:
            commands = split_commands(line)
        except ValueError:
            continue
        for words in commands:
            if _body(scripts, env, words[0]) is not None:
                _follow(scripts, env, words[0], words[1:], into, depth + 1)
            else:
                into.append(words)

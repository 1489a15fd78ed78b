"""The settings files a project's commands and pre-commit hooks name by an option.

A tool may read its settings from a file of any name (`--config-file=ci/types.cfg` for
mypy, in a CI step or a hook's `args`): under `--protect` that file decides what the
base's check checks as much as a `mypy.ini` does, and a change that set `ignore_errors` in
it passed its own type error. So each file the base's plan and hooks name so is protected
with the files the tools find by their usual names, as paths relative to the root.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from assay.option_values import option_values

__all__ = ["check_settings", "hook_config_files", "named_settings"]

#: The options that name a settings file, for every tool whose hooks assay runs.
_NAMING = frozenset(
    {
        "--config-file",  # mypy
        "--config",  # ruff, black, flake8
        "--append-config",  # flake8
        "--settings-file",  # isort
        "--settings-path",
        "--sp",
        "--rcfile",  # pylint
    }
)
#: Short options that name a settings file only in the command of one tool: elsewhere
#: `-c` is code (`python -c`, `sh -c`) or a flag (`gcc -c calc.c`, `go test -c`), and the
#: word after it the change's own code, which restoring from the base would hide. A CI
#: step's `python -m pytest -c ci/testing.ini` read a settings file no default protects:
#: a change that set `pythonpath` there to a right copy of the module passed its broken one.
#: Each names a file, never a directory of them: `tsc -p packages/calc` names the code's own
#: directory, whose `tsconfig.json` is protected by its name already.
_TOOL_NAMING = {
    "pytest": ("-c",),
    "py.test": ("-c",),
    "eslint": ("-c",),
    "jest": ("-c",),
    "vitest": ("-c",),
    "golangci-lint": ("-c",),
    "tsc": ("-p", "--project"),
}
#: Tools that read more of their arguments from a file named `@file` (argparse's
#: `fromfile_prefix_chars`): a CI step's `python -m pytest @ci/pytest.args` read its
#: arguments from a file no default protects, and a change that added `-o
#: pythonpath=shadow` there had a right copy of the module tested in its broken one's place.
_RESPONSE_FILE_TOOLS = frozenset({"pytest", "py.test", "mypy"})
#: How many words in the tool is named: `python3 -m pytest`, `npx --no eslint`.
_TOOL_WORDS = 4
#: Most files taken from one configuration.
_MAX_FILES = 64


def hook_config_files(root: Path) -> tuple[str, ...]:
    """The files the pre-commit hooks of Python tools at `root` name as their settings (a
    directory isort's `--settings-path` names, with everything in it), as patterns."""
    from assay.tools.python_requirements import pre_commit_tools, read_pre_commit_config

    found: list[str] = []
    for _, repo in pre_commit_tools(read_pre_commit_config(root)):
        hooks = repo.get("hooks")
        for hook in hooks if isinstance(hooks, list) else ():
            args = hook.get("args") if isinstance(hook, dict) else None
            if isinstance(args, list):
                found += named_settings(a for a in args if isinstance(a, str))
    return tuple(dict.fromkeys(found))[:_MAX_FILES]


def check_settings(
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: str,
    read: Callable[[str], str | None] | None = None,
) -> list[str]:
    """The settings files a planned check names, as protected patterns relative to the
    root: by its words, by the options pytest reads from `PYTEST_ADDOPTS` (a CI step's
    `PYTEST_ADDOPTS: -c ci/testing.ini`: a change set `pythonpath` there to a right copy
    of the module its broken one failed), and, with `read` (a file of the base's, by its
    path from the root), by the words of the files it reads more arguments from (`-c
    ci/testing.ini` in the base's `ci/pytest.args`), each relative to the directory it
    runs in."""
    named = named_settings(argv)
    if addopts := env.get("PYTEST_ADDOPTS"):
        named += named_settings(["pytest", *_split(addopts)])
    words = list(argv)
    if read is not None and _runs_one_of(words, _RESPONSE_FILE_TOOLS):
        tool = next(w for w in words[:_TOOL_WORDS] if posixpath.basename(w) in _RESPONSE_FILE_TOOLS)
        for response in _response_files(words):
            text = read(posixpath.normpath(posixpath.join(cwd or ".", response)))
            if text is not None:
                named += named_settings([tool, *_split(text)])
    found = []
    for path in named:
        joined = posixpath.normpath(posixpath.join(cwd or ".", path))
        if joined != "." and not joined.startswith(".."):
            found.append(joined)
    return found


def _split(value: str) -> list[str]:
    try:
        return shlex.split(value)
    except ValueError:
        return value.split()


def named_settings(args: Iterable[str]) -> list[str]:
    """The settings files `args` (a command's words) names, as protected patterns."""
    words = list(args)
    named: list[str] = []
    for value in option_values(words, _NAMING):
        path = _relative(value)
        if path is not None:
            named += (path, f"{path}/**")  # a file, or a directory of settings files
    short = _tool_options(words)
    for value in (*option_values(words, short), *_attached(words, short)):
        path = _relative(value)
        if path is not None:
            named.append(path)
    if _runs_one_of(words, _RESPONSE_FILE_TOOLS):
        named += _response_files(words)
    return named


def _response_files(words: list[str]) -> list[str]:
    """The files `@file` words name, inside the tree."""
    responses = (_relative(w[1:]) for w in words if w.startswith("@"))
    return [path for path in responses if path is not None]


def _runs_one_of(words: list[str], tools: frozenset[str]) -> bool:
    return any(posixpath.basename(word) in tools for word in words[:_TOOL_WORDS])


def _tool_options(words: list[str]) -> tuple[str, ...]:
    """The short options naming a settings file for the tool `words` runs, if one of
    `_TOOL_NAMING`'s."""
    for word in words[:_TOOL_WORDS]:
        if (options := _TOOL_NAMING.get(posixpath.basename(word))) is not None:
            return options
    return ()


def _attached(words: list[str], options: tuple[str, ...]) -> list[str]:
    """The values written onto a short option, `-cci/testing.ini`, as argparse reads them."""
    return [
        word[len(o) :]
        for word in words
        for o in options
        if not o.startswith("--") and word.startswith(o) and word[len(o) :][:1] not in ("", "=")
    ]


def _relative(value: str) -> str | None:
    """`value` as a path inside the tree, or None: ruff's `--config` also takes a setting
    (`lint.ignore = ["E501"]`), which names no file."""
    if not value or "=" in value or value.startswith("/"):
        return None
    path = posixpath.normpath(value)
    if path == "." or path.startswith(".."):
        return None
    return path

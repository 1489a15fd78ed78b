"""The settings files a project's commands and pre-commit hooks name by an option.

A tool may read its settings from a file of any name (`--config-file=ci/types.cfg` for
mypy, in a CI step or a hook's `args`): under `--protect` that file decides what the
base's check checks as much as a `mypy.ini` does, and a change that set `ignore_errors` in
it passed its own type error. So each file the base's plan and hooks name so is protected
with the files the tools find by their usual names, as paths relative to the root.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from pathlib import Path

from assay.option_values import option_values

__all__ = ["hook_config_files", "named_settings"]

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


def named_settings(args: Iterable[str]) -> list[str]:
    """The settings files `args` (a command's words) names, as protected patterns."""
    named: list[str] = []
    for value in option_values(list(args), _NAMING):
        path = _relative(value)
        if path is not None:
            named += (path, f"{path}/**")  # a file, or a directory of settings files
    return named


def _relative(value: str) -> str | None:
    """`value` as a path inside the tree, or None: ruff's `--config` also takes a setting
    (`lint.ignore = ["E501"]`), which names no file."""
    if not value or "=" in value or value.startswith("/"):
        return None
    path = posixpath.normpath(value)
    if path == "." or path.startswith(".."):
        return None
    return path

"""Whether any file where a project says what it runs names a tool: its CI, the tox
environments it runs, its nox, make and just files, its pre-commit hooks, and the script
tables of its pyproject.toml (hatch, pdm, poe, taskipy).

The planner's backstop for a tool only its configuration implies: the detectors parse
these files into commands, and a command they cannot read (a hatch environment's script, a
hook CI runs through a wrapper) still names the tool somewhere here. A tool's own
configuration section and the dependency lists are not read: `[tool.mypy]`, or mypy
among a test group's packages for a pytest plugin, is no command.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Collection, Iterator
from pathlib import Path

from assay.discovery.ci_scripts import MAX_SCRIPT_BYTES, repository_scripts
from assay.tools.python_requirements import MAX_CONFIG_BYTES, ci_texts, read_pyproject
from assay.tools.tox_config import TOX_FILES, read_tox
from assay.untrusted_files import read_untrusted

#: pyproject.toml's tables under `[tool]` that hold commands to run (its tox table is read
#: as tox's configuration).
PYPROJECT_COMMAND_TABLES = ("hatch", "pdm", "poe", "taskipy")
#: Other files that hold commands, beside those `ci_texts` reads.
COMMAND_FILES = (".pre-commit-config.yaml", "GNUmakefile", "makefile", ".justfile", "hatch.toml")
#: The commands that run a tool under another name, and read its configuration. Not
#: stubtest: it checks a package's stubs against the package at run time, and passes where
#: `mypy pkg` fails (more-itertools 10.5.0's `make check`: stubtest clean, mypy 1.11.2
#: finds an unannotated argument in more.pyi), so it is no sign that the project runs mypy.
RUN_AS: dict[str, tuple[str, ...]] = {"mypy": ("mypy", "dmypy")}


def names_tool(root: Path, tool: str) -> bool:
    """Whether `tool`, or a command that runs it (`RUN_AS`), is a word in any file where the
    project at `root` says what it runs."""
    return names_any(root, RUN_AS.get(tool, (tool,)))


def names_any(root: Path, commands: Collection[str]) -> bool:
    """Whether one of `commands` is a word in any file where the project at `root` says
    what it runs."""
    names = b"|".join(re.escape(name.encode()) for name in commands)
    word = re.compile(rb"(?<![\w.])(?:" + names + rb")\b")
    return any(word.search(text) for text in command_texts(root))


def command_texts(root: Path, skip: Collection[str] = ()) -> Iterator[bytes]:
    """The text of each file where the project at `root` says what it runs; the files in
    `skip` (for pyproject.toml, only its tox table) left out. Of a tox configuration, only
    the commands of the environments the project runs (`ToxConfig.runs`)."""
    ci = list(ci_texts(root, {*skip, *TOX_FILES}))
    ci += _tox_texts(root, skip)
    yield from ci
    # The repository's scripts CI runs (`run: ./ci.sh`): what they run, CI runs.
    called = repository_scripts((t.decode("utf-8", "replace") for t in ci), _reader(root))
    yield from (text.encode() for text in called.values())
    for rel in COMMAND_FILES:
        data = read_untrusted(root, rel, limit=MAX_CONFIG_BYTES)
        if isinstance(data, bytes):
            yield data
    tables = read_pyproject(root).get("tool")
    if isinstance(tables, dict):
        for name in PYPROJECT_COMMAND_TABLES:
            if name in tables:
                yield json.dumps(tables[name], default=str).encode()


def _tox_texts(root: Path, skip: Collection[str]) -> Iterator[bytes]:
    """For each tox configuration (tox.ini, tox.toml, pyproject.toml's `[tool.tox]`) not in
    `skip`, the commands of the environments the project runs: an environment only `tox -e`
    runs, which nothing asks for, is no part of its gate (semver's `[testenv:mypy]`), and a
    tool that only it names is configured for a developer, not run."""
    for rel in TOX_FILES:
        if rel in skip or rel == "setup.cfg":
            continue
        data = read_untrusted(root, rel, limit=MAX_CONFIG_BYTES)
        if not isinstance(data, bytes):
            continue
        config, _ = read_tox(rel, data.decode("utf-8", "replace"))
        if config is None:
            if rel == "tox.ini":
                yield data  # what tox cannot read may still name a tool
            continue
        others = functools.cache(lambda rel=rel: list(command_texts(root, {*skip, rel})))
        yield "\n".join(
            text
            for env in config.envs
            if config.runs(env, others)
            for command in env.commands
            for text in (command.raw, command.line or "")
        ).encode()


def _reader(root: Path) -> Callable[[str], str | None]:
    def read(rel: str) -> str | None:
        data = read_untrusted(root, rel, limit=MAX_SCRIPT_BYTES)
        return data.decode("utf-8", "replace") if isinstance(data, bytes) else None

    return read

"""The modules of the tree the base's pytest configuration loads as plugins.

`-p support.cases` in the base's `addopts`, or `pytest_plugins = ["support.cases"]` in
its `conftest.py`, loads that module into every run before the tests: its fixtures are
the tests' expected values as much as a conftest's are. Its name is the project's own
(`support/cases.py`), so no pattern of `assay.protect` finds it; a change that edited the
cases its fixture returned to a broken `mean`'s answers was VERIFIED. The base's
configuration names it, and under `--protect` it is restored with the tests.

Not the project's own pytest plugin (a `pytest11` entry point its manifests declare):
that module is the code under test, which `assay.own_plugins` believes only while its
bytes are the base's.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Iterable, Iterator, Mapping, Sequence

from assay.discovery.files import RepoFiles, UnreadableFile
from assay.discovery.python import pytest_setting
from assay.filetree import walk_files

__all__ = ["check_plugin_modules", "pytest_plugin_modules"]

#: Most conftest files read, and most modules named.
_MAX_CONFTESTS = 256
_MAX_MODULES = 64


def pytest_plugin_modules(files: RepoFiles, own: Iterable[str] = ()) -> tuple[str, ...]:
    """The tree's files (relative to its root) of the plugins the base's pytest
    configuration and conftest files load by name, but for the modules in `own`."""
    names = [*_addopts_plugins(pytest_setting(files, "addopts") or ()), *_conftest_plugins(files)]
    return _files_of(files, names, frozenset(own), "")


def check_plugin_modules(
    files: RepoFiles,
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: str,
    own: Iterable[str] = (),
) -> tuple[str, ...]:
    """The tree's files of the plugins a planned pytest command loads by name: `-p` in
    its words or its `PYTEST_ADDOPTS`, and its `PYTEST_PLUGINS`, from the directory it
    runs in (a CI step's `python -m pytest -p support.cases`), but for the modules in
    `own`."""
    if not any(posixpath.basename(word) in ("pytest", "py.test") for word in argv[:4]):
        return ()
    words = [*argv, *env.get("PYTEST_ADDOPTS", "").split()]
    names = [*_addopts_plugins(words), *env.get("PYTEST_PLUGINS", "").split(",")]
    return _files_of(files, [n.strip() for n in names], frozenset(own), cwd)


def _files_of(
    files: RepoFiles, names: Iterable[str], own: frozenset[str], cwd: str
) -> tuple[str, ...]:
    found: list[str] = []
    top = "" if cwd in ("", ".") else posixpath.normpath(cwd) + "/"
    for name in dict.fromkeys(names):
        if not name or name in own or not name.replace(".", "").replace("_", "").isalnum():
            continue
        found += (p for p in (top + m for m in _module_files(name)) if files.is_file(p))
    return tuple(dict.fromkeys(found))[:_MAX_MODULES]


def _addopts_plugins(words: Iterable[str]) -> Iterator[str]:
    """The modules `-p NAME` (or `-pNAME`) loads; not `-p no:NAME`, which blocks one."""
    words = list(words)
    for index, word in enumerate(words):
        if word == "-p" and index + 1 < len(words):
            value = words[index + 1]
        elif word.startswith("-p") and len(word) > 2 and not word.startswith("-p-"):
            value = word[2:].removeprefix("=")
        else:
            continue
        if not value.startswith("no:"):
            yield value


def _conftest_plugins(files: RepoFiles) -> Iterator[str]:
    """The names each conftest.py binds at its top to `pytest_plugins`."""
    try:
        conftests = [p for p in walk_files(files.root) if posixpath.basename(p) == "conftest.py"]
    except OSError:
        return
    for path in conftests[:_MAX_CONFTESTS]:
        try:
            text = files.read_text(path)
            tree = ast.parse(text or "")
        except (UnreadableFile, SyntaxError, ValueError, RecursionError):
            continue
        for node in tree.body:
            if isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in targets):
                    yield from _literal_names(node.value)


def _literal_names(value: ast.expr | None) -> Iterator[str]:
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        yield value.value
    elif isinstance(value, ast.List | ast.Tuple | ast.Set):
        for item in value.elts:
            yield from _literal_names(item)


def _module_files(name: str) -> tuple[str, ...]:
    """Where the module `name` may be: at the root or under `src/`, a module or a package."""
    stem = name.replace(".", "/")
    return tuple(f"{top}{stem}{tail}" for top in ("", "src/") for tail in (".py", "/__init__.py"))

"""The files a JavaScript test runner's configuration at the root names as code it runs
beside the tests: jest's `setupFiles`, `setupFilesAfterEnv`, `globalSetup`, its test
environment, runner, reporters and transforms, vitest's `setupFiles` and `globalSetup`,
mocha's `require` and `file`.

Such a file runs in every test file's context before its tests, so it decides what
`expect` is: a change that edits it can make a wrong value pass (a `toBe` added through
`expect.extend` that passes one wrong sum, its name built at run time). Its name is
the project's own (`support/matchers.js`), so no pattern of `assay.protect` finds it;
the base's configuration does, and under `--protect` it is restored with the tests.

Only what resolves to a file of the tree: a name of a package (`jest-environment-jsdom`)
is `node_modules`' and proven there, and a value that names the project's code through
another key (an alias) is not read at all.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Iterator

from assay.discovery.files import RepoFiles, UnreadableFile

__all__ = ["js_setup_files"]

#: The configuration keys whose values name code the runner loads beside the tests.
SETUP_KEYS = (
    # jest
    "setupFiles",
    "setupFilesAfterEnv",
    "globalSetup",
    "globalTeardown",
    "testEnvironment",
    "snapshotResolver",
    "testRunner",
    "testSequencer",
    "runner",
    "reporters",
    "resolver",
    "transform",
    # vitest (`setupFiles`, `globalSetup`, `runner` above too)
    "environment",
    # mocha
    "require",
    "file",
    "ui",
    "reporter",
)
#: package.json's sections of the runners configured there.
PACKAGE_SECTIONS = ("jest", "mocha")
#: The configuration files at the root that are JSON.
JSON_CONFIGS = ("jest.config.json", ".mocharc.json", ".mocharc.jsonc")
#: The configuration files at the root that are code (or YAML), read for quoted values.
TEXT_CONFIGS = tuple(
    f"{stem}.{ext}"
    for stem in ("jest.config", "vitest.config", "vite.config", "vitest.workspace")
    for ext in ("js", "ts", "mjs", "cjs", "mts", "cts")
) + (".mocharc.js", ".mocharc.cjs", ".mocharc.yml", ".mocharc.yaml")
_EXTENSIONS = (".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".jsx", ".tsx", ".json")
_MAX_PATHS = 200
#: Top directories that hold a JavaScript project's own code.
_CODE_DIRS = frozenset({"src", "lib", "app", "source", "packages"})
_RELATIVE_LOAD = re.compile(
    r"""(?:\brequire\s*\(\s*|\bimport\s*\(\s*|\bfrom\s+|\bimport\s+)(["'])(\.{1,2}/[^"'\n]{1,300})\1"""
)
_KEY = re.compile(r"""(?<![\w$])["']?(""" + "|".join(SETUP_KEYS) + r""")["']?[ \t]*[:=][ \t]*""")
_QUOTED = re.compile(r"""(["'`])([^"'`\n]{1,300})\1""")
_YAML_ITEM = re.compile(r"""^\s*-\s*["']?([^\s#"']+)["']?\s*$""")


def js_setup_files(files: RepoFiles) -> tuple[str, ...]:
    """The tree's files the root's jest, vitest and mocha configuration names under
    `SETUP_KEYS`, as paths relative to the root (patterns of `assay.protect` that match
    only themselves)."""
    named: list[str] = []
    for value in _named_values(files):
        for path in _resolved(files, value):
            if path not in named:
                named.append(path)
        if len(named) >= _MAX_PATHS:
            break
    for path in named:  # grows as it goes: what each named file loads beside it
        for module in _helpers_beside(files, path):
            if module not in named and len(named) < _MAX_PATHS:
                named.append(module)
    return tuple(named[:_MAX_PATHS])


def _helpers_beside(files: RepoFiles, path: str) -> Iterator[str]:
    """The files a setup file `path` loads by a relative specifier (`require('./extra')`,
    `import './extra.js'`) from its own directory or below it: its helpers, which decide
    what `expect` is as much as it does. Not for a setup file at the root or in a directory
    of the project's code (`src`, `lib`), where what it loads is that code."""
    directory = posixpath.dirname(path)
    if not directory or directory.split("/")[0] in _CODE_DIRS:
        return
    text = _text(files, path) if path.endswith(_EXTENSIONS) else None
    for spec in _RELATIVE_LOAD.finditer(text or ""):
        module = posixpath.normpath(posixpath.join(directory, spec[2]))
        if module.startswith(directory + "/"):
            yield from _resolved(files, module)


def _named_values(files: RepoFiles) -> Iterator[str]:
    package = _json(files, "package.json")
    if isinstance(package, dict):
        for section in PACKAGE_SECTIONS:
            yield from _json_values(package.get(section))
    for name in JSON_CONFIGS:
        config = _json(files, name)
        if config is not None:
            yield from _json_values(config)
        elif (text := _text(files, name)) is not None:
            yield from _text_values(text)  # JSON with comments: read as code is
    for name in TEXT_CONFIGS:
        text = _text(files, name)
        if text is not None:
            yield from _text_values(text)


def _json(files: RepoFiles, name: str) -> object:
    text = _text(files, name)
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _text(files: RepoFiles, name: str) -> str | None:
    try:
        return files.read_text(name)
    except UnreadableFile:
        return None


def _json_values(config: object) -> Iterator[str]:
    """Every string under a `SETUP_KEYS` key of `config`, at any depth (jest's projects)."""
    if isinstance(config, dict):
        for key, value in config.items():
            if key in SETUP_KEYS:
                yield from _strings(value)
            else:
                yield from _json_values(value)
    elif isinstance(config, list):
        for item in config:
            yield from _json_values(item)


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


def _text_values(text: str) -> Iterator[str]:
    """The quoted strings of the value after each `SETUP_KEYS` key of a configuration that
    is code: a list up to its `]`, a YAML list of its `- ` lines, else the rest of the line."""
    for key in _KEY.finditer(text):
        rest = text[key.end() : key.end() + 4000]
        if rest.startswith("["):
            value = rest[: rest.find("]") + 1 or None]
        elif rest.startswith(("\n", "\r")):
            items = []
            for line in rest.splitlines()[1:]:
                item = _YAML_ITEM.match(line)
                if item is None:
                    break
                items.append(item[1])
            yield from items
            continue
        else:  # one value: the first quoted, not what other keys on its line name
            line = rest.split("\n", 1)[0]
            first = _QUOTED.search(line)
            yield first[2] if first else line.strip().rstrip(",").strip()  # YAML's bare one
            continue
        yield from (quoted[2] for quoted in _QUOTED.finditer(value))


def _resolved(files: RepoFiles, value: str) -> Iterable[str]:
    """`value` as the tree's file it names (as a module path resolves: with an extension
    added, or a directory's index), or nothing."""
    path = value.strip()
    for prefix in ("<rootDir>/", "<rootdir>/"):
        path = path.removeprefix(prefix)
    if not path or path.startswith("/") or any(c in path for c in "*?[]{}<>\\\0"):
        return ()
    path = posixpath.normpath(path)
    if path.startswith("..") or path == "." or "node_modules" in path.split("/"):
        return ()
    if not value.startswith((".", "<")) and "/" not in path and not path.endswith(_EXTENSIONS):
        return ()  # a package's name
    candidates = (
        path,
        *(path + ext for ext in _EXTENSIONS),
        *(f"{path}/index{ext}" for ext in _EXTENSIONS),
    )
    for candidate in candidates:
        if files.is_file(candidate):
            return (candidate,)
    return (path,) if path.endswith(_EXTENSIONS) else ()

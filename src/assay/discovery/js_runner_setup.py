"""The files a JavaScript test runner's configuration names as code it runs beside the
tests, the root's configuration and each sub-package's: jest's `setupFiles`,
`setupFilesAfterEnv`, `globalSetup`, its test environment, runner, reporters and
transforms, vitest's `setupFiles` and `globalSetup`, mocha's `require` and `file`.

Such a file runs in every test file's context before its tests, so it decides what
`expect` is: a change that edits it can make a wrong value pass (a `toBe` added through
`expect.extend` that passes one wrong sum, its name built at run time). Its name is
the project's own (`support/matchers.js`), so no pattern of `assay.protect` finds it;
the base's configuration does, and under `--protect` it is restored with the tests. So
is a module a configuration that is code loads from the tree (`./config/jest.base.js`):
it decides the configuration as much as the file assay knows by name.

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
from assay.filetree import walk_files

__all__ = ["js_setup_files"]

#: The configuration keys whose values name code the runner loads beside the tests.
SETUP_KEYS = (
    # jest (a `preset` by path is a configuration of the project's own: a change that
    # mapped the tests' `../calc.js` to a right copy in `./config/jest-preset.js` passed)
    "preset",
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
#: The most configuration files read: a tree's packages rarely number more.
_MAX_CONFIGS = 200
#: Top directories that hold a JavaScript project's own code.
_CODE_DIRS = frozenset({"src", "lib", "app", "source", "packages"})
_RELATIVE_LOAD = re.compile(
    r"""(?:\brequire\s*\(\s*|\bimport\s*\(\s*|\bfrom\s+|\bimport\s+)(["'])(\.{1,2}/[^"'\n]{1,300})\1"""
)
_KEY = re.compile(r"""(?<![\w$])["']?(""" + "|".join(SETUP_KEYS) + r""")["']?[ \t]*[:=][ \t]*""")
_QUOTED = re.compile(r"""(["'`])([^"'`\n]{1,300})\1""")
_YAML_ITEM = re.compile(r"""^\s*-\s*["']?([^\s#"']+)["']?\s*$""")


def js_setup_files(files: RepoFiles) -> tuple[str, ...]:
    """The tree's files the jest, vitest and mocha configuration names under `SETUP_KEYS`,
    the root's and each sub-package's (a workspace's `packages/calc/jest.config.js`, run by
    the root's `npm test --workspaces` or its jest `projects`), as paths relative to the
    root (patterns of `assay.protect` that match only themselves)."""
    named: dict[str, str] = {}  # each file -> the directory of the configuration naming it
    configs = [(config, posixpath.dirname(config)) for config in _configs(files)]
    for config, home in configs:  # grows as it goes: the modules a configuration loads
        for value in _config_values(files, config):
            for path in _resolved(files, value, home):
                named.setdefault(path, home)
        for module in _config_modules(files, config, home):
            if module not in named and len(named) < _MAX_PATHS:
                named[module] = home
                configs.append((module, home))
        if len(named) >= _MAX_PATHS:
            break
    for path, home in list(named.items()):  # grows as it goes: what each named file loads
        for module in _helpers_beside(files, path, home):
            if len(named) < _MAX_PATHS:
                named.setdefault(module, home)
    return tuple(named)[:_MAX_PATHS]


def _configs(files: RepoFiles) -> list[str]:
    """The runners' configuration files of the tree, the root's first: a configuration in
    a sub-package is read by the run of that package as the root's is by the root's."""
    wanted = frozenset(("package.json", *JSON_CONFIGS, *TEXT_CONFIGS))
    try:
        found = walk_files(files.root)
    except OSError:
        found = [name for name in sorted(wanted) if files.is_file(name)]
    configs = [path for path in found if posixpath.basename(path) in wanted]
    configs.sort(key=lambda path: (path.count("/"), path))
    return configs[:_MAX_CONFIGS]


def _config_values(files: RepoFiles, config: str) -> Iterator[str]:
    """The values under `SETUP_KEYS` of `config`, a configuration or a module one loads."""
    name = posixpath.basename(config)
    if name == "package.json":
        package = _json(files, config)
        if isinstance(package, dict):
            for section in PACKAGE_SECTIONS:
                yield from _json_values(package.get(section))
        return
    document = _json(files, config) if name in JSON_CONFIGS else None
    if document is not None:
        yield from _json_values(document)
    elif (text := _text(files, config)) is not None:
        yield from _text_values(text)  # code, YAML, or JSON with comments: read as code is


def _config_modules(files: RepoFiles, config: str, home: str) -> Iterator[str]:
    """The files a configuration that is code (or a module it loads) loads by a relative
    specifier from its package's directory `home` or below: `jest.config.js` spreading
    `require('./config/jest.base.js')`, which decides the configuration as much as it
    does (a `moduleNameMapper` added there sent the tests' `../calc.js` to a right copy),
    or from anywhere in the tree (a workspace's packages share `../../jest.base.js`).
    Not a `package.json`, and nothing in a directory of the project's code (`src`)."""
    if posixpath.basename(config) == "package.json" or config.endswith((".json", ".yml", ".yaml")):
        return
    text = _text(files, config)
    for spec in _RELATIVE_LOAD.finditer(text or ""):
        module = posixpath.normpath(posixpath.join(posixpath.dirname(config), spec[2]))
        below = posixpath.relpath(module, home or ".")
        if below.startswith(".."):  # another package's: by the code directories in its path
            code = _CODE_DIRS - {"packages"}
            if module.startswith("..") or code.intersection(module.split("/")[:-1]):
                continue
        elif below.split("/")[0] in _CODE_DIRS and "/" in below:
            continue
        for path in _resolved(files, module, ""):
            if posixpath.basename(path) != "package.json":
                yield path


def _helpers_beside(files: RepoFiles, path: str, home: str) -> Iterator[str]:
    """The files a setup file `path` loads by a relative specifier (`require('./extra')`,
    `import './extra.js'`) from its own directory or below it: its helpers, which decide
    what `expect` is as much as it does. Not for a setup file in the directory of the
    configuration naming it (`home`) or in a directory of the project's code below it
    (`src`, `lib`), where what it loads is that code."""
    directory = posixpath.dirname(path)
    below = posixpath.relpath(directory or ".", home or ".")
    if below == "." or below.startswith("..") or below.split("/")[0] in _CODE_DIRS:
        return
    text = _text(files, path) if path.endswith(_EXTENSIONS) else None
    for spec in _RELATIVE_LOAD.finditer(text or ""):
        module = posixpath.normpath(posixpath.join(directory, spec[2]))
        if module.startswith(directory + "/"):
            yield from _resolved(files, module, "")


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


def _resolved(files: RepoFiles, value: str, home: str) -> Iterable[str]:
    """`value`, as the configuration in the directory `home` names it, as the tree's file
    it names (as a module path resolves: with an extension added, or a directory's index),
    or nothing."""
    path = value.strip()
    for prefix in ("<rootDir>/", "<rootdir>/"):
        path = path.removeprefix(prefix)
    if not path or path.startswith("/") or any(c in path for c in "*?[]{}<>\\\0"):
        return ()
    if not value.startswith((".", "<")) and "/" not in path and not path.endswith(_EXTENSIONS):
        return ()  # a package's name
    path = posixpath.normpath(posixpath.join(home, path))
    if path.startswith("..") or path == "." or "node_modules" in path.split("/"):
        return ()
    candidates = (
        path,
        *(path + ext for ext in _EXTENSIONS),
        *(f"{path}/index{ext}" for ext in _EXTENSIONS),
    )
    for candidate in candidates:
        if files.is_file(candidate):
            return (candidate,)
    return (path,) if path.endswith(_EXTENSIONS) else ()

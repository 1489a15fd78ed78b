"""The files a linter's or type checker's settings extend or load, from the tree.

(mypy's `plugins` too: a plugin file the base's `[tool.mypy]` names decides what each
type is.)

`ruff.toml`, `.eslintrc.json`, `eslint.config.js`, `biome.json` and `pyrightconfig.json`
are protected by their names, but what they say may live in a file of any name they
extend or load: ruff's `extend = "config/ruff-base.toml"`, pyright's and basedpyright's
`extends`, biome's and oxlint's `extends`, eslint's legacy `extends: ["./config/base"]`
(its `overrides` too) and a flat `eslint.config.js` importing `./config/eslint.base.js`.
That file decides which rules run and on what as much as the named one: a change that
ignored F821 in a ruff configuration the protected `pyproject.toml` extends, or turned
`no-undef` off in the module `eslint.config.js` spreads, was VERIFIED with the error the
base's linter reported. So under `--protect` each such file of the base's, and each it
extends or loads in turn, is protected with them. A package's name (`eslint:recommended`,
`@org/eslint-config`) is `node_modules`', proven there; a module of the project's own code
(`src/`, the package's entry point: an eslint plugin linting itself) is the change's.
"""

from __future__ import annotations

import posixpath
import re
import tomllib
from collections.abc import Iterator
from typing import Any

from assay.discovery.files import RepoFiles, UnreadableFile
from assay.discovery.text import load_ini, load_jsonc, load_yaml
from assay.filetree import walk_files

__all__ = ["extended_settings"]

#: Most files read, and named, for one tree.
_MAX_FILES = 256
#: How each kind of settings file is found by its name.
_RUFF = ("ruff.toml", ".ruff.toml")
_PYRIGHT = ("pyrightconfig.json",)
_JSON_EXTENDS = ("biome.json", "biome.jsonc", ".oxlintrc.json", "oxlintrc.json")
_ESLINTRC = tuple(
    f".eslintrc{ext}" for ext in ("", ".json", ".yml", ".yaml", ".js", ".cjs", ".mjs")
)
#: mypy's configuration files that are INI, with the section each keeps mypy's settings in.
_MYPY_INI = {"mypy.ini": "mypy", ".mypy.ini": "mypy", "setup.cfg": "mypy"}
_FLAT = tuple(f"eslint.config.{ext}" for ext in ("js", "mjs", "cjs", "ts", "mts", "cts"))
#: Extensions node tries for a module named without one, as eslint resolves `extends`.
_JS_EXTENSIONS = (".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".json")
#: Top directories that hold a JavaScript project's own code.
_CODE_DIRS = frozenset({"src", "lib", "app", "source"})
_RELATIVE_LOAD = re.compile(
    r"""(?:\brequire\s*\(\s*|\bimport\s*\(\s*|\bfrom\s+|\bimport\s+)(["'])(\.{1,2}/[^"'\n]{1,300})\1"""
)
_EXTENDS_KEY = re.compile(r"""(?<![\w$])["']?extends["']?[ \t]*:[ \t]*""")
_QUOTED = re.compile(r"""(["'`])([^"'`\n]{1,300})\1""")


def extended_settings(files: RepoFiles) -> tuple[str, ...]:
    """The tree's files (paths relative to its root) its ruff, pyright, biome, oxlint and
    eslint settings extend or load, followed from file to file."""
    try:
        found = walk_files(files.root)
    except OSError:
        return ()
    pending: list[tuple[str, str]] = []
    for path in found:
        kind = _kind_by_name(posixpath.basename(path))
        if kind is not None:
            pending.append((path, kind))
    pending = pending[:_MAX_FILES]
    seen = {path for path, _ in pending}
    named: list[str] = []
    while pending and len(seen) <= _MAX_FILES:
        path, kind = pending.pop()
        for target, target_kind in _named_by(files, path, kind):
            if target not in seen:
                seen.add(target)
                named.append(target)
                pending.append((target, target_kind))
    return tuple(named)


def _kind_by_name(name: str) -> str | None:
    if name in _RUFF:
        return "ruff"
    if name in _PYRIGHT:
        return "pyright"
    if name in _JSON_EXTENDS:
        return "json"
    if name in _ESLINTRC:
        return "eslintrc"
    if name in _FLAT:
        return "module"
    if name in _MYPY_INI:
        return "mypy"
    if name in ("pyproject.toml", "package.json"):
        return name
    return None


def _named_by(files: RepoFiles, path: str, kind: str) -> Iterator[tuple[str, str]]:
    """The files `path`, a settings file of `kind`, extends or loads, with their kinds."""
    text = _text(files, path)
    if text is None:
        return
    here = posixpath.dirname(path)
    if kind == "pyproject.toml":
        tools = _toml(text).get("tool")
        tools = tools if isinstance(tools, dict) else {}
        ruff = tools.get("ruff")
        if isinstance(ruff, dict):
            yield from _settings_paths(files, here, ruff.get("extend"), "ruff")
        for name in ("pyright", "basedpyright"):
            table = tools.get(name)
            if isinstance(table, dict):
                yield from _settings_paths(files, here, table.get("extends"), "pyright")
        mypy = tools.get("mypy")
        if isinstance(mypy, dict):
            yield from _mypy_plugins(files, here, _strings(mypy.get("plugins")))
    elif kind == "mypy":
        parser, error = load_ini(text, path)
        if error is None and parser.has_section("mypy"):
            value = parser.get("mypy", "plugins", fallback="")
            yield from _mypy_plugins(files, here, value.replace("\n", ",").split(","))
    elif kind == "ruff":
        yield from _settings_paths(files, here, _toml(text).get("extend"), "ruff")
    elif kind == "pyright":
        document = _toml(text) if path.endswith(".toml") else _json(text)
        extends = document.get("extends") if isinstance(document, dict) else None
        yield from _settings_paths(files, here, extends, "pyright")
    elif kind == "json":
        document = _json(text)
        extends = document.get("extends") if isinstance(document, dict) else None
        yield from _settings_paths(files, here, extends, "json", package_names=False)
    elif kind == "package.json":
        package = _json(text)
        config = package.get("eslintConfig") if isinstance(package, dict) else None
        yield from _eslint_extends(files, here, _extends_values(config))
    elif kind == "eslintrc":
        yield from _eslintrc(files, path, text)
    elif kind == "module":
        yield from _loaded_modules(files, path, text)


def _mypy_plugins(files: RepoFiles, here: str, values: list[str]) -> Iterator[tuple[str, str]]:
    """The tree's files of the plugins mypy's `plugins` names: a path (`tools/units.py`,
    from the configuration's directory) or a module at the root or under `src/`; not a
    module of the project's own name (pydantic's `pydantic.mypy` is its code). A plugin
    decides what each type is (one that made `int` and `str` Any hid a type error)."""
    own = _own_name(files)
    for value in values:
        entry = value.strip().rsplit(":", 1)[0] if value.count(":") == 1 else value.strip()
        if entry.endswith(".py"):
            yield from ((path, "plugin") for path, _ in _settings_paths(files, here, entry, ""))
        elif (
            entry
            and entry.split(".")[0] != own
            and entry.replace(".", "").replace("_", "").isalnum()
        ):
            stem = entry.replace(".", "/")
            for top in ("", "src/"):
                for tail in (".py", "/__init__.py"):
                    if files.is_file(f"{top}{stem}{tail}"):
                        yield f"{top}{stem}{tail}", "plugin"


def _own_name(files: RepoFiles) -> str:
    """The project's name as a module would spell it (pyproject's `project.name`)."""
    project = _toml(_text(files, "pyproject.toml") or "").get("project")
    name = project.get("name") if isinstance(project, dict) else None
    return name.replace("-", "_").replace(".", "_").lower() if isinstance(name, str) else ""


def _eslintrc(files: RepoFiles, path: str, text: str) -> Iterator[tuple[str, str]]:
    """What a legacy eslint configuration extends (its `overrides` too), and, where it is
    code, the modules it loads."""
    here = posixpath.dirname(path)
    name = posixpath.basename(path)
    if name.endswith((".js", ".cjs", ".mjs", ".ts", ".cts", ".mts")):
        values = list(_quoted_after_extends(text))
        yield from _eslint_extends(files, here, values)
        yield from _loaded_modules(files, path, text)
        return
    document = _json(text) if name.endswith(".json") else None
    if document is None:  # `.eslintrc`, YAML or JSON; YAML reads JSON too
        document, _ = load_yaml(text, path)
    yield from _eslint_extends(files, here, _extends_values(document))


def _extends_values(config: object) -> list[str]:
    """The strings of a legacy eslint configuration's `extends`, its overrides' included."""
    if not isinstance(config, dict):
        return []
    values = _strings(config.get("extends"))
    overrides = config.get("overrides")
    for override in overrides if isinstance(overrides, list) else ():
        values += _extends_values(override)
    return values


def _eslint_extends(files: RepoFiles, here: str, values: list[str]) -> Iterator[tuple[str, str]]:
    for value in values:
        if not value.startswith(("./", "../")):
            continue  # `eslint:recommended`, `plugin:x/y`, a package's name
        for path in _module(files, posixpath.join(here, value)):
            yield path, "eslintrc"


def _loaded_modules(files: RepoFiles, path: str, text: str) -> Iterator[tuple[str, str]]:
    """The modules of the tree a configuration that is code loads by a relative specifier,
    but for the project's own code (a plugin linting itself loads its entry point)."""
    entry_points = _entry_points(files)
    for spec in _RELATIVE_LOAD.finditer(text):
        for module in _module(files, posixpath.join(posixpath.dirname(path), spec[2])):
            parts = module.split("/")
            if parts[0] in _CODE_DIRS or parts[-1] == "package.json" or module in entry_points:
                continue
            yield module, "eslintrc" if module.endswith((".json", ".yml", ".yaml")) else "module"


def _entry_points(files: RepoFiles) -> frozenset[str]:
    """The root package's own modules by its manifest: `main`, `exports`, `index.*`."""
    package = _json(_text(files, "package.json") or "")
    named = _strings(package.get("main")) if isinstance(package, dict) else []
    exports = package.get("exports") if isinstance(package, dict) else None
    named += _all_strings(exports)
    points = {posixpath.normpath(n) for n in named if n.startswith("./") or "/" not in n}
    return frozenset((*points, *(f"index{ext}" for ext in _JS_EXTENSIONS)))


def _settings_paths(
    files: RepoFiles, here: str, value: object, kind: str, *, package_names: bool = True
) -> Iterator[tuple[str, str]]:
    """The tree's files `value` (a path, or a list of them, relative to the directory
    `here`) names: a package's name is skipped where the tool takes one (`package_names`:
    biome's and oxlint's bare `shared.json` is a path)."""
    for name in _strings(value):
        if name.startswith(("/", "~", "$")) or "$" in name or name == "//":
            continue
        if package_names and name.startswith("@"):
            continue
        if (
            not package_names
            and not name.startswith(".")
            and not name.endswith((".json", ".jsonc"))
        ):
            continue  # biome's `@org/config/biome`: a package's
        path = posixpath.normpath(posixpath.join(here, name))
        if path == ".." or path.startswith("../"):
            continue
        yield path, _kind_by_name(posixpath.basename(path)) or kind


def _module(files: RepoFiles, joined: str) -> Iterator[str]:
    """The file a relative module specifier names, as node resolves it, or nothing."""
    path = posixpath.normpath(joined)
    if path == ".." or path.startswith("../") or "node_modules" in path.split("/"):
        return
    for candidate in (
        path,
        *(path + ext for ext in _JS_EXTENSIONS),
        *(f"{path}/index{ext}" for ext in _JS_EXTENSIONS),
    ):
        if files.is_file(candidate):
            yield candidate
            return


def _quoted_after_extends(text: str) -> Iterator[str]:
    """The quoted strings of each `extends:` value of a configuration that is code: a
    list up to its `]`, else the first on its line."""
    for key in _EXTENDS_KEY.finditer(text):
        rest = text[key.end() : key.end() + 4000]
        value = rest[: rest.find("]") + 1 or None] if rest.startswith("[") else rest.split("\n")[0]
        quoted = [q[2] for q in _QUOTED.finditer(value)]
        yield from quoted if rest.startswith("[") else quoted[:1]


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


def _all_strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in _all_strings(item)]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _all_strings(item)]
    return []


def _text(files: RepoFiles, path: str) -> str | None:
    try:
        return files.read_text(path)
    except UnreadableFile:
        return None


def _toml(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return {}


def _json(text: str) -> Any:
    try:
        return load_jsonc(text)
    except (ValueError, RecursionError):
        return None

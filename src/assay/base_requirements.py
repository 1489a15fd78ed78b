"""Which Python distributions a base commit's manifests declare: read as text, never run.

Under `--protect` an installed distribution that loads code by itself into every run (a
`.pth` file, a `sitecustomize` module, a pytest plugin entry point) is accepted only when
the base asks for it: named by its manifests (pyproject.toml, setup.cfg, setup.py,
requirement files, tox's deps, nox's `session.install`, hatch's environments, lockfiles,
what the pre-commit hooks of a Python tool add beside it),
or required by a distribution that is: whatever `--install` installs from them is so
declared. Its
install record can be written by whoever wrote its files; the base cannot be.

The files are read from the commit through `assay.safe_git` (no filter, driver or hook
runs), each within a bound.
"""

from __future__ import annotations

import ast
import configparser
import json
import os
import re
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from assay.safe_git import GitError, Repository, open_repository

#: Deadline for reading the base's manifests with git.
READ_TIMEOUT_S = 60.0
#: The largest manifest read (a lockfile of a large project is a few MiB).
MANIFEST_MAX_BYTES = 16 * 1024 * 1024
#: The largest listing of a directory of the base read for manifest names.
#: Directories whose `*.txt` files are requirement files.
REQUIREMENT_DIRS = ("requirements", "requirements.d", "reqs")
#: Manifests read whole, by name, at the repository root.
ROOT_MANIFESTS = (
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
    "tox.ini",
    "noxfile.py",
    "hatch.toml",
    "uv.lock",
    "poetry.lock",
    "pdm.lock",
    "pylock.toml",
    "Pipfile",
    "Pipfile.lock",
    ".pre-commit-config.yaml",
)

_NAME = re.compile(r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[([^\]]*)\])?")
_EGG = re.compile(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)")
_SETUP_KEYWORDS = ("install_requires", "tests_require", "setup_requires", "extras_require")


def normalise(name: str) -> str:
    """A distribution name as PEP 503 compares them (`Foo_Bar` and `foo.bar` are `foo-bar`)."""
    return re.sub(r"[-_.]+", "-", name).lower()


#: An entry point: (group, name, value).
EntryPoint = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class Declared:
    """What the base's manifests ask to be installed."""

    names: frozenset[str] = frozenset()
    """Normalised distribution names."""
    extras: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Extras asked for, by normalised name (`pytest[testing]`)."""
    projects: frozenset[str] = frozenset()
    """The project's own names (pyproject's `project.name`, setup.cfg's or setup.py's `name`)."""
    entry_points: frozenset[EntryPoint] = frozenset()
    """The entry points the project itself declares (pyproject's `project.entry-points`,
    Poetry's `plugins`, setup.cfg's `options.entry_points`, a literal in setup.py)."""
    read: tuple[str, ...] = ()
    """The manifests that were read."""
    problem: str | None = None
    """Why the base could not be read (then nothing is declared)."""


def declared_by_base(repository: Path, ref: str) -> Declared:
    """The distributions the manifests of commit `ref` of `repository` declare; nothing
    (with `problem` saying why) when they cannot be read."""
    try:
        git = open_repository(repository, timeout=READ_TIMEOUT_S)
        tree = git.project_tree(git.resolve_commit(ref))
        files: dict[str, bytes] = {}
        for path in _manifest_paths(git.names(tree) or [], _subdirs(git, tree)):
            data = git.blob_at(tree, path, limit=MANIFEST_MAX_BYTES)
            if data is None:
                raise GitError(f"{path} is no file of the base")
            files[path] = data
    except GitError as exc:
        return Declared(problem=f"the base's manifests could not be read: {exc}")
    return declared_in(files)


def declared_in_tree(root: Path) -> Declared:
    """The distributions the manifests of the tree at `root` (a base exported to a
    directory) declare; read as untrusted files, each within a bound."""
    from assay.untrusted_files import list_untrusted, read_untrusted

    def listed(directory: str) -> list[str]:
        names = list_untrusted(root, directory)
        return names if isinstance(names, list) else []

    try:
        at_root = os.listdir(root)  # the directory itself is assay's own
    except OSError:
        return Declared(problem=f"{root} could not be listed")
    subdirs = {d: listed(d) for d in REQUIREMENT_DIRS}
    files: dict[str, bytes] = {}
    for path in _manifest_paths(at_root, subdirs):
        data = read_untrusted(root, path, limit=MANIFEST_MAX_BYTES)
        if isinstance(data, bytes):
            files[path] = data
    return declared_in(files)


def _subdirs(git: Repository, tree: str) -> dict[str, list[str]]:
    """The names in each requirement directory the base has."""
    found: dict[str, list[str]] = {}
    for directory in REQUIREMENT_DIRS:
        if (names := git.names(tree, directory)) is not None:
            found[directory] = names
    return found


def _manifest_paths(root_names: Iterable[str], subdirs: Mapping[str, list[str]]) -> list[str]:
    names = set(root_names)
    paths = [n for n in ROOT_MANIFESTS if n in names]
    paths += sorted(n for n in names if _is_requirement_file(n))
    paths += sorted(
        f"{d}/{n}" for d, listed in subdirs.items() for n in listed if n.endswith((".txt", ".in"))
    )
    return paths


def _is_requirement_file(name: str) -> bool:
    return "requirements" in name.lower() and name.endswith((".txt", ".in"))


def declared_in(files: Mapping[str, bytes]) -> Declared:
    """What manifests (path -> bytes, as the base holds them) declare. Pure: a manifest
    that does not parse declares nothing."""
    requirements: list[str] = []
    names: list[str] = []
    projects: list[str] = []
    entry_points: set[EntryPoint] = set()
    for path, data in files.items():
        text = data.decode("utf-8", "replace")
        base = path.rsplit("/", 1)[-1]
        if base == "pyproject.toml":
            requirements += _pyproject(text, names, projects, entry_points)
        elif base == "setup.cfg":
            requirements += _setup_cfg(text, projects, entry_points)
        elif base == "setup.py":
            requirements += _setup_py(text, projects, entry_points)
        elif base == "tox.ini":
            requirements += _tox(text)
        elif base == "noxfile.py":
            requirements += _nox(text)
        elif base == "hatch.toml":
            requirements += _hatch_envs(_table(_toml(text).get("envs")))
        elif base in ("uv.lock", "poetry.lock", "pdm.lock", "pylock.toml"):
            names += _lock_names(text)
        elif base == "Pipfile":
            names += _pipfile(text)
        elif base == "Pipfile.lock":
            names += _pipfile_lock(text)
        elif base == ".pre-commit-config.yaml":
            requirements += _pre_commit_additions(text)
        else:
            requirements += _requirement_lines(text)
    extras: dict[str, set[str]] = {}
    for requirement in requirements:
        parsed = parse_requirement(requirement)
        if parsed is None:
            continue
        name, wanted = parsed
        names.append(name)
        extras.setdefault(name, set()).update(wanted)
    return Declared(
        names=frozenset(normalise(n) for n in [*names, *projects]),
        extras={k: frozenset(v) for k, v in extras.items() if v},
        projects=frozenset(normalise(p) for p in projects),
        entry_points=frozenset(entry_points),
        read=tuple(sorted(files)),
    )


def parse_requirement(text: str) -> tuple[str, frozenset[str]] | None:
    """(normalised name, extras) of a requirement (`pytest[testing]>=8; python_version>'3'`,
    `name @ https://...`); None for what names no distribution (a bare URL, a path)."""
    text = text.strip()
    if not text or text.startswith(("#", "-", ".", "/", "{")):
        return None
    if "://" in text and " @ " not in text and "@" not in text.split("://", 1)[0]:
        return None  # a bare URL: the name is in no text here
    match = _NAME.match(text)
    if match is None:
        return None
    extras = frozenset(normalise(e) for e in (match.group(2) or "").split(",") if e.strip())
    return normalise(match.group(1)), extras


# --------------------------------------------------------------------------- manifests


def _pyproject(
    text: str, names: list[str], projects: list[str], entry_points: set[EntryPoint]
) -> list[str]:
    data = _toml(text)
    found: list[str] = []
    project = _table(data.get("project"))
    if isinstance(name := project.get("name"), str):
        projects.append(name)
    tool = _table(data.get("tool"))
    poetry = _table(tool.get("poetry"))
    for declaring in (project.get("entry-points"), poetry.get("plugins")):
        for kind, points in _table(declaring).items():
            for point, value in _table(points).items():
                if isinstance(value, str):
                    entry_points.add(entry_point(kind, point, value))
    found += _strings(project.get("dependencies"))
    for group in _table(project.get("optional-dependencies")).values():
        found += _strings(group)
    for group in _table(data.get("dependency-groups")).values():
        found += _strings(group)
    found += _strings(_table(data.get("build-system")).get("requires"))
    if isinstance(name := poetry.get("name"), str):
        projects.append(name)
    names += [k for k in _table(poetry.get("dependencies")) if k.lower() != "python"]
    names += list(_table(poetry.get("dev-dependencies")))
    for group in _table(poetry.get("group")).values():
        names += list(_table(_table(group).get("dependencies")))
    for group in _table(_table(tool.get("pdm")).get("dev-dependencies")).values():
        found += _strings(group)
    found += _strings(_table(tool.get("uv")).get("dev-dependencies"))
    found += _hatch_envs(_table(_table(tool.get("hatch")).get("envs")))
    return found


def _hatch_envs(envs: Mapping[str, object]) -> list[str]:
    """Every hatch environment's `dependencies` and `extra-dependencies`."""
    found: list[str] = []
    for env in envs.values():
        found += _strings(_table(env).get("dependencies"))
        found += _strings(_table(env).get("extra-dependencies"))
    return found


def _setup_cfg(text: str, projects: list[str], entry_points: set[EntryPoint]) -> list[str]:
    parser = _ini(text)
    if parser is None:
        return []
    if parser.has_option("metadata", "name"):
        projects.append(parser.get("metadata", "name"))
    if parser.has_section("options.entry_points"):
        for group, lines in parser.items("options.entry_points"):
            entry_points.update(_entry_point_lines(group, lines))
    found: list[str] = []
    for key in ("install_requires", "tests_require", "setup_requires"):
        if parser.has_option("options", key):
            found += parser.get("options", key).splitlines()
    if parser.has_section("options.extras_require"):
        for _, value in parser.items("options.extras_require"):
            found += value.splitlines()
    return found


def _setup_py(text: str, projects: list[str], entry_points: set[EntryPoint]) -> list[str]:
    """Requirement strings in setup.py's requirement keywords, read with `ast` (never run):
    a literal list, or a name assigned a literal list at module level."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    assigned: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned[target.id] = node.value
    found: list[str] = []
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        for keyword in call.keywords:
            value = keyword.value
            if isinstance(value, ast.Name) and value.id in assigned:
                value = assigned[value.id]
            if keyword.arg == "name" and isinstance(value, ast.Constant):
                if isinstance(value.value, str):
                    projects.append(value.value)
            elif keyword.arg in _SETUP_KEYWORDS:
                found += _literal_strings(value)
            elif keyword.arg == "entry_points" and isinstance(value, ast.Dict):
                for group, lines in zip(value.keys, value.values, strict=True):
                    if isinstance(group, ast.Constant) and isinstance(group.value, str):
                        text_lines = "\n".join(_literal_strings(lines))
                        entry_points.update(_entry_point_lines(group.value, text_lines))
    return found


def entry_point(group: str, name: str, value: str) -> EntryPoint:
    """An entry point as compared: its value without whitespace (`mod:obj [extra]`)."""
    return group.strip(), name.strip(), "".join(value.split())


def _entry_point_lines(group: str, text: str) -> Iterator[EntryPoint]:
    """`name = value` lines, as setup.cfg and setup.py give a group's entry points."""
    for line in text.splitlines():
        name, eq, value = line.partition("=")
        if eq and name.strip():
            yield entry_point(group, name, value)


def _literal_strings(node: ast.expr) -> Iterator[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield from node.value.splitlines()
    elif isinstance(node, ast.List | ast.Tuple | ast.Set):
        for element in node.elts:
            yield from _literal_strings(element)
    elif isinstance(node, ast.Dict):
        for value in node.values:
            yield from _literal_strings(value)


def _tox(text: str) -> list[str]:
    parser = _ini(text)
    if parser is None:
        return []
    found: list[str] = []
    for section in parser.sections():
        if section.startswith("testenv") and parser.has_option(section, "deps"):
            found += parser.get(section, "deps").splitlines()
    return found


def _nox(text: str) -> list[str]:
    """The literal words of every `session.install(...)` in a noxfile: pyproject-hooks'
    lint session installs pre-commit, which brings virtualenv and platformdirs (a pytest
    plugin), and `--install --protect` refused the environment it had built itself."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return [
        arg.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "install"
        for arg in node.args
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
    ]


def _lock_names(text: str) -> list[str]:
    """Every package a TOML lockfile pins (uv, poetry, pdm, pylock): the whole closure."""
    data = _toml(text)
    packages = data.get("package") or data.get("packages") or []
    if not isinstance(packages, list):
        return []
    return [p["name"] for p in packages if isinstance(p, dict) and isinstance(p.get("name"), str)]


def _pipfile(text: str) -> list[str]:
    data = _toml(text)
    return [*_table(data.get("packages")), *_table(data.get("dev-packages"))]


def _pipfile_lock(text: str) -> list[str]:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return []
    if not isinstance(data, dict):
        return []
    return [name for key in ("default", "develop") for name in _table(data.get(key))]


def _pre_commit_additions(text: str) -> list[str]:
    """What a Python tool's pre-commit hooks install beside it (flake8's plugins, mypy's
    stubs): `--install` installs them with the tool, as the maintainers run it."""
    from assay.tools.python_requirements import hook_additions, parse_pre_commit_config

    added = hook_additions(parse_pre_commit_config(text))
    return [requirement for requirements in added.values() for requirement in requirements]


def _requirement_lines(text: str) -> list[str]:
    """Requirement lines of a requirements file: comments and options dropped, an
    editable `#egg=` name kept."""
    found = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        egg = _EGG.search(line)
        if egg:
            found.append(egg.group(1))
        elif line and not line.startswith("-"):
            found.append(line)
    return found


# --------------------------------------------------------------------------- parsing


def _toml(text: str) -> dict[str, object]:
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return {}


def _ini(text: str) -> configparser.RawConfigParser | None:
    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser


def _table(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

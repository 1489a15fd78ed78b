"""What a Python project declares it needs to be tested and checked, from every place
projects declare it: `[project.optional-dependencies]` extras, PEP 735
`[dependency-groups]`, requirement files for development and tests, and tox's `deps`.

Everything is read as untrusted text (no link, FIFO or endless file is followed) and
nothing is run. Dependency groups are read here rather than left to `pip install
--group`: the pip a fresh virtualenv gets often predates that option, and a group's
`{include-group = ...}` entries are resolved the same way either way. What is read
becomes plain requirement strings or `-r FILE` pairs, checked so that no string from
the repository can be taken by pip as one of its options.
"""

from __future__ import annotations

import configparser
import fnmatch
import itertools
import os
import re
import tomllib
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.tools.tox_config import TOX_FILES, ToxConfig, read_tox, tox_source
from assay.untrusted_files import LIST_MAX_NAMES, list_untrusted, read_untrusted

#: Extras and dependency groups that hold what testing and checking need.
DEV_GROUPS = (
    "test",
    "tests",
    "testing",
    "dev",
    "develop",
    "development",
    "lint",
    "linting",
    "typing",
    "types",
    "typecheck",
    "mypy",
)

#: Requirement files installed when present, the project's own first.
BASE_REQUIREMENT_FILES = ("requirements.txt",)
#: Names of requirement files for development and tests (at the root, or in requirements/).
DEV_REQUIREMENT_PATTERNS = (
    "requirements*dev*.txt",
    "requirements*test*.txt",
    "requirements*lint*.txt",
    "requirements*typing*.txt",
    "test-requirements*.txt",
    "test_requirements*.txt",
    "dev-requirements*.txt",
    "dev_requirements*.txt",
)
REQUIREMENT_DIRS = ("requirements",)
#: Words naming a requirement file in REQUIREMENT_DIRS as one for development and checks
#: (`requirements/lint.txt`, `requirements/typing.txt`), not docs or releases.
DEV_FILE_WORDS = ("dev", "test", "lint", "typing", "mypy", "style", "check")
#: Most requirement files installed (a tree of hundreds is not a declaration).
MAX_REQUIREMENT_FILES = 12
#: Largest configuration file read.
MAX_CONFIG_BYTES = 4 * 1024 * 1024
#: Most requirements taken from one source, and the longest one.
MAX_REQUIREMENTS = 200
MAX_REQUIREMENT_CHARS = 500

# A requirement file named for one Python version (`tests37.txt`, `dev-py3.8.txt`,
# `requirements-test-py310.txt`) holds pins for that interpreter only, as a tox `py37`
# environment's deps do (`_is_dev_env`); a bare major (`py3`) names no particular one.
_OTHER_INTERPRETER_FILE = re.compile(r"(?:^|[^0-9])(?:py|pypy|python)?[23]\.?[0-9]{1,2}\.txt$")
# A PEP 508 requirement begins with a distribution name; nothing pip reads as an option does.
_REQUIREMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(\s*\[[A-Za-z0-9._,\s-]*\])?[^\n\r\x00]*")
_NORMALISE = re.compile(r"[-_.]+")
#: A requirement's project name, at its start.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True, slots=True)
class Declared:
    """Requirements one source declares, ready to follow `pip install`."""

    source: str
    """Where they were read (`pyproject.toml's dependency groups test, typing`)."""
    file: str
    args: tuple[str, ...]
    """Requirement strings and `-r FILE` pairs."""


def dev_extras(pyproject: Mapping[str, Any]) -> tuple[str, ...]:
    """The extras among DEV_GROUPS that `[project.optional-dependencies]` declares."""
    return _dev_names(_declared_extras(pyproject))


#: The extra that, by convention, installs every optional dependency (`pip install x[all]`).
CATCH_ALL_EXTRA = "all"


def catch_all_extra(root: Path) -> tuple[str, ...]:
    """(CATCH_ALL_EXTRA,) when the project declares it (pyproject.toml or setup.cfg), else ()."""
    in_pyproject = CATCH_ALL_EXTRA in _declared_extras(read_pyproject(root))
    return (CATCH_ALL_EXTRA,) if in_pyproject or CATCH_ALL_EXTRA in _setup_cfg_extras(root) else ()


def project_extras(root: Path) -> tuple[str, ...]:
    """The extras to install the project with: those among DEV_GROUPS that pyproject.toml
    or setup.cfg (`[options.extras_require]`) declares, and those tox's test, lint and
    type-check environments install (`extras = testing`); every extra pyproject.toml
    declares when the project's CI installs them all (`uv sync --all-extras`: cattrs tests
    its msgspec and orjson support, each an extra)."""
    pyproject = read_pyproject(root)
    extras = dict.fromkeys(dev_extras(pyproject))
    if any(_ALL_EXTRAS.search(text) for text in ci_texts(root)):
        extras.update(dict.fromkeys(_declared_extras(pyproject)))
    extras.update(dict.fromkeys(_dev_names(_setup_cfg_extras(root))))
    config = _tox(root)
    for env in config.envs if config else ():
        if _is_dev_env(env.name):
            extras.update(dict.fromkeys(env.extras))
    return tuple(extras)


#: uv's and poetry's flag for every extra (`uv run --all-extras pytest`).
_ALL_EXTRAS = re.compile(rb"--all-extras\b")


def _declared_extras(pyproject: Mapping[str, Any]) -> list[str]:
    """The extras `[project.optional-dependencies]` declares, by name."""
    project = pyproject.get("project")
    declared = project.get("optional-dependencies") if isinstance(project, dict) else None
    names = [n for n in declared if isinstance(n, str)] if isinstance(declared, dict) else []
    return names[:MAX_REQUIREMENTS]


def setup_py_tests_require(root: Path) -> Declared | None:
    """What setup.py's `tests_require` lists (the `setup.py test` of old, which pip never
    installs): pyrsistent 0.20.0's tests import hypothesis, named only there."""
    from assay.tools.setup_py import setup_keyword

    text = _text(root, "setup.py")
    listed = setup_keyword(text, "tests_require") if text is not None else None
    if not isinstance(listed, list | tuple):
        return None
    requirements = tuple(r.strip() for r in listed if isinstance(r, str) and is_requirement(r))
    if not requirements:
        return None
    return Declared("setup.py tests_require", "setup.py", requirements[:MAX_REQUIREMENTS])


def _setup_cfg_extras(root: Path) -> list[str]:
    """The extras setup.cfg's `[options.extras_require]` declares."""
    setup_cfg = _text(root, "setup.cfg")
    if setup_cfg is None:
        return []
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(setup_cfg)
    except (configparser.Error, ValueError):
        return []  # discovery reports a malformed setup.cfg
    if not parser.has_section("options.extras_require"):
        return []
    return parser.options("options.extras_require")


def _dev_names(names: Iterable[str]) -> tuple[str, ...]:
    by_name = {_normalise(n): n for n in names}
    return tuple(by_name[g] for g in DEV_GROUPS if g in by_name)


#: tox environment names (or factors) whose deps are for testing and checking, not docs or
#: releases; `py311` and the bare `[testenv]` count too.
_DEV_ENVS = frozenset(
    {*DEV_GROUPS, "py", "unit", "check", "flake8", "pylint", "ruff", "style", "pre-commit"}
)


def _is_dev_env(name: str) -> bool:
    """Whether a tox environment's deps are for testing or checking with whatever Python runs
    them: `py27`'s and `py33`'s pins are for those interpreters only."""
    factors = name.lower().split("-") if name else [""]
    if any(re.fullmatch(r"(py|pypy)\d{2,}", f) for f in factors):
        return False
    return any(f in ("", *_DEV_ENVS) or f in ("py3", "pypy3") for f in factors)


def dependency_groups(
    pyproject: Mapping[str, Any], among: tuple[str, ...]
) -> tuple[tuple[str, ...], list[str]]:
    """(the groups of `among` the project declares, their requirements with every
    `{include-group = ...}` resolved), in declaration order, without repeats: PEP 735's
    `[dependency-groups]`, then Poetry's groups (`assay.tools.poetry_groups`)."""
    from assay.tools.poetry_groups import poetry_groups

    groups = pyproject.get("dependency-groups")
    groups = groups if isinstance(groups, dict) else {}
    by_name = {_normalise(n): v for n, v in groups.items() if isinstance(n, str)}
    for name, listed in poetry_groups(pyproject).items():
        by_name.setdefault(_normalise(name), listed)
    wanted = tuple(n for n in by_name if n in among)
    requirements: dict[str, None] = {}
    for name in wanted:
        for requirement in _group(by_name, name, ()):
            requirements.setdefault(requirement)
    return wanted, list(requirements)


def _group(groups: Mapping[str, Any], name: str, including: tuple[str, ...]) -> list[str]:
    """One group's requirements; an include cycle or an unknown group contributes nothing."""
    entries = groups.get(name)
    if name in including or not isinstance(entries, list):
        return []
    found: list[str] = []
    for entry in entries:
        if isinstance(entry, str) and is_requirement(entry):
            found.append(entry.strip())
        elif isinstance(entry, dict) and isinstance(entry.get("include-group"), str):
            found += _group(groups, _normalise(entry["include-group"]), (*including, name))
    return found


def is_requirement(text: str) -> bool:
    """Whether `text` is a requirement pip can take as an argument and never as an option."""
    text = text.strip()
    return 0 < len(text) <= MAX_REQUIREMENT_CHARS and _REQUIREMENT.fullmatch(text) is not None


def requirement_name(requirement: str) -> str:
    """The normalised project name a requirement starts with (`setuptools_scm[toml]>=3`)."""
    match = _NAME.match(requirement)
    return _normalise(match.group(0)) if match else ""


def _normalise(name: str) -> str:
    return _NORMALISE.sub("-", name).lower()


def requirement_files(root: Path) -> list[str]:
    """The project's requirements.txt, then its files for development and tests, sorted."""
    found = [n for n in BASE_REQUIREMENT_FILES if _is_file(root, n)]
    for directory in ("", *REQUIREMENT_DIRS):
        names = _root_names(root) if not directory else list_untrusted(root, directory)
        if not isinstance(names, list):
            continue
        for name in sorted(names):
            path = f"{directory}/{name}" if directory else name
            if path in found or not _is_file(root, path):
                continue
            if directory:
                dev = any(fnmatch.fnmatch(name, f"*{word}*.txt") for word in DEV_FILE_WORDS)
            else:
                dev = any(fnmatch.fnmatch(name, p) for p in DEV_REQUIREMENT_PATTERNS)
            if dev and not _OTHER_INTERPRETER_FILE.search(name):
                found.append(path)
    return found[:MAX_REQUIREMENT_FILES]


#: A requirement that names a local project by a relative `file:` URL, as uv writes the
#: project itself into the files it compiles (`referencing @ file:.`): uv reads it; pip
#: refuses the whole file ("Invalid requirement").
_RELATIVE_FILE_URL = re.compile(
    r"(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?P<extras>\[[A-Za-z0-9._,\s-]*\])?\s*@\s*"
    r"file:(?P<path>[^/\s;#][^\s;#]*)\s*(?P<marker>;[^#]*)?"
)


def requirement_file_arguments(root: Path, rel: str) -> tuple[str, ...]:
    """How pip is given the requirement file `rel`: `-r FILE`, unless the file names a local
    project by a relative `file:` URL. Its requirements are then given one by one, that one
    as the project's path (from the root, where pip runs), so that the rest still install.
    A file that also holds pip options (`-r`, `-c`, `--index-url`), a path that leaves the
    tree, or a line pip could take as an option keeps the file as it is."""
    as_file = ("-r", rel)
    text = _text(root, rel)
    if text is None or "file:" not in text:
        return as_file
    requirements: list[str] = []
    local = False
    for line in _logical_lines(text):
        found = _RELATIVE_FILE_URL.fullmatch(line)
        if found is not None:
            path = os.path.normpath(os.path.join(os.path.dirname(rel), found["path"]))
            if path == os.pardir or path.startswith(f"{os.pardir}/"):
                return as_file
            local = True
            project = path if path == os.curdir else f"./{path}"  # a path, to pip
            line = f"{project}{found['extras'] or ''}{found['marker'] or ''}"
        elif not is_requirement(line):
            return as_file
        requirements.append(line)
    if not local or len(requirements) > MAX_REQUIREMENTS:
        return as_file
    return tuple(requirements)


def _logical_lines(text: str) -> Iterator[str]:
    """A requirement file's lines as pip reads them: continuations joined, comments and
    blank lines left out."""
    for line in text.replace("\\\n", " ").splitlines():
        line = _COMMENT.sub("", line).strip()
        if line:
            yield line


#: A comment in a requirement file: `#` at the start of a line or after whitespace.
_COMMENT = re.compile(r"(^|\s)#.*")


def _root_names(root: Path) -> list[str]:
    """The names at the root (the workspace itself), at most LIST_MAX_NAMES of them."""
    names: list[str] = []
    try:
        with os.scandir(root) as entries:
            for entry in entries:
                names.append(entry.name)
                if len(names) >= LIST_MAX_NAMES:
                    break
    except OSError:
        return []
    return names


def tox_requirements(root: Path, installed: set[str]) -> Declared | None:
    """What tox would install for its test, lint and type-check environments: their `deps`
    (the bare `[testenv]`'s too), without the project itself and without files already in
    `installed`."""
    config = _tox(root)
    if config is None:
        return None
    args: dict[tuple[str, ...], None] = {}
    for env in config.envs:
        if not _is_dev_env(env.name):
            continue
        for dep in env.deps:
            arg = _tox_dep(root, dep, installed)
            if arg is not None:
                args.setdefault(arg)
    flat = tuple(a for arg in list(args)[:MAX_REQUIREMENTS] for a in arg)
    return Declared(f"{config.path} deps", config.path, flat) if flat else None


def nox_requirements(root: Path, installed: set[str]) -> Declared | None:
    """What nox would install for its test, lint and type-check sessions: the literal
    arguments of each one's `session.install(...)`, requirement files (`-r FILE`) in the
    tree and requirements, without the project itself and files already in `installed`
    (installer's test session: `session.install("-r", "tests/requirements.txt")`, which
    brings pytest-xdist, whose `-n auto` its `session.run` passes). Read, never run."""
    import ast

    from assay.discovery.python_envs import is_nox_session

    text = _text(root, "noxfile.py")
    if text is None:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    args: dict[tuple[str, ...], None] = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or not is_nox_session(node):
            continue
        if not _is_dev_env(node.name):
            continue
        for call in ast.walk(node):
            for arg in _install_arguments(call):
                found = _tox_dep(root, arg, installed)
                if found is not None:
                    args.setdefault(found)
    flat = tuple(a for arg in list(args)[:MAX_REQUIREMENTS] for a in arg)
    return Declared("noxfile.py session.install", "noxfile.py", flat) if flat else None


def _install_arguments(call: object) -> list[str]:
    """The literal words of a `session.install(...)` call, `-r FILE` joined as one, as a
    tox `deps` line would say it; none for any other call."""
    import ast

    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "install"
    ):
        return []
    words = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    joined: list[str] = []
    for word in words:
        if joined and joined[-1] in ("-r", "--requirement"):
            joined[-1] = f"-r {word}"
        else:
            joined.append(word)
    return joined


#: hatch's environments for the tests beside the dev-named ones: the default, which
#: `hatch run` uses, and `hatch test`'s own.
_HATCH_TEST_ENVS = frozenset({"default", "hatch-test"})


def hatch_requirements(root: Path) -> Declared | None:
    """What hatch installs for its test, lint and type-check environments: each one's
    `dependencies` and `extra-dependencies` under `[tool.hatch.envs.NAME]` (soupsieve
    4.1.3 declares beautifulsoup4, which its tests import, only there)."""
    from assay.discovery.hatch_scripts import HATCH_TOML, hatch_envs

    tool = read_pyproject(root).get("tool")
    hatch = tool.get("hatch") if isinstance(tool, dict) else None
    declared = hatch.get("envs") if isinstance(hatch, dict) else None
    envs = dict(declared) if isinstance(declared, dict) else {}
    source = "pyproject.toml"
    hatch_toml = _text(root, HATCH_TOML)
    if hatch_toml is not None and (own := hatch_envs(hatch_toml, ("envs",))):
        envs.update(own)  # hatch prefers hatch.toml where both define an environment
        source = HATCH_TOML
    if not envs:
        return None
    found: dict[str, None] = {}
    for name, env in envs.items():
        if not isinstance(env, dict) or not (name in _HATCH_TEST_ENVS or _is_dev_env(name)):
            continue
        for key in ("dependencies", "extra-dependencies"):
            listed = env.get(key)
            for entry in listed if isinstance(listed, list) else ():
                if isinstance(entry, str) and is_requirement(entry):
                    found.setdefault(entry.strip())
    requirements = tuple(found)[:MAX_REQUIREMENTS]
    return (
        Declared(
            "hatch.toml [envs]" if source == HATCH_TOML else "pyproject.toml [tool.hatch.envs]",
            source,
            requirements,
        )
        if requirements
        else None
    )


def _tox(root: Path) -> ToxConfig | None:
    texts = {p: t for p in TOX_FILES if (t := _text(root, p)) is not None}
    path = tox_source(texts)
    return read_tox(path, texts[path])[0] if path is not None else None


def _tox_dep(root: Path, dep: str, installed: set[str]) -> tuple[str, ...] | None:
    """One `deps` line as pip arguments: `-r FILE` for a requirement file in the tree, the
    requirement itself, or None (the project itself, options, files outside the tree)."""
    dep = dep.strip()
    match = re.fullmatch(r"-r\s*(\S+)|--requirement[=\s]\s*(\S+)", dep)
    if match:
        name = match.group(1) or match.group(2)
        if name in installed or not _inside(name) or not _is_file(root, name):
            return None
        return ("-r", name)
    if dep.startswith((".", "-")) or not is_requirement(dep):
        return None  # `.`, `-e .`, `--pre`, `-c constraints.txt`: not a declared requirement
    return (dep,)


#: Dependency groups for the tests themselves, among DEV_GROUPS.
TEST_GROUPS = ("test", "tests", "testing")


def declared_groups(root: Path) -> tuple[Declared | None, Declared | None]:
    """The requirements of the project's dependency groups for its tests (TEST_GROUPS), and
    of its other dev groups without those, each resolved; None for a side with none."""
    pyproject = read_pyproject(root)
    tests = dependency_groups(pyproject, TEST_GROUPS)
    others = dependency_groups(pyproject, tuple(g for g in DEV_GROUPS if g not in TEST_GROUPS))
    others = (others[0], [r for r in others[1] if r not in tests[1]])
    return _as_declared(*tests), _as_declared(*others)


def _as_declared(names: tuple[str, ...], requirements: list[str]) -> Declared | None:
    if not requirements:
        return None
    source = f"pyproject.toml's dependency groups {', '.join(names)}"
    return Declared(source, "pyproject.toml", tuple(requirements[:MAX_REQUIREMENTS]))


def read_pyproject(root: Path) -> Mapping[str, Any]:
    """pyproject.toml's data; empty when it is absent, unreadable or not TOML (discovery
    reports why)."""
    text = _text(root, "pyproject.toml")
    if text is None:
        return {}
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return {}


#: What a pyproject.toml without `[build-system]` builds with (PEP 517's fallback), and what
#: setuptools before 70.1 asks for beside itself.
_LEGACY_BUILD_REQUIRES = ("setuptools>=40.8.0", "wheel")


def build_requirements(root: Path) -> tuple[str, ...]:
    """What building the project at `root` needs (`[build-system] requires`, with `wheel`
    for setuptools), requirement strings only."""
    system = read_pyproject(root).get("build-system")
    if not isinstance(system, dict) or not isinstance(system.get("requires"), list):
        return _LEGACY_BUILD_REQUIRES
    declared = tuple(
        dict.fromkeys(
            r.strip() for r in system["requires"] if isinstance(r, str) and is_requirement(r)
        )
    )[:MAX_REQUIREMENTS]
    backend = system.get("build-backend")
    uses_setuptools = not isinstance(backend, str) or backend.startswith("setuptools")
    has_wheel = any(requirement_name(r) == "wheel" for r in declared)
    return (*declared, *(("wheel",) if uses_setuptools and not has_wheel else ()))


#: Build backends whose editable install runs the build again when the project is imported,
#: with the tools the build environment had: meson-python's loader calls the `ninja` of
#: pip's isolated build environment, deleted once the install is done, so every import
#: failed (`FileNotFoundError: .../pip-build-env-.../bin/ninja`). The project is then built
#: in its own environment, as meson-python's documentation asks (`--no-build-isolation`).
REBUILT_AT_IMPORT = frozenset({"mesonpy"})


def rebuilds_at_import(root: Path) -> bool:
    """Whether the project's build backend is one of `REBUILT_AT_IMPORT`."""
    system = read_pyproject(root).get("build-system")
    return isinstance(system, dict) and system.get("build-backend") in REBUILT_AT_IMPORT


#: pre-commit hook repositories of Python linters and type checkers, and the package whose
#: version their `rev` is.
PRE_COMMIT_PACKAGES = {
    "psf/black": "black",
    "psf/black-pre-commit-mirror": "black",
    "astral-sh/ruff-pre-commit": "ruff",
    "charliermarsh/ruff-pre-commit": "ruff",
    "pre-commit/mirrors-mypy": "mypy",
    "pycqa/flake8": "flake8",
    "pycqa/pylint": "pylint",
    "pycqa/isort": "isort",
    "detachhead/basedpyright-prek-mirror": "basedpyright",
}
PRE_COMMIT_CONFIG = ".pre-commit-config.yaml"
_VERSION = re.compile(r"v?(\d+(?:\.\d+)*(?:[.+-]?[A-Za-z0-9]+)*)")


#: Lockfiles that pin every package of a project's environment, its tools among them, as
#: `[[package]]` tables with a name and a version: what `uv run ruff`, `poetry run mypy` and
#: `pdm run pytest` run in the maintainers' CI.
LOCKFILES = ("uv.lock", "poetry.lock", "pdm.lock")
#: Lockfiles list every package of every platform: larger than a configuration file.
MAX_LOCKFILE_BYTES = 32 * 1024 * 1024


def locked_versions(root: Path) -> tuple[str, dict[str, str]] | None:
    """(the project's first lockfile, normalised name -> version) for every package it
    locks from an index at one version; None without a readable lockfile. A package locked
    at two versions (one per Python, say) is left out: which one runs is not known here;
    and so is the project itself (an editable or virtual source)."""
    for name in LOCKFILES:
        data = read_untrusted(root, name, limit=MAX_LOCKFILE_BYTES)
        if not isinstance(data, bytes):
            continue
        try:
            locked = tomllib.loads(data.decode("utf-8")).get("package")
        except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError, ValueError):
            continue
        versions: dict[str, set[str]] = {}
        for entry in locked if isinstance(locked, list) else ():
            if not isinstance(entry, dict) or not _from_an_index(entry.get("source")):
                continue
            package, version = entry.get("name"), entry.get("version")
            if (
                isinstance(package, str)
                and isinstance(version, str)
                and _VERSION.fullmatch(version)
            ):
                versions.setdefault(_normalise(package), set()).add(version)
        single = {key: found.pop() for key, found in versions.items() if len(found) == 1}
        return name, dict(list(single.items())[:MAX_LOCKED])
    return None


#: Packages held to a lockfile's versions at most (a lockfile of a monorepo lists thousands).
MAX_LOCKED = 2000


def _from_an_index(source: object) -> bool:
    """Whether a lock entry's source is a package index: uv's `{ registry = ... }`, poetry's
    and pdm's entries without one; not the project's own `editable`/`virtual` directory,
    a git checkout or a file."""
    if source is None:
        return True
    if not isinstance(source, dict):
        return False
    return "registry" in source or source.get("type") in ("legacy", "pypi")


#: Where a project's CI says what it runs, for a mention of pre-commit (`pre-commit run`,
#: `pre-commit/action`, prek), beside the workflows of `.github/workflows/`.
_CI_FILES = (
    ".gitlab-ci.yml",
    ".circleci/config.yml",
    "azure-pipelines.yml",
    ".travis.yml",
    ".cirrus.yml",
    "bitbucket-pipelines.yml",
    "tox.ini",
    "noxfile.py",
    "Makefile",
    "justfile",
    "Justfile",
)
#: Workflows read at most: a hostile tree may hold thousands.
MAX_WORKFLOWS = 50
_RUNS_PRE_COMMIT = re.compile(rb"\bpre-commit\b|\bprek\b")
#: A pre-commit configuration's own section for pre-commit.ci, which runs the hooks.
_PRE_COMMIT_CI = re.compile(r"^ci:", re.MULTILINE)


def pre_commit_runs_in_ci(root: Path) -> bool:
    """Whether the project's CI runs its pre-commit hooks: a CI file that names pre-commit,
    a `ci:` section for pre-commit.ci, or the README's badge of its results. Hooks only a developer runs pin what their editor
    checks; their pins go stale while CI installs the tools afresh (inflect 7.6.0 pins
    ruff 0.12.0, and its CI's tox runs ruff through pytest-ruff, unpinned)."""
    config = _text(root, PRE_COMMIT_CONFIG)
    if config is not None and _PRE_COMMIT_CI.search(config):
        return True
    if config is not None and any(_PRE_COMMIT_CI_BADGE in _bytes(root, r) for r in _READMES):
        return True
    return any(_RUNS_PRE_COMMIT.search(text) for text in ci_texts(root))


#: pre-commit.ci's status badge, which a project's README shows where the service runs its
#: hooks without a `ci:` section (pytest-mock 3.14.1).
_PRE_COMMIT_CI_BADGE = b"results.pre-commit.ci/badge/"
_READMES = ("README.md", "README.rst", "README", "README.txt")


def ci_texts(root: Path, skip: Collection[str] = ()) -> Iterator[bytes]:
    """The bytes of each file where the project's CI says what it runs and installs: its
    GitHub workflows, other CI systems' files, and the tox, nox, make and just files CI
    runs; those in `skip` left out."""
    workflows = list_untrusted(root, ".github/workflows")
    names = [
        f".github/workflows/{n}"
        for n in (workflows if isinstance(workflows, list) else ())
        if n.endswith((".yml", ".yaml"))
    ]
    for rel in (*names[:MAX_WORKFLOWS], *_CI_FILES):
        if rel in skip:
            continue
        data = read_untrusted(root, rel, limit=MAX_CONFIG_BYTES)
        if isinstance(data, bytes):
            yield data


#: Beside the CI files, where a tox configuration may name a requirement file in its deps.
_OTHER_TOX_FILES = ("tox.toml", "setup.cfg", "pyproject.toml")


def installed_by_ci(root: Path, rel: str) -> bool:
    """Whether the project's CI, task runners or tox name the requirement file `rel`
    (`pip install -r requirements.txt`, `deps = -rrequirements/test.txt`): else it is a
    developer's list, which CI never installs (sortedcontainers 2.4's requirements.txt
    holds blist, which no longer builds, for its benchmarks; its tox installs pytest)."""
    name = rel.encode()
    texts = itertools.chain(ci_texts(root), (_bytes(root, f) for f in _OTHER_TOX_FILES))
    return any(name in text for text in texts)


def _bytes(root: Path, rel: str) -> bytes:
    data = read_untrusted(root, rel, limit=MAX_CONFIG_BYTES)
    return data if isinstance(data, bytes) else b""


def pre_commit_pins(root: Path) -> dict[str, str]:
    """`package -> version` for the Python tools whose pre-commit hooks pin a release, when
    the project's CI runs those hooks (`pre_commit_runs_in_ci`); {} otherwise."""
    if not pre_commit_runs_in_ci(root):
        return {}
    frozen = _frozen_revisions(_text(root, PRE_COMMIT_CONFIG) or "")
    pins: dict[str, str] = {}
    for package, repo in _pre_commit_tools(root):
        rev = str(repo.get("rev", "")).strip()
        version = _VERSION.fullmatch(frozen.get(rev, rev))
        if version is not None and not _COMMIT.fullmatch(version.group(0)):
            pins.setdefault(package, version.group(1))
    return pins


#: A git commit a hook's `rev` names (`pre-commit autoupdate --freeze`): no release.
_COMMIT = re.compile(r"[0-9a-f]{7,40}")
#: `rev: <commit>  # frozen: v2.3.0`, as `pre-commit autoupdate --freeze` writes it.
_FROZEN = re.compile(r"^\s*rev:\s*['\"]?([0-9a-f]{7,40})['\"]?\s*#\s*frozen:\s*(\S+)", re.MULTILINE)


def _frozen_revisions(text: str) -> dict[str, str]:
    """`commit -> release` of the hooks frozen to a commit, from the comments beside them
    (the YAML parser drops comments)."""
    return {commit: release for commit, release in _FROZEN.findall(text)}


def pre_commit_additions(root: Path) -> dict[str, tuple[str, ...]]:
    """`package -> requirements` its pre-commit hooks install beside it
    (`additional_dependencies`: mypy's type stubs, flake8's plugins), which the tool
    the maintainers run has; only strings pip cannot take as options."""
    return hook_additions(read_pre_commit_config(root))


def hook_additions(config: Mapping[Any, Any]) -> dict[str, tuple[str, ...]]:
    """`pre_commit_additions` of a parsed pre-commit configuration."""
    additions: dict[str, dict[str, None]] = {}
    for package, repo in pre_commit_tools(config):
        hooks = repo.get("hooks")
        for hook in hooks if isinstance(hooks, list) else ():
            extra = hook.get("additional_dependencies") if isinstance(hook, dict) else None
            for requirement in extra if isinstance(extra, list) else ():
                if isinstance(requirement, str) and is_requirement(requirement):
                    additions.setdefault(package, {}).setdefault(requirement.strip())
    return {p: tuple(list(r)[:MAX_REQUIREMENTS]) for p, r in additions.items()}


def read_pre_commit_config(root: Path) -> dict[Any, Any]:
    """The project's pre-commit configuration, parsed; {} when there is none to read."""
    text = _text(root, PRE_COMMIT_CONFIG)
    return {} if text is None else parse_pre_commit_config(text)


def parse_pre_commit_config(text: str) -> dict[Any, Any]:
    """A pre-commit configuration's text, parsed; {} when it does not parse."""
    import yaml  # only install planning and lint walks read pre-commit's file

    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (yaml.YAMLError, RecursionError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _pre_commit_tools(root: Path) -> list[tuple[str, dict[Any, Any]]]:
    return pre_commit_tools(read_pre_commit_config(root))


def pre_commit_tools(config: Mapping[Any, Any]) -> list[tuple[str, dict[Any, Any]]]:
    """(package, hook repository entry) for each Python tool's repository in a pre-commit
    configuration."""
    repos = config.get("repos")
    found: list[tuple[str, dict[Any, Any]]] = []
    for repo in repos if isinstance(repos, list) else ():
        if not isinstance(repo, dict) or not isinstance(repo.get("repo"), str):
            continue
        slug = "/".join(repo["repo"].lower().removesuffix(".git").rstrip("/").split("/")[-2:])
        package = PRE_COMMIT_PACKAGES.get(slug)
        if package is not None:
            found.append((package, repo))
    return found


def _text(root: Path, rel: str) -> str | None:
    data = read_untrusted(root, rel, limit=MAX_CONFIG_BYTES)
    if not isinstance(data, bytes):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _is_file(root: Path, rel: str) -> bool:
    # A plain file reached through no link: what pip will be told to read.
    return isinstance(read_untrusted(root, rel, limit=MAX_CONFIG_BYTES), bytes)


def _inside(rel: str) -> bool:
    return not rel.startswith("/") and ".." not in Path(rel).parts

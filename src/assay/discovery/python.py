"""Detector 3: Python tool configuration (pytest, ruff, mypy, pyright) and unittest suites.

A tool's configuration being present means the project uses it, so the tool's
native command is planned, run by the project's own interpreter.
"""

from __future__ import annotations

import itertools
import posixpath
import re
import shlex
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from assay.discovery.files import RepoFiles, UnreadableFile
from assay.discovery.model import (
    Candidate,
    DetectorReport,
    Dropped,
    Ecosystem,
    Origin,
    ProjectEnv,
    Source,
    report,
)
from assay.discovery.nested_projects import nested_projects
from assay.discovery.pre_commit_mypy import mypy_hook_args
from assay.discovery.python_envs import StatedRun, mypy_stated_in_tox
from assay.discovery.ruff_config_files import config_files, exclusion_patterns
from assay.discovery.text import line_of, load_ini
from assay.option_values import option_values
from assay.verdict import Kind

NAME = "python-config"

#: Directories where test files conventionally live.
TEST_DIRS = ("tests", "test")

#: Most test files opened to tell a unittest suite from a pytest one.
MAX_TEST_FILES_READ = 20

#: Directory names ruff already leaves out by default; others need --extend-exclude.
RUFF_DEFAULT_EXCLUDES = frozenset({".venv", "venv", "node_modules", "site-packages", ".tox"})


@dataclass(frozen=True, slots=True)
class ToolConfig:
    """Where a tool's configuration was found."""

    tool: str
    source: Source
    mypy_files: tuple[str, ...] | None = None
    """The paths mypy's own `files` option names (None: it has none)."""


def find_tool_configs(texts: dict[str, str]) -> tuple[list[ToolConfig], list[str]]:
    """Tool configurations in the given file texts (path -> text): (configs, errors). Pure."""
    configs: list[ToolConfig] = []
    errors: list[str] = []
    pyproject = texts.get("pyproject.toml")
    if pyproject is not None:
        try:
            tool = tomllib.loads(pyproject).get("tool", {})
        except (tomllib.TOMLDecodeError, ValueError, RecursionError) as exc:
            errors.append(f"pyproject.toml: not valid TOML: {exc}")
            tool = {}
        if not isinstance(tool, dict):
            tool = {}
        tables = {
            "pytest": r"^\[tool\.pytest",
            "ruff": r"^\[tool\.ruff",
            "mypy": r"^\[tool\.mypy",
            "pyright": r"^\[tool\.(based)?pyright",
        }
        for name, pattern in tables.items():
            key = "basedpyright" if name == "pyright" and "basedpyright" in tool else name
            if key in tool:
                section = tool[key]
                files = (
                    _mypy_files(section.get("files"))
                    if name == "mypy" and isinstance(section, dict)
                    else None
                )
                configs.append(
                    ToolConfig(name, Source("pyproject.toml", line_of(pyproject, pattern)), files)
                )
    for path, sections in (
        ("setup.cfg", {"tool:pytest": "pytest", "mypy": "mypy"}),
        ("tox.ini", {"pytest": "pytest"}),
        ("pytest.ini", {"pytest": "pytest"}),
        ("mypy.ini", {"mypy": "mypy"}),
        (".mypy.ini", {"mypy": "mypy"}),
    ):
        text = texts.get(path)
        if text is None:
            continue
        parser, error = load_ini(text, path)
        if error:
            errors.append(error)
            continue
        for section, tool in sections.items():
            if parser.has_section(section):
                line = line_of(text, rf"^\[{re.escape(section)}\]")
                files = (
                    _mypy_files(parser.get(section, "files"))
                    if tool == "mypy" and parser.has_option(section, "files")
                    else None
                )
                configs.append(ToolConfig(tool, Source(path, line), files))
    for path, tool in (
        ("ruff.toml", "ruff"),
        (".ruff.toml", "ruff"),
        ("pyrightconfig.json", "pyright"),
    ):
        if path in texts:
            configs.append(ToolConfig(tool, Source(path)))
    if "conftest.py" in texts:
        configs.append(ToolConfig("pytest", Source("conftest.py")))
    return _first_per_tool(configs), errors


def _mypy_files(value: object) -> tuple[str, ...] | None:
    """mypy's `files`: a list, or one comma-separated string (None: not set)."""
    if value is None:
        return None
    entries = value.split(",") if isinstance(value, str) else value
    if not isinstance(entries, list):
        return ()
    return tuple(e.strip() for e in entries if isinstance(e, str) and e.strip())


def _first_per_tool(configs: list[ToolConfig]) -> list[ToolConfig]:
    seen: dict[str, ToolConfig] = {}
    for config in configs:
        seen.setdefault(config.tool, config)
    return list(seen.values())


def tool_candidates(
    configs: list[ToolConfig],
    env: ProjectEnv,
    root_dirs: set[str],
    code: tuple[str, ...] = (),
    ruff_left_out: tuple[str, ...] = (),
    mypy_in_tox: StatedRun | None = None,
    mypy_hook: tuple[str, ...] | None = None,
) -> list[Candidate]:
    """Native commands for configured tools (`code`: `project_code`'s; `ruff_left_out`: the
    paths `ruff check .` leaves out, `_unlinted_by_ruff`'s; `mypy_in_tox`: `mypy_stated_in_tox`'s; `mypy_hook`:
    `pre_commit_mypy.mypy_hook_args`'). Pure."""
    found = []
    for config in configs:
        if config.tool == "pytest":
            # pytest's configuration names its own test paths: a stated command's flags
            # (`--maxfail=2`) must not replace the fast path's tuning.
            argv = env.python_module("pytest")
            found.append(_configured(config, Kind.TEST, argv, subcommand=None))
        elif config.tool == "ruff":
            args = ruff_check_args(env, ruff_left_out)
            found.append(
                _configured(
                    config, Kind.LINT, env.python_tool("ruff", *args), subcommand=("check",)
                )
            )
        elif config.tool == "mypy" and mypy_in_tox is not None:
            candidate = _configured(
                config, Kind.TYPECHECK, env.python_tool("mypy", *mypy_in_tox.args)
            )
            why = f"{candidate.reason}, run as {mypy_in_tox.where} runs it"
            found.append(replace(candidate, reason=why))
        elif config.tool == "mypy":
            targets = _mypy_targets(config, env, root_dirs, code)
            argv = env.python_tool("mypy", *(mypy_hook or ()), *targets)
            candidate = _configured(config, Kind.TYPECHECK, argv)
            if mypy_hook:
                hooked = f"{candidate.reason}, with the options its pre-commit hook gives it"
                candidate = replace(candidate, reason=hooked)
            found.append(candidate)
        elif config.tool == "pyright":
            found.append(_configured(config, Kind.TYPECHECK, env.python_tool("pyright"), cost=2))
    return found


def ruff_check_args(env: ProjectEnv, config_files: tuple[str, ...]) -> tuple[str, ...]:
    """`check .`, its walk leaving out the virtualenvs ruff does not skip by itself, and the
    configuration files it would lint beside the Python (`assay.discovery.ruff_config_files`)
    and other projects nested in the tree (`assay.discovery.nested_projects`), both given
    in `config_files`."""
    venvs = [d for d in env.venv_dirs if d not in RUFF_DEFAULT_EXCLUDES]
    excluded = [*venvs, *exclusion_patterns(config_files)]
    return ("check", ".", *(("--extend-exclude", ",".join(excluded)) if excluded else ()))


#: A configured tool's native command ranks below a command tox or nox states (cost 0).
CONFIGURED_COST = 1


def _configured(
    config: ToolConfig,
    kind: Kind,
    argv: tuple[str, ...],
    cost: int = CONFIGURED_COST,
    subcommand: tuple[str, ...] | None = (),
) -> Candidate:
    """`subcommand`: see `Candidate.composed`; None keeps the command as composed."""
    return Candidate(
        kind=kind,
        argv=argv,
        tool=config.tool,
        ecosystem=Ecosystem.PYTHON,
        origin=Origin.PYTHON_CONFIG,
        source=config.source,
        reason=f"{config.tool} configured in {config.source.file}",
        cost=cost,
        composed=subcommand,
    )


def _mypy_targets(
    config: ToolConfig, env: ProjectEnv, root_dirs: set[str], code: tuple[str, ...]
) -> tuple[str, ...]:
    """What a configured mypy no stated command runs checks: the files its configuration
    names, else the project's own code (`src`, else its packages and modules at the root),
    not its tests, docs and scripts. mypy configured is not mypy run on everything: a
    `[mypy]` section may serve stubtest or an editor, and the maintainers' own `mypy .`,
    where it passes, passes on the code alone too."""
    if config.mypy_files is not None:
        return ()
    if "src" in root_dirs:
        return ("src",)
    if code:
        return code
    # mypy skips dot-directories by itself; a `venv/` must be excluded explicitly.
    excludes = [d for d in env.venv_dirs if not d.startswith(".")]
    return (".", *(a for d in excludes for a in ("--exclude", f"^{re.escape(d)}/")))


def _plain_path(entry: str) -> bool:
    """A path as mypy reads it from its command line: no glob, no `~`, no variable."""
    return not any(c in entry for c in "*?[]$~")


def mypy_files_split(files: RepoFiles) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(the paths mypy's own `files` names that the tree has, those it lacks), when it
    lacks some and every entry is a plain path; None otherwise. mypy stops at a named file
    that is missing (packaging's sdist leaves out the noxfile.py its `files` names)."""
    texts, _ = files.read_texts(_MYPY_CONFIG_FILES)
    configs, _ = find_tool_configs(texts)
    named = next((c.mypy_files for c in configs if c.tool == "mypy"), None)
    if not named or not all(_plain_path(entry) for entry in named):
        return None
    present = tuple(e for e in named if files.has(e.rstrip("/") or "."))
    absent = tuple(e for e in named if e not in present)
    return (present, absent) if absent else None


_MYPY_CONFIG_FILES = ("pyproject.toml", "setup.cfg", "mypy.ini", ".mypy.ini")

#: Where pytest looks for its configuration in a directory, in its order, with the section.
PYTEST_INI_FILES = (
    ("pytest.ini", "pytest"),
    (".pytest.ini", "pytest"),
    ("pyproject.toml", ""),
    ("tox.ini", "pytest"),
    ("setup.cfg", "tool:pytest"),
)
PYTEST_CONFIG_FILES = tuple(path for path, _ in PYTEST_INI_FILES)


def pytest_addopts(files: RepoFiles) -> tuple[str, ...] | None:
    """The words of `addopts` in the configuration pytest reads at the root (the first file
    of `PYTEST_INI_FILES` that configures it); None when it has none or it is unreadable."""
    return pytest_setting(files, "addopts")


def pytest_setting(files: RepoFiles, key: str) -> tuple[str, ...] | None:
    """The words of setting `key` (`addopts`, `testpaths`) in the configuration pytest
    reads at the root; None when it has none or it is unreadable."""
    for path, section in PYTEST_INI_FILES:
        try:
            text = files.read_text(path)
        except UnreadableFile:
            return None
        if text is None:
            continue
        if not section:
            found = _pyproject_setting(text, key)
            if found is None:
                continue  # a pyproject.toml that does not configure pytest is skipped
            return found or None
        parser, error = load_ini(text, path)
        if error or not parser.has_section(section):
            if path in ("pytest.ini", ".pytest.ini"):
                return None  # pytest's own file is the one it reads, even when empty
            continue
        value = parser.get(section, key, fallback="")
        return _words(value) or None
    return None


def pytest_test_files(files: RepoFiles) -> tuple[str, ...]:
    """Where the configuration pytest reads at the root says its tests are, as patterns of
    `assay.protect`: each of `testpaths` whole (`checks/**`), and each `python_files`
    pattern anywhere (`**/check_*.py`), and each `--doctest-glob` of its `addopts` (`**/*.rst`,
    text files pytest runs as tests). A suite kept under names of its own is the suite.

    But not a `testpaths` entry that holds the project's code (`src`, the package itself
    with its tests inside, the root): protected whole, the change's code would be put back
    to the base's before its tests ran, and a wrong value pass. There the test files are
    protected by their names, as everywhere (`test_*.py`, `tests/`, `conftest.py`, the
    `python_files` patterns)."""
    places = [
        f"{path.strip('/')}/**"
        for path in pytest_setting(files, "testpaths") or ()
        if path.strip("/")
        and not path.startswith("/")
        and ".." not in path.split("/")
        and not _holds_code(files, path.strip("/"))
    ]
    doctests = option_values(pytest_setting(files, "addopts") or (), ("--doctest-glob",))
    names = [
        f"**/{name}"
        for name in (*(pytest_setting(files, "python_files") or ()), *doctests)
        if "/" not in name
    ]
    return tuple(dict.fromkeys((*places, *names)))


def _holds_code(files: RepoFiles, path: str) -> bool:
    """Whether the directory `path` is, or lies inside, where the project keeps its code:
    the root, `src`, or a package at the root whose name does not say tests (`testing`,
    `unit_tests`; a plugin's `pytest_things` is code)."""
    top = posixpath.normpath(path).split("/")[0]
    if top in (".", "src"):
        return True
    name = top.lower()
    if top in TEST_DIRS or name.startswith("test") or name.endswith(("tests", "_test")):
        return False
    return files.is_dir(top) and "__init__.py" in files.list_dir(top)


def _pyproject_setting(text: str, key: str) -> tuple[str, ...] | None:
    """Setting `key` of `[tool.pytest.ini_options]` or pytest 9's `[tool.pytest]`; () when
    pytest is configured without it; None when pytest is not configured here."""
    try:
        tool = tomllib.loads(text).get("tool", {})
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return None
    table = tool.get("pytest") if isinstance(tool, dict) else None
    if not isinstance(table, dict):
        return None
    options = table.get("ini_options", table)
    value = options.get(key, "") if isinstance(options, dict) else ""
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    return _words(str(value))


def _words(value: str) -> tuple[str, ...]:
    try:
        return tuple(shlex.split(value))
    except ValueError:
        return ()


#: Root files that are a project's tooling, not its code.
_TOOLING_MODULES = frozenset({"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "tasks.py"})


def project_code(files: RepoFiles, root_names: set[str], env: ProjectEnv) -> tuple[str, ...]:
    """The project's packages (directories with an `__init__.py`) and modules at the
    root, sorted; tests, docs, environments and tooling left out."""
    left_out = {*TEST_DIRS, "docs", "doc", "examples", "scripts", "benchmarks", *env.venv_dirs}
    found = []
    for name in root_names:
        if name in left_out or name.startswith("."):
            continue
        if files.is_dir(name):
            if "__init__.py" in files.list_dir(name):
                found.append(name)
        elif name.endswith(".py") and not _is_test_file(name) and name not in _TOOLING_MODULES:
            found.append(name)
    return tuple(sorted(found))


def test_style(texts: list[str]) -> str | None:
    """`pytest`, `unittest` or None, from the text of some test files. Pure."""
    uses_unittest = False
    for text in texts:
        if re.search(r"^\s*(import pytest|from pytest\b)", text, re.MULTILINE):
            return "pytest"
        if re.search(r"^\s*(import unittest|from unittest\b)", text, re.MULTILINE):
            uses_unittest = True
    return "unittest" if uses_unittest else None


def unittest_candidate(
    test_dir: str, first_file: str, env: ProjectEnv, is_package: bool
) -> Candidate:
    # With an __init__.py the tests import as a package from the directory above it
    # (`-t .`, `-t src`), which also puts a src layout's modules on the path; without
    # one, the directory itself is the top level.
    top = posixpath.dirname(test_dir) or "."
    args = ("discover", "-s", test_dir, *(("-t", top) if is_package else ()))
    return Candidate(
        kind=Kind.TEST,
        argv=env.python_module("unittest", *args),
        tool="unittest",
        ecosystem=Ecosystem.PYTHON,
        origin=Origin.PYTHON_CONFIG,
        source=Source(first_file, 1),
        reason=f"{test_dir}/ holds unittest test cases and no pytest configuration exists",
    )


CONFIG_FILES = (
    "pyproject.toml",
    "setup.cfg",
    "tox.ini",
    "tox.toml",
    "pytest.ini",
    "mypy.ini",
    ".mypy.ini",
    "ruff.toml",
    ".ruff.toml",
    "pyrightconfig.json",
    "conftest.py",
)


def detect(files: RepoFiles, env: ProjectEnv) -> DetectorReport:
    texts, errors = files.read_texts(CONFIG_FILES)
    configs, parse_errors = find_tool_configs(texts)
    errors += parse_errors
    turned_off = _turned_off_by_pytest_enabler(texts.get("pyproject.toml"))
    dropped = [
        Dropped(
            f"{c.tool} (configured in {c.source.file})",
            c.source,
            f"pyproject.toml's [tool.pytest-enabler.{c.tool}] turns the project's {c.tool} run "
            "off (an empty table: pytest-enabler adds no option for it)",
        )
        for c in configs
        if c.tool in turned_off
    ]
    configs = [c for c in configs if c.tool not in turned_off]
    root_names = set(files.list_dir("."))
    root_dirs = {n for n in root_names if files.is_dir(n)}
    code = project_code(files, root_names, env) if any(c.tool == "mypy" for c in configs) else ()
    ruff = any(c.tool == "ruff" for c in configs)
    ruff_left_out = _unlinted_by_ruff(files, env) if ruff else ()
    mypy = any(c.tool == "mypy" for c in configs)
    mypy_in_tox = mypy_stated_in_tox(texts) if mypy else None
    mypy_hook = mypy_hook_args(Path(files.root)) if mypy and not mypy_in_tox else None
    found = tool_candidates(configs, env, root_dirs, code, ruff_left_out, mypy_in_tox, mypy_hook)
    if not any(c.tool == "pytest" for c in configs):
        found += (
            _unittest(files, env, root_dirs, dropped)
            or _setup_py_test_command(files, env)
            or _setup_py_test_suite(files, env)
            or _root_unittest(files, env, dropped)
        )
    return report(NAME, found, dropped=dropped, errors=errors)


def _unlinted_by_ruff(files: RepoFiles, env: ProjectEnv) -> tuple[str, ...]:
    """What the composed `ruff check .` leaves out: other projects nested in the tree, and
    the configuration files outside them."""
    nested = nested_projects(files, skip=env.venv_dirs)
    configs = config_files(files, skip=(*env.venv_dirs, *nested))
    return (*nested, *configs)


def _turned_off_by_pytest_enabler(pyproject: str | None) -> frozenset[str]:
    """The tools a `[tool.pytest-enabler.TOOL]` table without `addopts` turns off. The jaraco
    skeleton (inflect, keyring, zipp...) runs mypy and ruff through pytest-enabler's plugins,
    and turns one off so: `[tool.pytest-enabler.mypy]`, then a comment."""
    if pyproject is None or "pytest-enabler" not in pyproject:
        return frozenset()
    try:
        tables = tomllib.loads(pyproject).get("tool", {}).get("pytest-enabler")
    except (tomllib.TOMLDecodeError, ValueError, RecursionError, AttributeError):
        return frozenset()
    if not isinstance(tables, dict):
        return frozenset()
    return frozenset(
        tool
        for tool, table in tables.items()
        if tool in ("mypy", "ruff") and isinstance(table, dict) and "addopts" not in table
    )


def _is_test_file(name: str) -> bool:
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def test_files(
    files: RepoFiles, directory: str, is_test: Callable[[str], bool] = _is_test_file
) -> list[str]:
    """Test files in `directory` (one level, plus one below), named as pytest would
    collect them unless `is_test` says otherwise."""
    paths: list[str] = []
    for name in files.list_dir(directory):
        if is_test(name):
            paths.append(f"{directory}/{name}")
        elif "." not in name and files.is_dir(f"{directory}/{name}"):
            paths += [
                f"{directory}/{name}/{n}"
                for n in files.list_dir(f"{directory}/{name}")
                if is_test(n)
            ]
    return paths


def _unittest(
    files: RepoFiles, env: ProjectEnv, root_dirs: set[str], dropped: list[Dropped]
) -> list[Candidate]:
    """A unittest suite in the first conventional test directory that has test files: at
    the root, or under `src/` (decorator's `src/tests/test.py`). Files named as pytest
    collects them first; else as unittest's own discovery does (`test*.py`: `test.py`,
    Django's `tests.py`). None, and why in `dropped`, where the files are scripts."""
    for test_dir in _test_dirs(files, root_dirs):
        paths = test_files(files, test_dir) or test_files(files, test_dir, _unittest_finds)
        if not paths:
            continue
        # An unreadable test file only leaves the style undecided; the runner will report it.
        texts, _ = files.read_texts(paths[:MAX_TEST_FILES_READ])
        if test_style(list(texts.values())) != "unittest":
            return []
        package = files.is_file(f"{test_dir}/__init__.py")
        candidate = unittest_candidate(test_dir, paths[0], env, package)
        return _unless_scripts(candidate, texts, dropped)
    return []


#: `unittest.main()` at a module's top level, outside any `if __name__ == "__main__":`.
_MAIN_ON_IMPORT = re.compile(r"^(?:unittest\.)?main\(", re.MULTILINE)


def _unless_scripts(
    candidate: Candidate, texts: dict[str, str], dropped: list[Dropped]
) -> list[Candidate]:
    """`candidate`, unless a test file it would import runs unittest.main() on import:
    discovery's import then parses discovery's own arguments, exits 2, and every such
    module is an error (ply's tests/testlex.py, run by its Makefile's `python
    tests/testlex.py`, was FAILED pristine). Left out so the project's own command runs."""
    for path, text in sorted(texts.items()):
        bare_main = "from unittest import" in text and re.search(r"\bmain\b", text)
        match = _MAIN_ON_IMPORT.search(text)
        if match and (match.group().startswith("unittest.") or bare_main):
            line = text.count("\n", 0, match.start()) + 1
            why = (
                f"{path}:{line} calls unittest.main() when imported: the file is a script, "
                "and discovery's import would run it with discovery's own arguments"
            )
            dropped.append(Dropped(candidate.command, Source(path, line), why))
            return []
    return [candidate]


#: Interpreter options a setup.py test command may pass before its script: warnings and
#: bytes warnings, which change no test's outcome unless the project asks them to.
_SCRIPT_OPTION = re.compile(r"-W\S+|-bb?")


def _setup_py_test_command(files: RepoFiles, env: ProjectEnv) -> list[Candidate]:
    """The script setup.py's own `test` command runs (what `setup.py test` ran), when it is
    a file of the tree: simplejson 3.19.3's runs `simplejson/tests/__init__.py`, whose
    `main` runs every test again without the C speedups, and the doctests of its modules
    and index.rst. pytest's discovery runs neither: a wrong value in the pure-Python
    encoder was VERIFIED, where the maintainers' command fails it."""
    from assay.tools.setup_py import setup_test_argv

    text = files.read_text("setup.py")
    argv = setup_test_argv(text) if text is not None else None
    if argv is None:
        return []
    options = list(itertools.takewhile(_SCRIPT_OPTION.fullmatch, argv))
    script, *args = argv[len(options) :] or ("",)
    if not (
        script.endswith(".py")
        and not script.startswith(("-", "/"))
        and ".." not in script.split("/")
        and files.is_file(script)
    ):
        return []
    return [
        Candidate(
            kind=Kind.TEST,
            argv=(env.python, *options, script, *args),
            tool="shell",  # the project's own runner, run as tox runs `python runtests.py`
            ecosystem=Ecosystem.PYTHON,
            origin=Origin.PYTHON_CONFIG,
            source=Source("setup.py", line_of(text or "", r"sys\.executable")),
            reason=f"setup.py's test command runs {script}, and no test runner is configured",
        )
    ]


def _setup_py_test_suite(files: RepoFiles, env: ProjectEnv) -> list[Candidate]:
    """unittest on setup.py's `test_suite` (what `setup.py test` ran), when it names a
    module or package of the tree: humanfriendly 10.0's `humanfriendly.tests` is a
    `tests.py`, which neither pytest's naming nor unittest's discovery finds."""
    from assay.tools.setup_py import test_suite

    text = files.read_text("setup.py")
    suite = test_suite(text) if text is not None else None
    if suite is None:
        return []
    path = suite.replace(".", "/")
    if not (files.is_file(f"{path}.py") or files.is_file(f"{path}/__init__.py")):
        return []
    return [
        Candidate(
            kind=Kind.TEST,
            argv=env.python_module("unittest", suite),
            tool="unittest",
            ecosystem=Ecosystem.PYTHON,
            origin=Origin.PYTHON_CONFIG,
            source=Source("setup.py", line_of(text or "", r"\btest_suite\b")),
            reason=f"setup.py's test_suite names {suite}, and no test runner is configured",
        )
    ]


def _root_unittest(files: RepoFiles, env: ProjectEnv, dropped: list[Dropped]) -> list[Candidate]:
    """unittest's own discovery from the root, when the tests are a module there that only
    it finds (`test*.py`: jsonpointer's `tests.py`, whose `load_tests` adds the package's
    doctests), and no test directory or `test_suite` said where they are."""
    paths = sorted(
        name
        for name in files.list_dir(".")
        if _unittest_finds(name) and files.is_file(name) and not _is_test_file(name)
    )
    if not paths:
        return []
    texts, _ = files.read_texts(paths[:MAX_TEST_FILES_READ])
    if test_style(list(texts.values())) != "unittest":
        return []
    candidate = Candidate(
        kind=Kind.TEST,
        argv=env.python_module("unittest"),
        tool="unittest",
        ecosystem=Ecosystem.PYTHON,
        origin=Origin.PYTHON_CONFIG,
        source=Source(paths[0], 1),
        reason=f"{paths[0]} holds unittest test cases, which unittest's discovery from "
        "the root loads (pytest's naming does not), and no test runner is configured",
    )
    return _unless_scripts(candidate, texts, dropped)


def _test_dirs(files: RepoFiles, root_dirs: set[str]) -> list[str]:
    below_src = [f"src/{d}" for d in TEST_DIRS] if "src" in root_dirs else []
    return [d for d in TEST_DIRS if d in root_dirs] + [d for d in below_src if files.is_dir(d)]


def _unittest_finds(name: str) -> bool:
    """Whether unittest's discovery, with its default pattern `test*.py`, loads `name`."""
    return name.startswith("test") and name.endswith(".py")

"""Detector 3b: tox and nox environments, read statically for the commands they run.

A project whose test command lives only in tox.ini or noxfile.py still gets
that command, run directly in the project's environment: tox and nox would
build fresh virtualenvs (slow, networked), which verification must not need.
The noxfile is parsed with `ast`, never imported.
"""

from __future__ import annotations

import ast
import functools
import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from assay.discovery.command_lines import (
    candidate_from,
    from_cwd,
    is_python,
    recognise_line,
    split_commands,
)
from assay.discovery.files import RepoFiles
from assay.discovery.model import (
    DEFAULT_COST,
    Candidate,
    DetectorReport,
    Dropped,
    Ecosystem,
    FileParser,
    Origin,
    ProjectEnv,
    Source,
    parsed_report,
)
from assay.discovery.text import line_at, line_of, one_line
from assay.tools.env_names import env_kind, runs_no_tests
from assay.tools.tox_config import SITE_PACKAGES, TOX_FILES, ToxEnv, read_tox, tox_source
from assay.verdict import Kind

NAME = "tox-nox"

#: A command tox or nox states outranks a tool merely configured (`[tool.pytest]`): it is
#: what the maintainers run, with the environment they run it in.
#: The tool of a build a tox environment runs before its tests (`_builds_first`): one
#: whose output the tests import, so it is planned beside any other build.
IN_PLACE_BUILD_TOOL = "build_ext"
STATED_COST = 0
#: Among the test commands an environment states, the suite comes first: a test runner
#: over documentation files (`pytest README.rst`) or an unrecognised command (`python -m
#: doctest guide.rst`) is taken only when the environment states nothing else.
SIDE_TEST_COST = STATED_COST + 1
#: A tox test command for Pythons long gone ranks after the tests assay finds itself.
STALE_COST = DEFAULT_COST + 1
_DOC_FILE = re.compile(r"\.(rst|md|txt)$")
#: The oldest Python still supported when this was written (3.7 ended in June 2023): a tox
#: configuration whose env_list names none this new is left from before it.
OLDEST_SUPPORTED_PYTHON = (3, 8)
#: tox's own work directory: what a developer's tox left there is no part of the tree.
TOX_WORK_DIR = ".tox"


def _section_header(text: str, section: str) -> re.Match[str] | None:
    """Where tox's `section` starts: `[testenv:lint]` in an INI file; `[env.lint]` in
    tox.toml, `[tool.tox.env.lint]` in pyproject.toml (a key of it may be quoted)."""
    dotted = r"\s*\.\s*".join(rf'"?{re.escape(part)}"?' for part in section.split("."))
    native = section == "env_run_base" or section.startswith("env.")
    spelt = rf"(?:tool\.tox\.)?{dotted}" if native else re.escape(section)
    return re.compile(rf"^\[\s*{spelt}\s*\]", re.MULTILINE).search(text)


def parse_tox(
    text: str, path: str, env: ProjectEnv, files: RepoFiles | None = None
) -> tuple[list[Candidate], list[Dropped], list[str]]:
    """Candidates from the `commands` of tox environments, each with its `setenv`. With
    `files`, the tree says where it holds a package a command names in tox's site-packages,
    and whether anything it runs asks for an environment `env_list` leaves out; without,
    pure."""
    config, error = read_tox(path, text)
    if config is None:
        return [], [], [error or f"{path}: not a tox configuration"]
    command_texts = _command_texts(files, skip=path)
    found: list[Candidate] = []
    dropped: list[Dropped] = []
    # Environments that differ only in their interpreter (`py311-tests`, `py312-tests`)
    # state the same command once each: it is one check.
    stated: set[tuple[Kind, str, tuple[tuple[str, str], ...]]] = set()
    newest = config.newest_listed_python
    stale = newest if newest is not None and newest < OLDEST_SUPPORTED_PYTHON else None
    for tox_env in config.envs:
        named = env_kind(tox_env.name)
        header = _section_header(text, tox_env.section)
        section_line = line_at(text, header.start()) if header else None
        if named is None and runs_no_tests(tox_env.name):
            why = "its name says documentation, coverage, formatting or release chores"
            dropped.append(Dropped(f"tox env {tox_env.name}", Source(path, section_line), why))
            continue
        if not config.runs(tox_env, command_texts):
            why = (
                f"tox runs env {tox_env.name} only when asked: env_list leaves it out, and "
                "nothing the project runs (CI, make, tox-gh-actions) names it"
            )
            dropped.append(Dropped(f"tox env {tox_env.name}", Source(path, section_line), why))
            continue
        for command in tox_env.commands:
            own = _checking_kind(command.line)
            # A `lint` environment's `mypy src tests` type-checks (python-dotenv's).
            kind = own if own and named in _STATIC_KINDS else named or own
            raw = command.raw.strip()
            # Where the env's section states it, not where another env states it first.
            after = header.start() if header else 0
            stated_at = line_of(text, re.escape(raw[:40]), after=after)
            source = Source(path, stated_at or line_of(text, re.escape(raw[:40])) or section_line)
            if kind is None:
                # `doctest = sphinx-build -b doctest ...` (cachetools): not a check assay
                # knows, and the env's name does not say it is the tests.
                why = (
                    f"tox env {tox_env.name}'s name says no kind of check, and the command "
                    "is no lint or type check assay knows"
                )
                dropped.append(Dropped(raw, source, why))
                continue
            seen = (kind, command.line or command.raw, tuple(sorted(tox_env.setenv.items())))
            if seen in stated:
                continue
            stated.add(seen)
            line, problem = _in_tree(command.line, files), command.problem
            if line is None and command.line is not None:
                problem = "names a package in tox's site-packages that the tree does not hold"
            if tox_env.change_dir is None:
                line, problem = None, "runs in a directory only tox makes (change_dir)"
            if line is None:
                dropped.append(Dropped(raw, source, problem))
                continue
            if not line:
                continue
            why = f"command of tox env [{tox_env.section}]"
            if tox_env.section == "testenv" and tox_env.name:
                why = f"command of tox env {tox_env.name} (from [testenv], as env_list names it)"
            if tox_env.base_python:
                # tabulate's `[testenv:py38]`: the command is the env's, the interpreter
                # is not.
                why += f", run with {env.python} where tox would use {tox_env.base_python}"
            where = _run_dir(tox_env.change_dir, line, files)
            if where == "." and tox_env.change_dir:
                why += f"; tox makes its change_dir {tox_env.change_dir}/ empty, so from the root"
            candidate = _from_line(line, kind, env, source, why, dict(tox_env.setenv), where)
            if candidate is None:
                dropped.append(Dropped(line, source, f"not a {kind.value} command"))
            elif stale is not None and kind is Kind.TEST and named is Kind.TEST:
                found.append(_stale(candidate, stale))
            else:
                found.append(candidate)
            if candidate is not None and kind is Kind.TEST:
                found += _builds_first(tox_env, text, path, env, stated, files)
    return found, dropped, []


def _run_dir(change_dir: str | None, line: str, files: RepoFiles | None) -> str:
    """Where a tox environment's command `line` runs: its `change_dir`, or the root ("."
    for "") when the tree does not hold that directory. tox makes a missing one, empty, as
    it runs (boltons' `changedir = .tox`, tox's own work directory), and a command there
    names the tree by tox's root, whose paths assay has already written from the root
    (`{tox_root}/tests` as `tests`): run from the root, they name the same files. A word
    climbing out of it (`../tests`) keeps the directory, which then is not there."""
    if not change_dir:
        return "."
    made = change_dir == TOX_WORK_DIR or change_dir.startswith(TOX_WORK_DIR + "/")
    if files is None or (files.is_dir(change_dir) and not made):
        return change_dir
    try:
        words = split_commands(line)
    except ValueError:
        return change_dir
    climbs = any(w == ".." or w.startswith("../") for c in words for w in c)
    return change_dir if climbs else "."


def _builds_first(
    tox_env: ToxEnv,
    text: str,
    path: str,
    env: ProjectEnv,
    stated: set[tuple[Kind, str, tuple[tuple[str, str], ...]]],
    files: RepoFiles | None,
) -> list[Candidate]:
    """The C extensions a tox environment whose tests are planned builds in place first
    (`commands_pre = python setup.py build_ext --inplace`, wcwidth's): its tests import
    them, and fail without them for want of a build, not for anything in the code. Each is
    a build, run before the tests as a build stage is."""
    found = []
    for command in tox_env.commands_pre:
        argv = _in_place_build(command.line)
        seen = (Kind.BUILD, command.line or "", tuple(sorted(tox_env.setenv.items())))
        if argv is None or tox_env.change_dir is None or seen in stated:
            continue
        stated.add(seen)
        where = _run_dir(tox_env.change_dir, command.line or "", files)
        argv[0] = from_cwd(env.python, env, where)
        raw = command.raw.strip()
        source = Source(path, line_of(text, re.escape(raw[:40])))
        reason = f"commands_pre of tox env {tox_env.name or 'testenv'}, before its tests: {raw}"
        found.append(
            Candidate(
                Kind.BUILD,
                tuple(argv),
                IN_PLACE_BUILD_TOOL,
                Ecosystem.PYTHON,
                Origin.PYTHON_CONFIG,
                source,
                reason,
                cwd=where,
                env=dict(tox_env.setenv),
                cost=STATED_COST,
            )
        )
    return found


def _in_place_build(line: str | None) -> list[str] | None:
    """`python setup.py build_ext --inplace` (or `-i`) as words; None for anything else."""
    try:
        commands = split_commands(line or "")
    except ValueError:
        return None
    if len(commands) != 1:
        return None
    words = commands[0]
    if len(words) < 4 or not is_python(words[0]) or words[1:3] != ["setup.py", "build_ext"]:
        return None
    return list(words) if {"--inplace", "-i"} & set(words[3:]) else None


@dataclass(frozen=True, slots=True)
class StatedRun:
    """A tool's arguments as one of the project's own commands gives them."""

    args: tuple[str, ...]
    where: str
    """Which command, for the check's reason (`tox env typing (pyproject.toml:118)`)."""


def mypy_stated_in_tox(texts: Mapping[str, str]) -> StatedRun | None:
    """How the project's tox configuration runs mypy in an environment `env_list` leaves
    out: the first such `mypy` command run in the root, tox's placeholders filled in; None
    where there is none. Such an environment is not planned (`parse_tox`), but it is where
    the project says what mypy checks (exceptiongroup's `typing` env: `mypy
    tests/check_types.py`, the code itself never type-checked), so a configured mypy runs
    on that, not on a guess. One that runs by default is tox's own candidate, which
    outranks the configured one. Pure."""
    path = tox_source(texts)
    config = read_tox(path, texts[path])[0] if path is not None else None
    if path is None or config is None:
        return None
    for tox_env in config.envs:
        if not config.opt_in(tox_env) or tox_env.change_dir != "":
            continue
        for command in tox_env.commands:
            line = command.line
            hits = recognise_line(line) if line and SITE_PACKAGES not in line else []
            mypy = next((hit for hit in hits if hit.tool == "mypy"), None)
            if mypy is None:
                continue
            header = _section_header(texts[path], tox_env.section)
            after = header.start() if header else 0
            at = line_of(texts[path], re.escape(command.raw.strip()[:40]), after=after)
            name = f"tox env {tox_env.name}" if tox_env.name else "tox"
            return StatedRun(mypy.args, f"{name} ({path}:{at})" if at else f"{name} ({path})")
    return None


def _stale(candidate: Candidate, newest: tuple[int, int]) -> Candidate:
    """A test command of a tox configuration whose env_list names no Python after `newest`,
    ranked below every other, the tests assay finds itself included: jmespath 1.0.1 lists
    py26 to py37 and runs `nosetests`, which no Python since 3.10 can run, while its CI runs
    pytest on today's Pythons."""
    why = (
        f"{candidate.reason}; tox's env_list names no Python after {newest[0]}.{newest[1]}, "
        "so this ranks last: the project no longer runs it as it is"
    )
    return replace(candidate, origin=Origin.FALLBACK, cost=STALE_COST, reason=why)


def _command_texts(files: RepoFiles | None, skip: str) -> Callable[[], list[bytes]] | None:
    """The texts of the files where the project says what it runs, but `skip`, read once
    when first asked for; None without the tree."""
    if files is None:
        return None
    from pathlib import Path

    from assay.discovery.stated_runs import command_texts

    return functools.cache(lambda: list(command_texts(Path(files.root), skip={skip})))


def _in_tree(line: str | None, files: RepoFiles | None) -> str | None:
    """`line` with each package it names in tox's site-packages (`SITE_PACKAGES`) named
    where the tree holds it, at the root or in `src/`; None when the tree holds one
    nowhere (or when there is no line)."""
    if line is None or SITE_PACKAGES not in line:
        return line

    def where(match: re.Match[str]) -> str:
        package = match.group(1)
        for place in (package, f"src/{package}"):
            if files is not None and (files.is_dir(place) or files.is_file(f"{place}.py")):
                return place
        return SITE_PACKAGES + package

    placed = re.sub(re.escape(SITE_PACKAGES) + r"([\w.-]+)", where, line)
    return None if SITE_PACKAGES in placed else placed


#: The kinds of check an environment's name may say without saying which tool runs.
_STATIC_KINDS = frozenset({Kind.LINT, Kind.TYPECHECK})


def _checking_kind(line: str | None) -> Kind | None:
    """The kind of a lint or type check a command of an environment whose name says
    nothing runs (sortedcontainers' `rufflint`: `ruff check {toxinidir}/src`); None for
    anything else, tests included: such an environment may run benchmarks."""
    if not line:
        return None
    kinds = {r.kind for r in recognise_line(line)}
    return next((k for k in (Kind.LINT, Kind.TYPECHECK) if k in kinds), None)


def _from_line(
    line: str,
    kind: Kind,
    env: ProjectEnv,
    source: Source,
    why: str,
    extra_env: dict[str, str],
    cwd: str = ".",
) -> Candidate | None:
    recognised = [r for r in recognise_line(line) if r.kind is kind]
    if recognised:
        hit = recognised[0]
        reason = f"{why}: {' '.join(hit.argv)}"
        candidate = candidate_from(
            hit, env, Origin.PYTHON_CONFIG, source, reason, cwd=cwd, extra_env=extra_env
        )
        paths = [a for a in hit.args if not a.startswith("-")]
        on_docs = kind is Kind.TEST and bool(paths) and all(_DOC_FILE.search(p) for p in paths)
        return replace(candidate, cost=SIDE_TEST_COST if on_docs else STATED_COST)
    if kind is not Kind.TEST:
        return None
    # An unrecognised test command (`python runtests.py`) is still the project's test
    # command; run it generically with the project's interpreter.
    try:
        words = split_commands(line)
    except ValueError:
        return None
    if len(words) != 1 or _is_chore(words[0]):
        return None
    argv = list(words[0])
    if is_python(argv[0]):
        argv[0] = from_cwd(env.python, env, cwd)
        if argv[1:3] == ["-m", "doctest"] and "-v" not in argv:
            # Silent when every example passes, as when a file has none: `-v` ends with
            # "N passed and M failed.", which says tests ran.
            argv.insert(3, "-v")
    return Candidate(
        kind,
        tuple(argv),
        "shell",
        Ecosystem.PYTHON,
        Origin.PYTHON_CONFIG,
        source,
        f"{why}: {line}",
        cwd=cwd,
        env=extra_env,
        cost=SIDE_TEST_COST,
    )


def _is_chore(words: list[str]) -> bool:
    """Whether a command sets the environment up or reports on a run (`pip install`,
    `coverage report`, `diff-cover coverage.xml`) rather than running tests."""
    joined = " ".join(words)
    return bool(
        re.search(
            r"\b(pip|install|sync|coverage (combine|report|html|xml)|rm|mkdir|echo)\b"
            r"|(^|/)(diff-cover|diff-quality|codecov|coveralls|genbadge)\b"
            # `setup.py test` is gone from setuptools; `setup.py anything` builds first.
            r"|(^|\s|/)setup\.py\b",
            joined,
        )
    )


def parse_noxfile(
    text: str, path: str, env: ProjectEnv
) -> tuple[list[Candidate], list[Dropped], list[str]]:
    """Candidates from `session.run(...)` calls with literal arguments in nox sessions. Pure."""
    try:
        tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return [], [], [f"{path}: not valid Python: {one_line(exc)}"]
    found: list[Candidate] = []
    dropped: list[Dropped] = []
    # nox runs its sessions in the noxfile's directory: `__file__` is its name there.
    place: dict[str, tuple[str, ...]] = {"__file__": (posixpath.basename(path),)}
    module_values = {**place, **_literal_values(tree.body, place)}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or not is_nox_session(node):
            continue
        named = env_kind(node.name)
        if named is None:
            why = "its name says no kind of check (tests, lint, typing) assay runs"
            dropped.append(Dropped(f"nox session {node.name}", Source(path, node.lineno), why))
            continue
        values = {**module_values, **_literal_values(list(ast.walk(node)), module_values)}
        for call in ast.walk(node):
            words = _session_run_words(call, values)
            if words is None:
                continue
            source = Source(path, getattr(call, "lineno", None))
            if isinstance(words, _Computed):
                why = "the command starts with a computed value assay cannot read"
                dropped.append(Dropped(words.shown, source, why))
                continue
            line = " ".join(words)
            # A `lint` session's `mypy src tests` type-checks (resolvelib's), as a tox env's.
            own = _checking_kind(line)
            kind = own if own and named in _STATIC_KINDS else named
            candidate = _from_line(line, kind, env, source, f"nox session {node.name!r}", {})
            if candidate is None:
                dropped.append(Dropped(line, source, f"not a {kind.value} command"))
            else:
                found.append(candidate)
    return found, dropped, []


def is_nox_session(node: ast.FunctionDef) -> bool:
    """Whether `node` is a function nox runs as a session (`@nox.session`, `@session`)."""
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Attribute) and target.attr == "session":
            return True
        if isinstance(target, ast.Name) and target.id == "session":
            return True
    return False


@dataclass(frozen=True, slots=True)
class _Computed:
    """A `session.run(...)` whose program is computed: only its literal words are known."""

    shown: str


def _session_run_words(
    node: ast.AST, values: dict[str, tuple[str, ...]]
) -> list[str] | _Computed | None:
    """The words of a `session.run(...)` call: literal strings, paths (`ROOT / "src"`), and
    names bound once to either (`coverage = ["python", "-m", "coverage"]` for `*coverage`).
    A computed value after the program (`*session.posargs`) is left out; a computed program
    is not guessed from the words after it (`*coverage, "run", "-m", "pytest"` is not
    `run -m pytest`)."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "run"
    ):
        return None
    words: list[str] = []
    for arg in node.args:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            words.append(arg.value)
            continue
        known = _value(arg.value if isinstance(arg, ast.Starred) else arg, values)
        if known is not None and (isinstance(arg, ast.Starred) or len(known) == 1):
            words += known
        elif not words:
            literal = [
                a.value
                for a in node.args
                if isinstance(a, ast.Constant) and isinstance(a.value, str)
            ]
            return _Computed(" ".join(["<computed>", *literal])) if literal else None
    return words or None


def _literal_values(
    nodes: list[ast.AST] | list[ast.stmt], known: dict[str, tuple[str, ...]]
) -> dict[str, tuple[str, ...]]:
    """Names assigned exactly once among `nodes`, to a string, a list/tuple of strings or a
    path (`_value`), given the names already `known`."""
    values: dict[str, tuple[str, ...]] = {}
    seen: set[str] = set()
    for node in nodes:
        if not isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if not isinstance(target, ast.Name):
                continue
            literal = (
                _value(node.value, {**known, **values}) if isinstance(node, ast.Assign) else None
            )
            if target.id in seen or literal is None:
                values.pop(target.id, None)
            else:
                values[target.id] = literal
            seen.add(target.id)
    return values


def _value(node: ast.AST | None, values: dict[str, tuple[str, ...]]) -> tuple[str, ...] | None:
    """The words `node` stands for: a string, a list/tuple of strings, a name bound to
    words, or a path within the tree (`_path`); None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return (node.value,)
    if isinstance(node, ast.Name):
        return values.get(node.id)
    if isinstance(node, (ast.List, ast.Tuple)) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts
    ):
        return tuple(e.value for e in node.elts)  # type: ignore[attr-defined]
    path = _path(node, values)
    return None if path is None else (path,)


#: The calls that leave a path's meaning as it is: `Path(__file__).resolve().parent`.
_SAME_PATH = frozenset({"resolve", "absolute", "Path", "PurePath", "abspath", "realpath", "str"})


def _path(node: ast.AST | None, values: dict[str, tuple[str, ...]]) -> str | None:
    """The path, from the noxfile's directory, of an expression noxfiles build their paths
    with: `Path(__file__).parent` (or `os.path.dirname(__file__)`) and `ROOT / "src"` (or
    `os.path.join(ROOT, "src")`), over names bound to such paths (referencing 0.37.0 runs
    `pytest` on `REFERENCING = ROOT / "referencing"`). None for anything else, and for a
    path that leaves the noxfile's directory."""
    found = _path_of(node, values, depth=0)
    if found is None:
        return None
    normal = posixpath.normpath(found)
    return None if normal.startswith(("..", "/")) else normal


def _path_of(node: ast.AST | None, values: dict[str, tuple[str, ...]], depth: int) -> str | None:
    if node is None or depth > 20:
        return None
    deeper = depth + 1
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        bound = values.get(node.id)
        return bound[0] if bound is not None and len(bound) == 1 else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        left, right = _path_of(node.left, values, deeper), _path_of(node.right, values, deeper)
        return None if left is None or right is None else posixpath.join(left, right)
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = _path_of(node.value, values, deeper)
        return None if inner is None else posixpath.join(inner, "..")
    if not isinstance(node, ast.Call) or node.keywords:
        return None
    method = node.func.value if isinstance(node.func, ast.Attribute) else None
    called = (
        node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    )
    args = [a for a in (_path_of(a, values, deeper) for a in node.args) if a is not None]
    if len(args) != len(node.args):
        return None
    if method is not None and not args and called in _SAME_PATH:
        return _path_of(method, values, deeper)  # `Path(...).resolve()`
    if called in _SAME_PATH and len(args) == 1:
        return args[0]  # `Path(__file__)`, `os.path.abspath(__file__)`
    if called == "dirname" and len(args) == 1:
        return posixpath.join(args[0], "..")
    if called == "joinpath" and method is not None and args:
        base = _path_of(method, values, deeper)
        return None if base is None else posixpath.join(base, *args)
    if called == "join" and args:
        return posixpath.join(*args)  # `os.path.join(ROOT, "src")`
    return None


PARSERS: dict[str, FileParser] = {"tox.ini": parse_tox, "noxfile.py": parse_noxfile}


def detect(files: RepoFiles, env: ProjectEnv) -> DetectorReport:
    texts, errors = files.read_texts((*TOX_FILES, "noxfile.py"))
    # tox reads the first of tox.ini, setup.cfg, pyproject.toml, tox.toml that configures it;
    # the other files' problems are other detectors' to report.
    tox = tox_source(texts)
    parsers: dict[str, FileParser] = {"noxfile.py": parse_noxfile}
    if tox is not None:
        parsers[tox] = functools.partial(parse_tox, files=files)
    read = {path: text for path, text in texts.items() if path in parsers}
    errors = [e for e in errors if e.split(":", 1)[0] in (*parsers, "tox.ini")]
    return parsed_report(NAME, parsers, read, errors, env)

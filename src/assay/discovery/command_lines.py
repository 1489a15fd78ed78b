"""Recognising check commands in text: which kind and tool a shell line runs (pure).

Used wherever a command is written down rather than configured: Makefile
recipes, CI `run:` steps, tox `commands`, README code blocks. It never runs
anything; it reads words. Which words name which tool is declared with each
tool (`assay.tools`); here are only the launchers around them (`uv run`, `npx`).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from assay.discovery.model import Candidate, Ecosystem, Origin, ProjectEnv, Source
from assay.discovery.pytest_mypy import mypy_only_args
from assay.tools import LAUNCHERS, command_words, recognise_words, tool_spec
from assay.tools.index import SHELL
from assay.tools.spec import ASKS_THE_TOOL, Launch
from assay.tools.spec import SCRIPT_KINDS as _SCRIPT_KINDS
from assay.verdict import Kind

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True, slots=True)
class Recognised:
    """What a command line runs, with the tool's own arguments."""

    kind: Kind
    tool: str
    ecosystem: Ecosystem
    args: tuple[str, ...]
    """Arguments after the tool (after `pytest`, after `go test`)."""
    argv: tuple[str, ...]
    """The whole command as written, without leading variable assignments."""
    env: tuple[tuple[str, str], ...] = ()
    """Leading `NAME=value` assignments."""
    name: str = ""
    """The check's name: the tool's, or the subcommand's (`go-test`) for a tool with several."""
    patterns: tuple[str, ...] = ()
    """Arguments a shell would expand (`tests/*.py` unquoted in a CI step): `shell_globs`."""
    via: str = ""
    """The command as written where it stands for this one (`hatch run cov`), else empty."""


def split_commands(line: str) -> list[list[str]]:
    """Shell words of each simple command in `line` (split on `&&`, `||`, `;`, `|`).

    Raises ValueError for text the shell would not accept (an unclosed quote)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    commands: list[list[str]] = [[]]
    for token in lexer:
        if token and set(token) <= set(";&|"):
            commands.append([])
        else:
            commands[-1].append(token)
    return [c for c in commands if c]


def only_command(line: str) -> list[str] | None:
    """The words of `line` when it is one simple command; None for several, or for text
    the shell would not accept."""
    try:
        commands = split_commands(line)
    except ValueError:
        return None
    return commands[0] if len(commands) == 1 else None


#: Shell that turns a failing command into a success: `cmd || true`, `cmd || :`,
#: `cmd || exit 0`, `cmd; true` at the end, and make's `-` prefix on a recipe line.
_MASKED_FAILURE = re.compile(r"\|\|\s*(true|:|exit\s+0)(?![\w-])|;\s*(true|:)\s*$|^\s*@?-")


def masks_failure(line: str) -> bool:
    """Whether `line` makes a failing command exit 0: a check built on it proves nothing."""
    return _MASKED_FAILURE.search(line) is not None


#: Programs that package or publish a Python distribution, with the subcommands that do
#: (None: any). `build` counts only as `python -m build`: `./build` is a project's script.
_PACKAGERS: Mapping[str, frozenset[str] | None] = {
    "pyproject-build": None,
    "twine": frozenset({"upload", "register"}),
    "flit": frozenset({"build", "publish"}),
    "poetry": frozenset({"build", "publish"}),
    "hatch": frozenset({"build", "publish"}),
    "pdm": frozenset({"build", "publish"}),
    "uv": frozenset({"build", "publish"}),
}
_SETUP_PY_PACKAGING = frozenset(
    {"sdist", "bdist", "bdist_wheel", "bdist_egg", "upload", "register"}
)


def packages_distribution(line: str) -> bool:
    """Whether `line` builds or publishes a Python distribution (`python -m build`,
    `python setup.py sdist`, `twine upload`): release packaging, not a check of the code."""
    try:
        commands = split_commands(line)
    except ValueError:
        return False
    for words in commands:
        _take_assignments(words)
        if any(
            is_python(_basename(word)) and words[at + 1 : at + 3] == ["-m", "build"]
            for at, word in enumerate(words)
        ):
            return True  # `python -m build`, `uv run python -m build`
        setup_py = len(words) > 2 and is_python(_basename(words[0])) and words[1] == "setup.py"
        if setup_py and _SETUP_PY_PACKAGING.intersection(words[2:]):
            return True
        core, _ = _strip_runners(words)
        if not core or _basename(core[0]) not in _PACKAGERS:
            continue
        subcommands = _PACKAGERS[_basename(core[0])]
        if subcommands is None or subcommands.intersection(core[1:2]):
            return True
    return False


#: A listing a shell test turns into a gate: `test -z "$(gofmt -l .)"`, `diff -u
#: <(echo -n) <(gofmt -d .)`, make's `test -z "$(shell gofmt -l .)"`. Inside a command or
#: process substitution it is no simple command of the line, yet what it prints decides
#: whether the line fails.
_GATED_LISTING = re.compile(r"[$<]\((?:shell\s+)?\s*(?P<command>gofmt\s[^()]*)\)")


def checked_commands(line: str) -> list[list[str]]:
    """`split_commands(line)`, then each listing the line gates on (`_GATED_LISTING`).

    Raises ValueError for text the shell would not accept."""
    commands = split_commands(line)
    for match in _GATED_LISTING.finditer(line):
        commands += split_commands(match["command"])
    return commands


def recognise_line(line: str, *, shell: bool = False) -> list[Recognised]:
    """Every check command in one line, in order; [] when none or unparsable. `shell`: the
    line goes through a shell, which expands its unquoted patterns (`with_patterns`)."""
    try:
        commands = checked_commands(line)
    except ValueError:
        return []
    found = []
    for words in commands:
        hit = recognise(words)
        if hit is not None:
            found.append(with_patterns(hit, line) if shell else hit)
    return found


def with_patterns(hit: Recognised, line: str) -> Recognised:
    """`hit` knowing which of its arguments the shell running `line` would expand."""
    from assay.discovery.shell_globs import unquoted_patterns

    patterns = unquoted_patterns(line)
    return replace(hit, patterns=tuple(a for a in hit.args if a in patterns))


def recognise(words: list[str] | tuple[str, ...]) -> Recognised | None:
    """The check a single command runs, or None when it is not one assay knows."""
    words = list(words)
    env = _take_assignments(words)
    if words[:1] == ["env"]:  # `FOO=1 env BAR=2 pytest`
        words.pop(0)
        env += _take_assignments(words)
    argv = tuple(words)
    core, implied = _strip_runners(words)
    env += implied
    if not core or (core[1:] and set(core[1:]) <= ASKS_THE_TOOL):
        return None  # `yarn tsc --version` in a CI step checks nothing (redux-thunk)
    hit = recognise_words(_basename(core[0]), core[1:])
    if hit is None:
        return _tests_module(words, core, env)
    match = hit.match
    if hit.tool == "pytest" and (typecheck := mypy_only_args(match.args)) is not None:
        return Recognised(
            Kind.TYPECHECK,
            "mypy",
            hit.ecosystem,
            typecheck,
            ("mypy", *typecheck),
            tuple(env),
            name="mypy",
            via=shlex.join(argv),
        )
    return Recognised(
        match.kind,
        hit.tool,
        hit.ecosystem,
        match.args,
        argv,
        tuple(env),
        name=match.name or hit.tool,
    )


#: A module path component that says the module runs the project's tests.
_TEST_PACKAGES = frozenset({"test", "tests"})
_MODULE_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def _tests_module(
    words: list[str], core: list[str], env: list[tuple[str, str]]
) -> Recognised | None:
    """`python -m PKG.tests[.RUNNER] ARGS`: the project's own test runner, a module of its
    test package (simplejson's CI: `python -m simplejson.tests._cibw_runner .`, a unittest
    suite that runs every test twice, with the C speedups and without). Run as written and
    read generically; left out, the plan fell back to pytest's discovery, which runs
    neither the second pass nor the doctests its suite adds, and VERIFIED a change those
    fail. None for any other command assay does not know."""
    if len(words) < 3 or not is_python(_basename(words[0])) or not core:
        return None
    module = core[0]
    if not _MODULE_PATH.fullmatch(module) or not _TEST_PACKAGES & set(module.split(".")):
        return None
    at = len(words) - len(core)  # what the launchers leave is the end of `words`
    if words[at - 1 : at] != ["-m"] and words[at] != f"-m{module}":
        return None  # reached through a runner (`coverage run -m`), not as `python -m`
    return Recognised(Kind.TEST, SHELL, Ecosystem.PYTHON, tuple(core[1:]), tuple(words), tuple(env))


def core_command(words: Sequence[str]) -> list[str]:
    """The command `words` runs, without its `NAME=value` assignments and the launchers in
    front of it (`FOO=1 uv run tox -e py` -> `tox -e py`)."""
    rest = list(words)
    _take_assignments(rest)
    return _strip_runners(rest)[0]


def _take_assignments(words: list[str]) -> list[tuple[str, str]]:
    """Remove the leading `NAME=value` words from `words`, returning them as pairs."""
    env = []
    while words and _ASSIGNMENT.match(words[0]):
        name, _, value = words.pop(0).partition("=")
        env.append((name, value))
    return env


def _strip_runners(words: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """The command the launchers in front of `words` run, and the variables that stand for
    the interpreter options they were given (`python -W error -m pytest`)."""
    words = list(words)
    env: list[tuple[str, str]] = []
    for _ in range(4):  # `uv run python -m pytest` peels twice; bounded
        if not words:
            return words, env
        launcher = LAUNCHERS.get(_basename(words[0]))
        if launcher is not None and (
            not launcher.subcommand or (len(words) > 1 and words[1] in ("run", "exec"))
        ):
            words = words[2 if launcher.subcommand else 1 :]
            while launcher.options and words and words[0].startswith("-"):
                # npx --no-install tsc, uv run --frozen pytest, uv run --group dev ruff
                words = words[2 if words[0] in launcher.valued else 1 :]
            continue
        head = _basename(words[0])
        peeled = _python_module(words[1:]) if is_python(head) else None
        if peeled is not None:
            words, options = peeled
            env += options
            continue
        measured = _coverage_module(words) if head == "coverage" else None
        if measured is not None:
            words = measured
            continue
        break
    return words, env


#: Interpreter options that change nothing a check is judged by.
_QUIET_PYTHON_OPTIONS = frozenset({"-u", "-B", "-uB", "-Bu"})
#: `-X` options, with the variable that means the same.
_PYTHON_X_OPTIONS = {"dev": ("PYTHONDEVMODE", "1"), "utf8": ("PYTHONUTF8", "1")}


def _python_module(args: list[str]) -> tuple[list[str], list[tuple[str, str]]] | None:
    """`[options] -m MODULE ARGS` after an interpreter as `MODULE ARGS`, with its warning
    and `-X` options as the variables that mean the same (`-W error` is
    `PYTHONWARNINGS=error`: the stated strictness stays); `-mMODULE` is `-m MODULE`. None
    for anything else, or an option that has no such variable (`-O`, `-I`)."""
    warnings: list[str] = []
    env: list[tuple[str, str]] = []
    at = 0
    while at < len(args):
        word = args[at]
        if word == "-m":
            module = args[at + 1 : at + 2]
            if not module:
                return None
            rest = [*module, *args[at + 2 :]]
            break
        if word.startswith("-m"):
            rest = [word[2:], *args[at + 1 :]]
            break
        if word in _QUIET_PYTHON_OPTIONS:
            at += 1
            continue
        name, value = word[:2], word[2:]
        if name in ("-W", "-X") and not value:
            value = args[at + 1] if at + 1 < len(args) else ""
            at += 1
        if name == "-W" and value:
            warnings.append(value)
        elif name == "-X" and value in _PYTHON_X_OPTIONS:
            env.append(_PYTHON_X_OPTIONS[value])
        else:
            return None
        at += 1
    else:
        return None
    if warnings:
        env.append(("PYTHONWARNINGS", ",".join(warnings)))
    return rest, env


#: `coverage run` options that take the next word as their value.
_COVERAGE_VALUE_OPTIONS = frozenset(
    {"--rcfile", "--source", "--include", "--omit", "--context", "--concurrency", "--data-file"}
)


def _coverage_module(words: list[str]) -> list[str] | None:
    """`coverage run [options] -m X args` as `X args`: measuring coverage is not the check,
    the module it runs is. None for anything else (`coverage run script.py`, `coverage report`)."""
    if words[1:2] != ["run"]:
        return None
    at = 2
    while at < len(words):
        word = words[at]
        if word == "-m":
            return words[at + 1 :] or None
        if not word.startswith("-"):
            return None
        at += 2 if word in _COVERAGE_VALUE_OPTIONS else 1
    return None


def is_python(name: str) -> bool:
    """`python`, `python3` or `python3.12`: an interpreter the project's own may stand in for."""
    return re.fullmatch(r"python(3(\.\d+)?)?", name) is not None


def _basename(word: str) -> str:
    return word.rsplit("/", 1)[-1]


#: Script or target names and the kind they answer.
SCRIPT_KINDS = dict(_SCRIPT_KINDS)


#: pytest-cov's options: coverage is not what a verification asks, and a project's stated
#: command that names them fails outright where pytest-cov is not installed.
_PYTEST_COV_FLAGS = frozenset({"--cov-append", "--cov-branch", "--cov-reset", "--no-cov"})
_PYTEST_COV_VALUED = frozenset(
    {"--cov-report", "--cov-config", "--cov-fail-under", "--cov-context"}
)
COVERAGE_NOTE = "pytest-cov's options left out: coverage is not the question, and needs pytest-cov"


def without_coverage(args: tuple[str, ...]) -> tuple[str, ...]:
    """pytest's arguments without pytest-cov's options (`--cov=pkg`, `--cov-report term`)."""
    kept: list[str] = []
    skip = False
    for at, word in enumerate(args):
        if skip:
            skip = False
            continue
        name = word.partition("=")[0]
        if name in _PYTEST_COV_FLAGS or name == "--no-cov-on-fail":
            continue
        if name in _PYTEST_COV_VALUED or name == "--cov":
            # `--cov src` takes `src` (its value is optional); the others always take one.
            nxt = args[at + 1] if at + 1 < len(args) else "-"
            skip = "=" not in word and not nxt.startswith("-")
            continue
        kept.append(word)
    return tuple(kept)


#: Python environment managers whose `run` makes (and syncs) an environment of its own:
#: offline, in the sandbox, they fail where the tool they run would not.
ENVIRONMENT_MANAGERS = frozenset({"uv", "poetry", "pdm", "hatch", "pipenv", "rye"})


def managed_run(argv: tuple[str, ...]) -> bool:
    """Whether `argv` runs its command through an environment manager (`hatch run flake8`)."""
    return len(argv) > 1 and _basename(argv[0]) in ENVIRONMENT_MANAGERS and argv[1] == "run"


def project_argv(hit: Recognised, env: ProjectEnv) -> tuple[str, ...]:
    """The command re-targeted at the project's own tools: its interpreter, its node_modules."""
    spec = tool_spec(hit.tool)
    launch = spec.launch if spec is not None else Launch.AS_WRITTEN
    if launch is Launch.PYTHON_MODULE:
        args = without_coverage(hit.args) if hit.tool == "pytest" else hit.args
        return env.python_module(hit.tool, *args)
    if launch is Launch.PYTHON_TOOL:
        return env.python_tool(_tool_word(hit), *hit.args)
    if launch is Launch.NODE_BIN and hit.argv:
        return (env.node_tool(_tool_word(hit)), *hit.args)
    argv = hit.argv
    if (
        hit.tool == SHELL
        and hit.ecosystem is Ecosystem.PYTHON
        and argv
        and is_python(_basename(argv[0]))
    ):
        return (env.python, *argv[1:])  # `_tests_module`: the project's interpreter runs it
    if hit.ecosystem is Ecosystem.PYTHON and managed_run(argv):
        # sqlparse's CI `hatch run flake8`: hatch, offline, cannot make its environment.
        argv = tuple(core_command(argv)) or argv
    if hit.ecosystem is Ecosystem.PYTHON and argv and argv[0] in env.tool_paths:
        # flake8, pylint, `black --check`: the project's installed copy, as for its own tools.
        return (env.tool_paths[argv[0]], *argv[1:])
    return argv


def candidate_from(
    hit: Recognised,
    env: ProjectEnv,
    origin: Origin,
    source: Source,
    reason: str,
    *,
    cwd: str = ".",
    extra_env: Mapping[str, str] | None = None,
) -> Candidate:
    """A recognised command as a candidate, re-targeted at the project's own tools.

    The command's own `NAME=value` assignments override `extra_env` (CI or tox settings)."""
    argv = project_argv(hit, env)
    argv = (from_cwd(argv[0], env, cwd), *argv[1:]) if argv else argv
    notes = (
        (COVERAGE_NOTE,) if hit.tool == "pytest" and without_coverage(hit.args) != hit.args else ()
    )
    return Candidate(
        kind=hit.kind,
        argv=argv,
        notes=notes,
        tool=hit.tool,
        ecosystem=hit.ecosystem,
        origin=origin,
        source=source,
        reason=reason,
        cwd=cwd,
        env={**(extra_env or {}), **dict(hit.env)},
        name=hit.name if hit.name and hit.name != hit.tool else None,
        stated=(stated_words(hit),),
        patterns=frozenset(hit.patterns),
    )


def from_cwd(word: str, env: ProjectEnv, cwd: str) -> str:
    """`word`, when it is the project's interpreter or one of its Python tools (paths from
    the root: `.venv/bin/python`), as a command run in `cwd` names it
    (`../.venv/bin/python` from `src`); any other word as it is."""
    ours = word == env.python or word in env.tool_paths.values()
    if not ours or posixpath.normpath(cwd) == "." or "/" not in word or posixpath.isabs(word):
        return word
    return posixpath.relpath(word, cwd)


def stated_words(hit: Recognised) -> tuple[str, ...]:
    """The command as the project wrote it, its `NAME=value` assignments first."""
    return (*(f"{name}={value}" for name, value in hit.env), *hit.argv)


def _tool_word(hit: Recognised) -> str:
    """The tool's own word in the command (`vue-tsc`, `basedpyright`), after any runner prefix."""
    words = command_words(hit.tool)
    for word in hit.argv:
        base = _basename(word)
        if base in words:
            return base
    return hit.tool

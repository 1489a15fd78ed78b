"""Canaries for Python's test runners: pytest and unittest.

pytest: a module of assay's, in a directory of its own that no collection walks into,
loaded as a plugin (`-p`) that appends its two tests to whatever the run collected, after
every other plugin has selected and ordered (so `-k`, `-m`, `testpaths` and friends need
not be understood here), and that therefore run last. Fail-fast flags are dropped: the
must-fail canary must not stop the run, and the real tests must all run.

unittest: a test package of assay's where discovery starts (its module named so that
pytest's default patterns do not take it), or named on the command line when the run names
its tests; the run lists each test (`-v`), which is where the canaries are found.

Both directories carry a `.gitignore`, and the modules comments, that keep the linters and
type checkers running beside the tests off them. No name, path or failure message says what
they are: code under test that spares whatever looks planted must tell them apart some
other way, and a guard beside them ends the run when what the runner reports through was
replaced (`_PYTEST_PLUGIN`, `_UNITTEST_GUARD`).
"""

from __future__ import annotations

import fnmatch
import re
import string
from collections.abc import Sequence

from assay.canaries import (
    Canary,
    CanaryFile,
    Checks,
    NoCanary,
    Planting,
    PlantRequest,
    camel,
    failed_unless,
    ignored_by_git,
    inside,
    unequal,
    within,
)
from assay.parsed_output import ParsedOutput
from assay.process import ProcessResult

#: Comments that keep linters and type checkers running beside the tests off the file.
_QUIET = (
    "# type: ignore\n"
    # mypy reports a whole-file ignore with nothing to ignore as unused; not then.
    "# mypy: ignore-errors\n"
    "# ruff: noqa\n"
    "# flake8: noqa\n"
    "# pylint: skip-file\n"
)

#: pytest flags that stop a run at a failure (the must-fail canary would stop it).
PYTEST_FAIL_FAST = frozenset({"-x", "--exitfirst", "--sw", "--stepwise", "--sw-skip"})
#: pytest flags that take the next argument as their value, among those dropped.
_PYTEST_VALUED = frozenset({"--maxfail"})


def _pair(request: PlantRequest) -> tuple[Canary, Canary]:
    """A must-pass and a must-fail test, named as a project's tests are (`test_...`)."""
    pair = (
        Canary(f"test_{request.name()}", must_pass=True),
        Canary(f"test_{request.name()}", must_pass=False),
    )
    if pair[0].name == pair[1].name:
        raise ValueError("two random names came out the same")
    return pair


# --------------------------------------------------------------------------- pytest

#: The plugin module: the two tests, where they go among the run's, and the guard.
#:
#: Nothing in it says what it is. Its tests' names read like the project's, the must-fail
#: one fails as an ordinary assertion does, and they run at a module boundary drawn from
#: the run's seed (the same in every xdist worker, which must collect alike), not last.
#:
#: The guard: what pytest reports through (the report class, the runner's protocol, the
#: JUnit writer, the terminal's counts, pluggy's call loop, the hook implementations
#: registered when the session started) is taken when the plugin loads, before any of the
#: project's code, and compared whenever a canary runs and when the session finishes. If
#: any of it was replaced by code that is not installed (the workspace's own, or made on
#: the spot; an installed plugin's is), or an object of such code has hooked the report
#: hooks since (a `pluginmanager.register` from code under test; a conftest.py and the
#: modules it names may), the guard writes which to the stderr it kept and ends the
#: process (`GUARD_EXIT`) before a report can be written.
_PYTEST_PLUGIN = string.Template(
    """\
# ruff: noqa
# flake8: noqa
# mypy: ignore-errors
# type: ignore
# pylint: skip-file
import importlib as _importlib
import os as _os
import pathlib as _pathlib
import random as _random
import sysconfig as _sysconfig

import pytest

_exit, _write, _err = _os._exit, _os.write, _os.dup(2)
_WATCH = (
    ("_pytest.reports", "TestReport", "from_item_and_call"),
    ("_pytest.reports", "TestReport", "__init__"),
    ("_pytest.reports", "BaseReport", "passed"),
    ("_pytest.reports", "BaseReport", "failed"),
    ("_pytest.reports", "BaseReport", "skipped"),
    ("_pytest.reports", "", "TestReport"),
    ("_pytest.runner", "", "call_and_report"),
    ("_pytest.runner", "", "runtestprotocol"),
    ("_pytest.runner", "", "call_runtest_hook"),
    ("_pytest.runner", "", "pytest_runtest_makereport"),
    ("_pytest.runner", "CallInfo", "from_call"),
    ("_pytest.main", "Session", "pytest_runtest_logreport"),
    ("_pytest.main", "", "pytest_runtestloop"),
    ("_pytest.junitxml", "LogXML", "pytest_runtest_logreport"),
    ("_pytest.junitxml", "LogXML", "pytest_sessionfinish"),
    ("_pytest.junitxml", "_NodeReporter", "append_failure"),
    ("_pytest.junitxml", "_NodeReporter", "to_xml"),
    ("_pytest.terminal", "TerminalReporter", "pytest_runtest_logreport"),
    ("_pytest.terminal", "", "build_summary_stats_line"),
    ("_pytest.python", "Function", "runtest"),
    ("_pytest.python", "", "pytest_pyfunc_call"),
    ("pluggy._callers", "", "_multicall"),
)
_HOOKS = (
    "pytest_runtest_protocol",
    "pytest_runtest_makereport",
    "pytest_runtest_logreport",
    "pytest_report_teststatus",
    "pytest_runtest_call",
    "pytest_pyfunc_call",
    "pytest_sessionfinish",
)
_REPORTING = _HOOKS[:4]
_INSTALLED = tuple({_sysconfig.get_paths()[k] for k in ("purelib", "platlib", "stdlib", "platstdlib")})


def _owner(module, name):
    try:
        found = _importlib.import_module(module)
    except ImportError:
        return None
    return getattr(found, name, None) if name else found


def _taken():
    return [(w, vars(o).get(w[2])) for w in _WATCH if (o := _owner(w[0], w[1])) is not None]


_ORIGINAL = _taken()
_IMPLS = []
_HOOK = []


def _code_file(found):
    found = getattr(found, "fget", None) or getattr(found, "__func__", None) or found
    return getattr(getattr(found, "__code__", None), "co_filename", "")


def _installed(found):
    where = _code_file(found)
    return where.startswith(_INSTALLED) and _os.path.isfile(where)


def _added(hook):
    # An implementation registered since the session started by an object (not a module:
    # a conftest.py, a plugin one names) of code that is not installed.
    started = {id(impl) for name, impl, _ in _IMPLS if name == hook}
    for impl in getattr(_HOOK[0], hook).get_hookimpls() if _HOOK else ():
        where = _code_file(impl.function)
        if id(impl) in started or isinstance(impl.plugin, type(_os)) or _installed(impl.function):
            continue
        if _os.path.basename(where) != "conftest.py":
            yield f"{hook} of {impl.plugin_name} (added by {where})"


def _guard(when):
    changed = [
        ".".join(p for p in w if p)
        for w, was in _ORIGINAL
        if (now := vars(_owner(w[0], w[1])).get(w[2])) is not was and not _installed(now)
    ]
    changed += [
        f"{hook} of {impl.plugin_name}"
        for hook, impl, was in _IMPLS
        if impl.function is not was and not _installed(impl.function)
    ]
    changed += [found for hook in _REPORTING for found in _added(hook)]
    if changed:
        _write(_err, f"\\n{$mark} ({when}): {', '.join(changed)}\\n".encode())
        _exit($code)

$tests

@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session):
    _HOOK.append(session.config.hook)
    for hook in _HOOKS:
        caller = getattr(session.config.hook, hook, None)
        for impl in caller.get_hookimpls() if caller is not None else ():
            _IMPLS.append((hook, impl, impl.function))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    # After every other plugin has selected and ordered the run's tests.
    here = _pathlib.Path(__file__)
    if any(getattr(item, "path", None) == here for item in items):
        return
    ours = pytest.Module.from_parent(session, path=here).collect()
    # Between two files, where no module's fixtures are torn down early.
    File = getattr(pytest, "File", None) or _importlib.import_module("_pytest.nodes").File
    files = [item.getparent(File) for item in items]
    bounds = [0, *(at for at in range(1, len(items)) if files[at] is not files[at - 1]), len(items)]
    chosen = _random.Random("$seed")
    for item in reversed(ours):
        items.insert(chosen.choice(bounds), item)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    _guard("at the end of the session")
"""
)

#: The exit code of a guard that found the runner's reporting replaced; what it writes
#: then starts with a random mark of the run's, which its file does not spell out.
GUARD_EXIT = 86


def _spelt_apart(mark: str) -> str:
    """`mark` as a Python expression in two halves: the file holds no line the guard's
    report starts with."""
    return f"'{mark[:8]}' '{mark[8:]}'"


def plant_pytest(request: PlantRequest) -> Planting | NoCanary:
    directory = request.cwd / f".{request.name()}"
    module = request.name()
    canaries = _pair(request)
    left, right = unequal()
    tests = "".join(
        f"\n\ndef {c.name}(guard=_guard):\n"  # a default: not a fixture, and not looked up
        f'    guard("while {c.name} ran")\n'
        + ("    pass\n" if c.must_pass else f"    assert {left} == {right}\n")
        for c in canaries
    )
    mark = request.token()
    text = _PYTEST_PLUGIN.substitute(
        tests=tests,
        seed=request.token(),
        mark=_spelt_apart(mark),
        code=GUARD_EXIT,
    )
    path = request.relative(directory / f"{module}.py")

    def edit(argv: tuple[str, ...]) -> tuple[str, ...]:
        # --maxfail=0 also undoes a -x the project's configuration adds.
        return _before_report(_without_fail_fast(argv), ("--maxfail=0", "-p", module))

    return Planting(
        files=(CanaryFile(path, text), ignored_by_git(request.relative(directory))),
        canaries=canaries,
        edit_argv=edit,
        # The plugin is imported by name, from where no collection looks.
        env={"PYTHONPATH": str(directory)},
        failed_groups=failed_unless(_COVERAGE_FAILED),
        checks=_guard_tripped("pytest", mark),
        what=f"a pytest plugin module {path} (loaded with -p {module})",
    )


def _guard_tripped(runner: str, mark: str) -> Checks:
    """The check that reads what the guard planted beside the tests found replaced (a
    sentence; nothing when it found none)."""

    def tripped(result: ProcessResult, parsed: ParsedOutput) -> list[str]:
        for line in result.stderr.text.splitlines():
            if line.startswith(mark):
                return [f"{runner}'s reporting was replaced {line[len(mark) :].strip()}"]
        if result.exit_code == GUARD_EXIT:
            why = (
                f"it ended with the exit code of the guard planted beside the tests ({GUARD_EXIT})"
            )
            return [f"{why}, which it gives when it finds {runner}'s reporting replaced"]
        return []

    return tripped


#: What pytest-cov prints when the run's coverage is under its threshold (it then fails
#: the run with the exit code of failed tests, which the must-fail canary also gives).
_COVERAGE_FAILED = re.compile(r"Required test coverage of [\d.]+% not reached")


def _without_fail_fast(argv: tuple[str, ...]) -> tuple[str, ...]:
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in PYTEST_FAIL_FAST or arg.startswith("--maxfail="):
            continue
        elif arg in _PYTEST_VALUED:
            skip = True
        else:
            kept.append(arg)
    return tuple(kept)


def _before_report(argv: tuple[str, ...], extra: Sequence[str]) -> tuple[str, ...]:
    """`extra` before the report path assay asks for (it stays the last word) and before
    a `--`; else at the end."""
    reports = [at for at, arg in enumerate(argv) if arg.startswith("--junitxml")]
    if reports:
        at = reports[-1]
    elif "--" in argv:
        at = argv.index("--")
    else:
        at = len(argv)
    return (*argv[:at], *extra, *argv[at:])


# --------------------------------------------------------------------------- unittest

#: unittest's default discovery pattern.
UNITTEST_PATTERN = "test*.py"
#: Options of `python -m unittest` (and of `discover`) that take a value.
_UNITTEST_VALUED = frozenset(
    {"-k", "-s", "--start-directory", "-p", "--pattern", "-t", "--top-level-directory"}
)
_UNITTEST_FAIL_FAST = frozenset({"-f", "--failfast"})

#: The unittest canaries' guard: the methods unittest reports through, each of which must
#: still be unittest's own code, and the result object the canary runs under, which must
#: be one of unittest's. Code under test that replaced any of them is named on the stderr
#: the guard kept before the process ends (`GUARD_EXIT`), before a summary is printed.
_UNITTEST_GUARD = string.Template(
    """\
import os as _os
import unittest
import unittest.result
import unittest.runner

_exit, _write, _err = _os._exit, _os.write, _os.dup(2)
_HOME = _os.path.dirname(unittest.__file__) + _os.sep
_REPORTING = ("addSuccess", "addFailure", "addError", "addSkip", "addExpectedFailure",
              "addUnexpectedSuccess", "addSubTest", "wasSuccessful", "startTest", "stopTest",
              "printErrors", "run", "runTests", "__call__", "_makeResult")
_OWNERS = (unittest.result.TestResult, unittest.runner.TextTestResult,
           unittest.runner.TextTestRunner, unittest.case.TestCase, unittest.TestProgram)


def _guard(test, when):
    changed = [
        f"{owner.__module__}.{owner.__qualname__}.{name}"
        for owner in _OWNERS
        for name in _REPORTING
        if (found := vars(owner).get(name)) is not None
        and not getattr(getattr(found, "__code__", None), "co_filename", "").startswith(_HOME)
    ]
    result = getattr(getattr(test, "_outcome", None), "result", None)
    if result is not None and not type(result).__module__.startswith("unittest."):
        changed.append(f"the result ({type(result).__module__}.{type(result).__qualname__})")
    if changed:
        _write(_err, f"\\n{$mark} ({when}): {', '.join(changed)}\\n".encode())
        _exit($code)
"""
)


def plant_unittest(request: PlantRequest) -> Planting | NoCanary:
    argv = request.check.argv
    if "unittest" not in argv:
        return NoCanary("the command does not run `python -m unittest`")
    args = list(argv[argv.index("unittest") + 1 :])
    if "-k" in args or any(a.startswith("-k") and len(a) > 2 for a in args):
        return NoCanary("the run selects tests by name (-k): a canary would not be selected")
    discover = bool(args) and args[0] == "discover"
    options, positional = _unittest_options(args[1:] if discover else args)
    stem = request.name()
    if discover or not positional:
        start = options.get("start") or (positional[0] if discover and positional else ".")
        pattern = options.get("pattern") or (
            positional[1] if discover and len(positional) > 1 else UNITTEST_PATTERN
        )
        name = _module_name(stem, pattern)
        if name is None:
            return NoCanary(f"no module name matches the discovery pattern {pattern!r}")
        directory = inside(request.cwd, start)
        if not directory.is_dir():
            return NoCanary(f"the tests' directory {start} does not exist")
        named: tuple[str, ...] = ()
    else:
        # The run names its tests: the canary module is named with them, from the cwd.
        name = f"test{stem}"
        directory, named = request.cwd, (f"{stem}.{name}",)
    if not within(request.root, directory):
        return NoCanary(f"the tests' directory {directory} is outside the workspace")
    canaries = _pair(request)
    left, right = unequal()
    methods = "".join(
        f"\n    def {c.name}(self, guard=_guard):\n"
        f'        guard(self, "while {c.name} ran")\n'
        + ("        pass\n" if c.must_pass else f"        self.assertEqual({left}, {right})\n")
        for c in canaries
    )
    mark = request.token()
    guard = _UNITTEST_GUARD.substitute(mark=_spelt_apart(mark), code=GUARD_EXIT)
    text = f"{_QUIET}{guard}\n\nclass {camel(request.name())}(unittest.TestCase):{methods}"
    # A package of its own (discovery enters packages): its .gitignore then hides it all.
    package = request.relative(directory / stem)
    path = f"{package}/{name}.py"

    def edit(argv: tuple[str, ...]) -> tuple[str, ...]:
        kept = tuple(a for a in argv if a not in _UNITTEST_FAIL_FAST)
        listed = (*kept, *named)
        # A line per test is where the canaries are found; the last verbosity flag wins.
        return listed if listed[-1] in ("-v", "--verbose") else (*listed, "-v")

    return Planting(
        files=(
            CanaryFile(f"{package}/__init__.py", _QUIET),
            CanaryFile(path, text),
            ignored_by_git(package),
        ),
        canaries=canaries,
        edit_argv=edit,
        checks=_guard_tripped("unittest", mark),
        what=f"a unittest module {path}",
    )


def _unittest_options(args: list[str]) -> tuple[dict[str, str], list[str]]:
    """The start directory and pattern options, and the positional arguments."""
    keys = {
        "-s": "start",
        "--start-directory": "start",
        "-p": "pattern",
        "--pattern": "pattern",
    }
    options: dict[str, str] = {}
    positional: list[str] = []
    at = 0
    while at < len(args):
        arg = args[at]
        flag, eq, value = arg.partition("=")
        if arg in _UNITTEST_VALUED and at + 1 < len(args):
            if arg in keys:
                options[keys[arg]] = args[at + 1]
            at += 2
            continue
        if eq and flag in keys:
            options[keys[flag]] = value
        elif not arg.startswith("-"):
            positional.append(arg)
        at += 1
    return options, positional


def _module_name(stem: str, pattern: str) -> str | None:
    """A module name for the canary that discovery with `pattern` picks up; never one
    pytest's default patterns (`test_*.py`, `*_test.py`) take, should pytest run beside."""
    for name in (
        f"test{stem}",
        f"{stem}test",
        f"{stem}_test",
        stem,
    ):
        if fnmatch.fnmatch(f"{name}.py", pattern):
            return name
    return None

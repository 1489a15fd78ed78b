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
type checkers running beside the tests off them.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence

from assay.canaries import (
    MUST_FAIL_MESSAGE,
    Canary,
    CanaryFile,
    NoCanary,
    Planting,
    PlantRequest,
    failed_unless,
    ignored_by_git,
    inside,
    within,
)

#: Comments that keep linters and type checkers running beside the tests off the file.
_QUIET = (
    "# type: ignore\n"
    # mypy reports a whole-file ignore with nothing to ignore as unused; not then.
    "# mypy: ignore-errors\n"
    "# ruff: noqa\n"
    "# flake8: noqa\n"
    "# pylint: skip-file\n"
    "# Canary tests of one verification run, written by assay and removed after it: one of\n"
    "# them must fail and one must pass, or the run's report was rewritten.\n"
)

#: pytest flags that stop a run at a failure (the must-fail canary would stop it).
PYTEST_FAIL_FAST = frozenset({"-x", "--exitfirst", "--sw", "--stepwise", "--sw-skip"})
#: pytest flags that take the next argument as their value, among those dropped.
_PYTEST_VALUED = frozenset({"--maxfail"})


def _pair(request: PlantRequest, prefix: str) -> tuple[Canary, Canary]:
    return (
        Canary(f"{prefix}{request.token()}", must_pass=True),
        Canary(f"{prefix}{request.token()}", must_pass=False),
    )


def _body(canary: Canary, indent: str = "") -> str:
    if canary.must_pass:
        return f"{indent}    pass\n"
    return f'{indent}    raise AssertionError("{MUST_FAIL_MESSAGE}")\n'


# --------------------------------------------------------------------------- pytest


def plant_pytest(request: PlantRequest) -> Planting | NoCanary:
    token = request.token()
    directory = request.cwd / f".assay-canary-{token}"
    module = f"assay_canary_{token}"
    canaries = _pair(request, "test_assay_canary_")
    # The must-pass test first: a fail-fast flag in the project's configuration then stops
    # the run only after both have run (and after every test of the project's).
    tests = "".join(f"\n\ndef {c.name}():\n{_body(c)}" for c in canaries)
    text = (
        f"{_QUIET}import pathlib\n\nimport pytest\n{tests}\n\n"
        "@pytest.hookimpl(trylast=True)\n"
        "def pytest_collection_modifyitems(session, config, items):\n"
        "    # Appended after every other plugin has selected and ordered the run's tests.\n"
        "    here = pathlib.Path(__file__)\n"
        '    if any(getattr(item, "path", None) == here for item in items):\n'
        "        return\n"
        "    items.extend(pytest.Module.from_parent(session, path=here).collect())\n"
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
        what=f"a pytest plugin module {path} (loaded with -p {module})",
    )


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


def plant_unittest(request: PlantRequest) -> Planting | NoCanary:
    argv = request.check.argv
    if "unittest" not in argv:
        return NoCanary("the command does not run `python -m unittest`")
    args = list(argv[argv.index("unittest") + 1 :])
    if "-k" in args or any(a.startswith("-k") and len(a) > 2 for a in args):
        return NoCanary("the run selects tests by name (-k): a canary would not be selected")
    discover = bool(args) and args[0] == "discover"
    options, positional = _unittest_options(args[1:] if discover else args)
    token = request.token()
    if discover or not positional:
        start = options.get("start") or (positional[0] if discover and positional else ".")
        pattern = options.get("pattern") or (
            positional[1] if discover and len(positional) > 1 else UNITTEST_PATTERN
        )
        name = _module_name(token, pattern)
        if name is None:
            return NoCanary(f"no module name matches the discovery pattern {pattern!r}")
        directory = inside(request.cwd, start)
        if not directory.is_dir():
            return NoCanary(f"the tests' directory {start} does not exist")
        named: tuple[str, ...] = ()
    else:
        # The run names its tests: the canary module is named with them, from the cwd.
        name = f"testassaycanary{token}"
        directory, named = request.cwd, (f"assaycanary{token}.{name}",)
    if not within(request.root, directory):
        return NoCanary(f"the tests' directory {directory} is outside the workspace")
    canaries = _pair(request, "test_assay_canary_")
    methods = "".join(f"\n    def {c.name}(self):\n{_body(c, '    ')}" for c in canaries)
    text = f"{_QUIET}import unittest\n\n\nclass AssayCanary{token}(unittest.TestCase):{methods}"
    # A package of its own (discovery enters packages): its .gitignore then hides it all.
    package = request.relative(directory / f"assaycanary{token}")
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


def _module_name(token: str, pattern: str) -> str | None:
    """A module name for the canary that discovery with `pattern` picks up; never one
    pytest's default patterns (`test_*.py`, `*_test.py`) take, should pytest run beside."""
    for name in (
        f"testassaycanary{token}",
        f"assaycanary{token}test",
        f"assaycanary{token}_test",
        f"assay_canary_{token}",
    ):
        if fnmatch.fnmatch(f"{name}.py", pattern):
            return name
    return None

"""Python's tools: the interpreter, compileall, unittest, pytest, mypy, pyright, ruff."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from assay.evidence import Check
from assay.option_values import option_values
from assay.tools.env_names import runs_no_tests
from assay.tools.instrumented import Instrumented, Request
from assay.tools.spec import (
    Command,
    Ecosystem,
    EcosystemSpec,
    Launch,
    Launcher,
    Match,
    TamperMarkers,
    ToolSpec,
    install_step,
    version_at_least,
)
from assay.verdict import Kind

#: pytest versions whose `--verbosity=N` sets the verbosity outright (older ones are run as planned).
PYTEST_VERBOSITY_SINCE = (6, 0)
#: ruff's `--output-format`, `--format` before it.
RUFF_OUTPUT_FORMAT_SINCE = (0, 0, 291)
#: Linter flags a verification drops: they edit the code, or hide what the linter found.
LINT_FLAGS_DROPPED = frozenset({"--fix", "--fix-only", "--unsafe-fixes", "--exit-zero"})

_LOCAL = (".venv/bin", "venv/bin")
IN_TREE_VENVS = (".venv", "venv")


# --------------------------------------------------------------------------- launching

#: `python -m MODULE` started so that no file of the working tree can stand in for MODULE.
#: With `-m` the working directory comes first on the import path, so a `pytest.py` at the
#: root would answer `python -m pytest` (and its `--version`). Here the module's top-level
#: package is found and imported without the directory, which pins where the runner comes
#: from (its `__main__` is then found inside that package; a plain module is taken from
#: `sys.modules`); only then is the directory put first, as `-m` puts it, so the tree's
#: own modules win over any other path entry (unittest's discovery insists that a flat
#: layout's `tests` come from the directory it discovered them in, not from an editable
#: install's path entry). `sys.path` is cut before anything is imported (`runpy` itself
#: could be shadowed). Any Python 3 runs it; `-P` (3.11+) would drop the directory
#: altogether.
_UNSHADOWED_IMPORT = (
    "import sys;c=sys.path[:1]==[''] and sys.path.pop(0)=='';"
    "import os,runpy,importlib.util as u;m=sys.argv.pop(1);"
    "u.find_spec(m) or sys.exit('No module named '+m);__import__(m.partition('.')[0]);"
    "c and sys.path.insert(0,os.getcwd())"
)
UNSHADOWED_MODULE_BOOTSTRAP = _UNSHADOWED_IMPORT + ";runpy._run_module_as_main(m)"
#: A process forked from the runner (a `multiprocessing` pool's worker) drops the dump the
#: runner registered, unless a handler of the project's own replaced it: else a worker a
#: test ends with SIGTERM dumps its stack, frozen at the fork inside that test, where the
#: deadline's dump is looked for (toolz's `test_fold` made a loop in `frequencies` read
#: as stuck in `test_fold`). Python-level: faulthandler stands as SIG_DFL to `getsignal`.
_NO_DUMP_IN_FORKS = (
    "hasattr(os,'register_at_fork') and os.register_at_fork(after_in_child=lambda:"
    "signal.getsignal(signal.SIGTERM)==signal.SIG_DFL and f.unregister(signal.SIGTERM))"
)
#: unittest, started so, with faulthandler dumping every thread's stack to stderr as the
#: deadline's SIGTERM reaches it (then ending it as the signal would have): the line the
#: test that hung was stuck on (`assay.parsers.python_stacks`).
UNSHADOWED_UNITTEST_BOOTSTRAP = (
    _UNSHADOWED_IMPORT + ";import faulthandler as f,signal;hasattr(f,'register') and"
    " (f.register(signal.SIGTERM,all_threads=True,chain=True),"
    + _NO_DUMP_IN_FORKS
    + ");runpy._run_module_as_main(m)"
)
#: Beside a pytest report: each test's id as it started (`UNSHADOWED_PYTEST_BOOTSTRAP`).
STARTED_SUFFIX = ".started"
#: In that record, before a collector's id: pytest began collecting it (importing a test
#: module), and when it was done. No node id holds a NUL, so neither can be a test's; in
#: the bootstrap they are written as escapes (an argument cannot hold a NUL).
COLLECTING = "\x00c "
COLLECTED = "\x00r "
#: Beside a pytest report: each top-level module the session imported, and its file.
IMPORTED_SUFFIX = ".imported"
#: Beside a pytest report: the stacks of the session's threads as the deadline's SIGTERM
#: reached it (faulthandler's dump; the signal then ends pytest as it would have).
STACKS_SUFFIX = ".stacks"
#: pytest, started as above, with a plugin object of assay's that appends each test's id
#: as it starts to `<junitxml>.started` (`STARTED_SUFFIX`): a run stopped at assay's
#: deadline writes no report, and this names the test that hung (or, before any test
#: started, the module whose collection hung: `COLLECTING`); and, as the session
#: ends, writes where each top-level module it imported came from to `<junitxml>.imported`
#: (`IMPORTED_SUFFIX`): tests that imported an installed copy of the project's package
#: did not test the tree (`assay.own_package.installed_copies`); and has faulthandler dump
#: every thread's stack to `<junitxml>.stacks` on SIGTERM (`STACKS_SUFFIX`), the line a
#: test stopped at the deadline was stuck on. An object, not a module:
#: nothing is added to the project's import path. A record that cannot be written is none.
UNSHADOWED_PYTEST_BOOTSTRAP = _UNSHADOWED_IMPORT + (
    "\nclass _Started:\n"
    "    out = xml = stacks = None\n"
    "    def pytest_configure(self, config):\n"
    "        self.xml = xml = getattr(config.option, 'xmlpath', None)\n"
    f"        try: self.out = xml and open(xml + '{STARTED_SUFFIX}', 'a', buffering=1)\n"
    "        except OSError: pass\n"
    "        try:\n"
    "            import faulthandler, signal\n"
    f"            self.stacks = xml and open(xml + '{STACKS_SUFFIX}', 'w')\n"
    "            self.stacks and faulthandler.register(\n"
    "                signal.SIGTERM, file=self.stacks, all_threads=True, chain=True)\n"
    f"            f = faulthandler; self.stacks and {_NO_DUMP_IN_FORKS}\n"
    "        except Exception: pass\n"
    "    def pytest_runtest_logstart(self, nodeid, location):\n"
    "        try: self.out and self.out.write(nodeid + '\\n')\n"
    "        except (OSError, ValueError): pass\n"
    "    def pytest_collectstart(self, collector):\n"
    f"        try: self.out and self.out.write({COLLECTING!r} + collector.nodeid + '\\n')\n"
    "        except (OSError, ValueError): pass\n"
    "    def pytest_collectreport(self, report):\n"
    f"        try: self.out and self.out.write({COLLECTED!r} + report.nodeid + '\\n')\n"
    "        except (OSError, ValueError): pass\n"
    "    def pytest_sessionfinish(self, session):\n"
    "        try:\n"
    "            files = [(n, vars(m).get('__file__')) for n, m in list(sys.modules.items())]\n"
    f"            with open(self.xml + '{IMPORTED_SUFFIX}', 'w') as out:\n"
    "                out.writelines(n + '\\t' + f + '\\n' for n, f in files\n"
    "                               if '.' not in n and isinstance(f, str))\n"
    "        except Exception: pass\n"
    "import pytest\n"
    "sys.argv[0] = 'pytest'\n"
    "sys.exit(pytest.main(plugins=[_Started()]))\n"
)
_INTERPRETER_NAME = re.compile(r"(python|pypy)(3(\.\d+)?)?")


def unshadowed(argv: Sequence[str]) -> tuple[str, ...]:
    """`python -m RUNNER ARGS...` as `python -c BOOTSTRAP RUNNER ARGS...` (see
    `UNSHADOWED_MODULE_BOOTSTRAP`) for the runners declared here (pytest, unittest, mypy,
    ruff, compileall ...); any other command as it is: a module the project names is the
    project's own, and is found where `-m` finds it."""
    if (
        len(argv) >= 3
        and argv[1] == "-m"
        and argv[2] in _runner_modules()
        and _INTERPRETER_NAME.fullmatch(Path(argv[0]).name)
    ):
        bootstrap = _BOOTSTRAPS.get(argv[2], UNSHADOWED_MODULE_BOOTSTRAP)
        return (argv[0], "-c", bootstrap, *argv[2:])
    return tuple(argv)


_BOOTSTRAPS = {"pytest": UNSHADOWED_PYTEST_BOOTSTRAP, "unittest": UNSHADOWED_UNITTEST_BOOTSTRAP}


def _runner_modules() -> frozenset[str]:
    return frozenset(m for tool in ECOSYSTEM.tools for m in (tool.name, tool.module) if m)


# --------------------------------------------------------------------------- tuning


def drop_lint_fixes(argv: list[str], fail_fast: bool) -> list[str]:
    """A verifier must not rewrite the code it is judging, nor ask the linter to exit 0
    whatever it finds (`--exit-zero` would make every lint check pass)."""
    return [a for a in argv if a not in LINT_FLAGS_DROPPED]


def _tune_pytest(argv: list[str], fail_fast: bool) -> list[str]:
    argv = list(argv)
    if not {"-q", "--quiet", "-v", "--verbose", "-qq"} & set(argv):
        argv.append("-q")
    if fail_fast and not any(a in ("-x", "--exitfirst") or a.startswith("--maxfail") for a in argv):
        argv.append("-x")
    return argv


# --------------------------------------------------------------------------- instrumenting


def _pytest(request: Request) -> Instrumented:
    report = request.report("xml")
    argv = request.argv
    if version_at_least(request.checker, PYTEST_VERBOSITY_SINCE):
        # The summary line is a channel the report is held against (`assay.channels`):
        # a configured `-q` on top of ours (-qq) would drop it; this sets, not adds.
        argv = (*argv, "--verbosity=-1")
    # Appended last so that it wins over a --junitxml the project configured.
    argv = (*argv, f"--junitxml={report}")
    return request.runs(argv, report)


def _unittest(request: Request) -> Instrumented:
    # A line per test (on stderr) besides the closing summary: the listing the summary is
    # held against, and the names the base's tests are matched by. Appended: `discover`
    # must stay first, and the last verbosity flag wins.
    argv = request.argv
    if not (argv and argv[-1] in ("-v", "--verbose")):
        argv = (*argv, "-v")
    return request.runs(argv)


def _ruff(request: Request) -> Instrumented:
    argv = request.argv
    if "format" in argv:
        return request.runs(argv)
    if not request.has("--output-format", "--format"):
        # ruff before 0.0.291 (a 2023 pre-commit pin) refuses `--output-format`: a usage
        # error, which would fail a clean project.
        known = not request.checker or version_at_least(request.checker, RUFF_OUTPUT_FORMAT_SINCE)
        argv = (*argv, "--output-format=json" if known else "--format=json")
    # Last, so that it wins over a stated `--fix`: with `fix = true` in its configuration
    # (itsdangerous, markupsafe) ruff fixes the workspace's copy and exits 0, and a
    # finding CI fails on would pass.
    return request.runs((*argv, "--no-fix"))


def _pyright(request: Request) -> Instrumented:
    argv = request.argv
    if "--outputjson" not in argv:
        argv = (*argv, "--outputjson")
    return request.runs(argv)


#: `python -m compileall ARGS`, with the tree's byte-code sent to a directory (its first
#: argument). The prefix is set only once compileall and what it imports are loaded: for the
#: whole interpreter (`PYTHONPYCACHEPREFIX`) it would ignore the standard library's own
#: byte-code and compile each module it imports from source, on every run. (The imports
#: listed are those compileall makes lazily: argparse's locale, py_compile's shutil.)
#: Only the standard library is imported: the working directory leaves the search path
#: first, and the interpreter starts without `site` or the environment's `PYTHON*`
#: variables (`_COMPILEALL_FLAGS`), so a `compileall.py` or `re.py` in the tree, a
#: `PYTHONPATH` into it, or a `.pth` file in its `.venv` cannot answer for the check.
_COMPILEALL_INTO = (
    "import sys; sys.path[:1] == [''] and sys.path.pop(0); "
    "import argparse, compileall, locale, py_compile, re, shutil; "
    "sys.pycache_prefix = sys.argv.pop(1); sys.argv[0] = 'compileall'; "
    "sys.exit(not compileall.main())"
)
_COMPILEALL_FLAGS = ("-E", "-S")


def _compileall(request: Request) -> Instrumented:
    # Byte-code goes next to the reports, not into the workspace's __pycache__ directories.
    prefix = str(request.report_dir / "pycache")
    argv = request.argv
    if argv[1:3] == ("-m", "compileall"):
        return Instrumented(
            (argv[0], *_COMPILEALL_FLAGS, "-c", _COMPILEALL_INTO, prefix, *argv[3:]),
            dict(request.check.env),
        )
    # Another spelling (a wrapper, options before -m): the prefix for the whole interpreter.
    return Instrumented(argv, {"PYTHONPYCACHEPREFIX": prefix, **request.check.env})


def _interpreter_command(request: Request) -> Instrumented:
    # `--install`'s `python3 -m venv .venv`, made with the interpreter's own pip: the same
    # environment in a fraction of the time (`assay.tools.python_venv`).
    from assay.tools.python_venv import venv_made_with_own_pip

    return request.runs(venv_made_with_own_pip(request.argv) or request.argv)


# --------------------------------------------------------------------------- recognising


def _ruff_lints(rest: list[str]) -> Match | None:
    # Not `ruff format` (it rewrites files), nor `ruff server`, `ruff rule` ... `--diff`
    # writes nothing either, and exits 1 when a file would change (cachetools' tox env).
    checks_format = rest[:1] == ["format"] and ("--check" in rest or "--diff" in rest)
    linting = not rest or rest[0] == "check" or checks_format
    return Match(Kind.LINT, tuple(rest)) if linting else None


def _ty_checks(rest: list[str]) -> Match | None:
    # `ty check`; not `ty server`, `ty version`, `ty explain`.
    return Match(Kind.TYPECHECK, tuple(rest)) if rest[:1] == ["check"] else None


def _black_checks(rest: list[str]) -> Match | None:
    return Match(Kind.LINT, tuple(rest)) if "--check" in rest else None


#: tox and nox options after which nothing of the tests runs: environments built only
#: (`--notest`, `--install-only`), listed, or the tool describing itself.
_TOX_NO_TESTS = frozenset(
    {
        "--notest",
        "--install-only",
        "-l",
        "--list",
        "--list-sessions",
        "-a",
        "--listenvs",
        "--listenvs-all",
        "--showconfig",
        "--version",
        "-h",
        "--help",
    }
)
#: tox 4's subcommands that run no environment's commands (list, depends, devenv, config,
#: quickstart, and their short names).
_TOX_NO_TEST_SUBCOMMANDS = frozenset(
    {"list", "l", "depends", "de", "devenv", "d", "config", "c", "quickstart", "q"}
)
_TOX_ENV_OPTIONS = ("-e", "--envlist", "-s", "--session", "--sessions")


def _tox_runs(rest: list[str]) -> Match | None:
    """`tox`/`nox` as a test check, unless the line runs no tests: an option that skips
    them, a subcommand that only describes, or environments named that are all known
    not to be the tests (`tox -e coverage` combines reports, `nox -s docs`)."""
    if any(word.partition("=")[0] in _TOX_NO_TESTS for word in rest):
        return None
    if rest[:1] and rest[0] in _TOX_NO_TEST_SUBCOMMANDS:
        return None
    names = _named_envs(rest)
    if names and all(runs_no_tests(name) for name in names):
        return None
    return Match(Kind.TEST, tuple(rest))


def _named_envs(rest: list[str]) -> list[str]:
    """The environments or sessions `-e a,b` / `--session=x` name (comma-separated)."""
    return [
        name for value in option_values(rest, _TOX_ENV_OPTIONS) for name in value.split(",") if name
    ]


# --------------------------------------------------------------------------- declarations


def _interpreter(name: str, **more: object) -> ToolSpec:
    """A logical tool that is the interpreter; its name selects the output parser."""
    return ToolSpec(
        name=name,
        ecosystem=Ecosystem.PYTHON,
        binaries=("python3", "python"),
        install_hint="install Python 3 (Debian: `apt-get install python3`)",
        local_dirs=_LOCAL,
        **more,  # type: ignore[arg-type]
    )


def _pip_env(deps: Path) -> Mapping[str, str]:
    # pip's check for a newer pip is a request to the index per run, and a notice in the
    # step's output.
    return {"PIP_CACHE_DIR": str(deps / "pip"), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


PYTHON = _interpreter(
    "python",
    instrument=_interpreter_command,
    parser=("python", "parse_compileall"),
    dependency_env=_pip_env,
)
COMPILEALL = _interpreter(  # `python -m compileall`
    "compileall",
    commands=(Command(("compileall",), Kind.BUILD),),
    instrument=_compileall,
    parser=("python", "parse_compileall"),
    check_only_build=True,
)
UNITTEST = _interpreter(  # `python -m unittest`
    "unittest",
    commands=(Command(("unittest",), Kind.TEST),),
    launch=Launch.PYTHON_MODULE,
    instrument=_unittest,
    parser=("python", "parse_unittest"),
    canary=("python", "plant_unittest"),
    # `discover`'s default pattern, and Django's test modules.
    config_files=("**/test*.py", "**/tests.py"),
)
MYPY = ToolSpec(
    name="mypy",
    ecosystem=Ecosystem.PYTHON,
    binaries=("mypy",),
    module="mypy",
    install_hint="install mypy (`pip install mypy`)",
    local_dirs=_LOCAL,
    commands=(Command(("mypy",), Kind.TYPECHECK),),
    launch=Launch.PYTHON_TOOL,
    # Read as text, as printed: `--output=json` makes mypy exit 1 when it prints only notes
    # (it counts notes by the text format), and a passing run would read as a failing one.
    parser=("python", "parse_mypy"),
    # What it checks and how strictly: a change that adds `ignore_errors` passes its own
    # type errors (setup.cfg's and pyproject.toml's sections are protected with the rest).
    config_files=("**/mypy.ini", "**/.mypy.ini"),
)
PYTEST = ToolSpec(
    name="pytest",
    ecosystem=Ecosystem.PYTHON,
    binaries=("pytest",),
    module="pytest",
    # pytest before 9 loads the project's initial conftests to say its version: one that
    # fails to import (the code under test is broken) would read as a missing pytest.
    version_args=("--version", "--noconftest"),
    install_hint="install pytest (`pip install pytest`)",
    local_dirs=_LOCAL,
    commands=(Command(("pytest", "py.test"), Kind.TEST),),
    launch=Launch.PYTHON_MODULE,
    tune=_tune_pytest,
    instrument=_pytest,
    parser=("pytest", "parse"),
    canary=("python", "plant_pytest"),
    # Every file pytest takes its configuration from (`pytest.toml` and `.pytest.ini` outrank
    # pyproject.toml), wherever a check's directory makes it look; and the coverage threshold.
    config_files=(
        "**/conftest.py",
        "**/pytest.toml",
        "**/.pytest.toml",
        "**/pytest.ini",
        "**/.pytest.ini",
        "**/tox.ini",
        "**/setup.cfg",
        "**/.coveragerc",
    ),
)
RUFF = ToolSpec(
    name="ruff",
    ecosystem=Ecosystem.PYTHON,
    binaries=("ruff",),
    module="ruff",
    install_hint="install ruff (`pip install ruff`)",
    local_dirs=_LOCAL,
    commands=(Command(("ruff",), match=_ruff_lints),),
    launch=Launch.PYTHON_TOOL,
    tune=drop_lint_fixes,
    instrument=_ruff,
    parser=("python", "parse_ruff"),
    config_files=("**/ruff.toml", "**/.ruff.toml"),
)
PYRIGHT = ToolSpec(
    name="pyright",
    ecosystem=Ecosystem.PYTHON,
    binaries=("pyright",),
    install_hint="install pyright (`npm i -g pyright` or `pip install pyright`)",
    # pyright is a node program: a project installs it into node_modules.
    local_dirs=("node_modules/.bin",),
    commands=(Command(("pyright", "basedpyright"), Kind.TYPECHECK),),
    launch=Launch.PYTHON_TOOL,
    instrument=_pyright,
    parser=("python", "parse_pyright"),
    config_files=("**/pyrightconfig.json",),
)

TY = ToolSpec(
    name="ty",
    ecosystem=Ecosystem.PYTHON,
    binaries=("ty",),
    module="ty",
    install_hint="install ty (`pip install ty`)",
    local_dirs=_LOCAL,
    commands=(Command(("ty",), match=_ty_checks),),
    launch=Launch.PYTHON_TOOL,
    parser=("python", "parse_ty"),
)


# --------------------------------------------------------------------------- install


#: Where the install keeps the wheels that building the project needs; checks' pip looks
#: there, and nowhere else (they run without the network).
BUILD_WHEELHOUSE = ".venv/build-wheels"


#: How a step that fell back says so, on a line of its stderr of its own: `FELL_BACK` and
#: what then happened (`pipeline` puts it in the step's note).
FELL_BACK = "assay: "


def _best_effort(argv: tuple[str, ...], otherwise: str) -> tuple[str, ...]:
    """`argv` as a step whose failure does not stop the install: it says `otherwise` (what
    then happens) on stderr instead."""
    return ("sh", "-c", f'"$@" || echo "{FELL_BACK}$0" >&2', otherwise, *argv)


#: A requirement pip fetches from a URL rather than the index: `git+https://...`,
#: `https://.../x.tar.gz`, `nbval @ git+https://...`.
_DIRECT_URL = re.compile(r"^[A-Za-z]+\+[A-Za-z]+://|^[A-Za-z]+://|\s@\s*\S+://")


def _or_without_direct_urls(argv: tuple[str, ...], pip: tuple[str, ...]) -> tuple[str, ...]:
    """A `pip install` step of `argv`, which, when it fails and some of its requirements
    come from a URL, installs the others: tqdm's tox deps name nbval from GitHub, needed by
    a command assay does not run, and a host beyond the index may be out of reach."""
    requirements = argv[len(pip) :]
    kept = tuple(r for r in requirements if not _DIRECT_URL.search(r))
    if len(kept) == len(requirements) or not kept:
        return argv
    script = f'"$@" || {{ echo "{FELL_BACK}$0" >&2; {shlex.join((*pip, *kept))}; }}'
    said = "a requirement named by URL did not install: installing the others"
    return ("sh", "-c", script, said, *argv)


def install_steps(root: Path) -> list[Check]:
    """A project-local virtualenv with the project, its test and dev extras, requirement
    files, dependency groups and tox deps (`assay.tools.python_requirements`)."""
    # Imported here: reading requirement and tox files is for install steps only.
    from assay.tools.python_requirements import (
        build_requirements,
        catch_all_extra,
        declared_groups,
        hatch_requirements,
        nox_requirements,
        project_extras,
        rebuilds_at_import,
        requirement_file_arguments,
        requirement_files,
        setup_py_tests_require,
        tox_requirements,
    )

    manifest = next(
        (n for n in ("pyproject.toml", "setup.py", "setup.cfg") if (root / n).is_file()), None
    )
    requirements = requirement_files(root)
    if manifest is None and not requirements:
        return []
    if any((root / v / "bin" / "python").exists() for v in IN_TREE_VENVS):
        return []  # the project's environment exists: use it as it is
    steps = [
        install_step(
            "venv",
            ("python3", "-m", "venv", ".venv"),
            manifest or requirements[0],
            "a project-local environment, so the project's tools are the ones that run",
            tool="python",
        )
    ]
    venv_pip = (".venv/bin/python", "-m", "pip")
    if manifest is not None:
        download = (*venv_pip, "download", "-q", "-d", BUILD_WHEELHOUSE, *build_requirements(root))
        # Without them, a check that builds the project needs the network, as it did anyway.
        otherwise = (
            "build requirements not downloaded: a check that builds the project will need "
            "the network"
        )
        steps.append(
            install_step(
                "build-requirements",
                _best_effort(download, otherwise),
                manifest,
                "what building the project needs, kept for checks that build it offline "
                "(a test of its packaging); best effort",
            )
        )
    pip = (*venv_pip, "install", "-q")
    tests, others = declared_groups(root)
    declared_for_tests = (
        ("groups", tests),
        ("tox", tox_requirements(root, set(requirements))),
        ("nox", nox_requirements(root, set(requirements))),
        ("hatch", hatch_requirements(root)),
        ("tests-require", setup_py_tests_require(root)),
    )
    tests_declared = any(d is not None for _, d in declared_for_tests)
    dev = [
        _requirement_file_step(
            root, name, (*pip, *requirement_file_arguments(root, name)), tests_declared
        )
        for name in requirements
    ]
    for name, declared in declared_for_tests:
        if declared is not None:
            argv = _or_without_direct_urls((*pip, *declared.args), pip)
            dev.append(install_step(f"python-{name}", argv, declared.file, declared.source))
    if others is not None:
        # Beside a test group, the others (`dev`, `lint`, `typing`) often pull in docs and
        # release tools, whose newest versions may not install on this Python (filelock's
        # sphinx>=9.1): the tests' needs come first, and a linter missing for want of them is
        # told as missing.
        argv = (*pip, *others.args)
        otherwise = "these dependency groups did not install; the checks that need them will say"
        if tests is None:
            dev.append(install_step("python-groups", argv, others.file, others.source))
        else:
            step = _best_effort(argv, otherwise)
            dev.append(install_step("python-dev-groups", step, others.file, others.source))
    steps += dev
    if manifest is not None:
        # Last, as tox does: a dependency that depends on the project (pytest on pluggy)
        # would otherwise replace the working tree with a copy from the index.
        extras = project_extras(root)
        if not extras and not dev:
            # Nothing else says what the tests need; the extra of every optional dependency
            # then usually does (idna 3.20's `[all]` holds pytest and hypothesis).
            extras = catch_all_extra(root)
        target = "." + (f"[{','.join(extras)}]" if extras else "")
        isolation: tuple[str, ...] = ()
        if rebuilds_at_import(root):
            steps.append(
                install_step(
                    "python-build-env",
                    (*pip, *build_requirements(root)),
                    manifest,
                    "its build backend builds the project again at import, with these",
                )
            )
            isolation = ("--no-build-isolation",)
        steps.append(
            install_step(
                "python",
                (*pip, *isolation, "-e", target),
                manifest,
                "the project and its test extras",
            )
        )
    return steps


def _requirement_file_step(
    root: Path, name: str, argv: tuple[str, ...], tests_declared: bool
) -> Check:
    """The install of the requirement file `name`; best effort when the tests' needs are
    declared elsewhere (`tests_declared`: a dependency group, tox deps...) and nothing the
    project's CI runs installs the file: a developer's list may name what no longer builds."""
    from assay.tools.python_requirements import installed_by_ci

    step = f"python-{Path(name).stem}"
    if not tests_declared or installed_by_ci(root, name):
        return install_step(step, argv, name, f"{name} is present")
    otherwise = f"{name} did not install; the checks that need what it names will say"
    return install_step(
        step,
        _best_effort(argv, otherwise),
        name,
        f"{name} is present; best effort: the project's CI does not install it",
    )


#: `uvx`'s and `pipx run`'s options that take a value in the next word (`uvx --from ty ty`).
_UVX_VALUED = frozenset(
    {"--from", "--with", "--with-editable", "--with-requirements", "--python", "-p", "--index"}
    | {"--default-index", "--index-url", "--extra-index-url", "-c", "--constraints"}
)
_PIPX_RUN_VALUED = frozenset({"--spec", "--python", "--pip-args", "--index-url"})
#: `uv run`'s options that take a value in the next word (`uv run --group dev ruff`).
_UV_RUN_VALUED = frozenset(
    {
        *("--extra", "--no-extra", "--group", "--only-group", "--no-group", "--package"),
        *("--with", "--with-editable", "--with-requirements", "--python", "-p"),
        *("--directory", "--project", "--env-file", "--config-file", "--cache-dir"),
        *("--index", "--default-index", "--index-url", "--extra-index-url", "--find-links"),
        *("-f", "--index-strategy", "--resolution", "--prerelease", "--exclude-newer"),
        *("--python-platform", "--config-setting", "-C", "--link-mode", "--color"),
    }
)

ECOSYSTEM = EcosystemSpec(
    ecosystem=Ecosystem.PYTHON,
    label="python",
    tools=(PYTHON, COMPILEALL, UNITTEST, MYPY, PYTEST, RUFF, PYRIGHT, TY),
    test_files=(
        "**/test_*.py",
        "**/*_test.py",
        "**/tests/**",
        "**/test/**",
        "**/conftest.py",
        # pytest runs these as doctests wherever it collects (its default --doctest-glob):
        # one a change added ran `calc.add = ...` before the tests beside it.
        "**/test*.txt",
        "pytest.ini",
        "tox.ini",
        "setup.cfg",
        "**/tests.py",
        "**/noxfile.py",
        # flake8's and pylint's own files (their sections of setup.cfg and tox.ini are
        # protected with those files).
        "**/.flake8",
        "**/.pylintrc",
        "**/pylintrc",
        # isort's own files, where its pre-commit hook finds its settings: a `skip_glob`
        # of the change's passed its unsorted imports (`--filter-files` honours it).
        "**/.isort.cfg",
        "**/.editorconfig",
    ),
    config_sections={
        "pyproject.toml": (
            "tool.pytest",
            "tool.coverage",
            "tool.assay",
            "tool.tox",
            "tool.hatch.envs",
            # The linters' and type checkers' settings: what they check, and how strictly.
            "tool.mypy",
            "tool.ruff",
            "tool.pyright",
            "tool.basedpyright",
            "tool.ty",
            "tool.pylint",
            "tool.black",
            "tool.isort",
            # Flake8-pyproject's: flake8's settings where that plugin is installed.
            "tool.flake8",
        )
    },
    markers=TamperMarkers(
        test_names=(re.compile(r"^\s*(?:async\s+)?def\s+(test\w*)\s*\(", re.MULTILINE),),
        skip=r"@pytest\.mark\.(?:skip|skipif|xfail)\b|\bpytest\.(?:skip|xfail|importorskip)\s*\("
        r"|@unittest\.(?:skip\w*|expectedFailure)\b|\bself\.skipTest\s*\(",
        trivial_assertions=r"^\s*assert\s+(?:True|1|not\s+(?:False|None|0)|(?P<quote>['\"]).*(?P=quote))\s*(?:,.*)?$"
        r"|\bself\.assert(?:True|Equal)\s*\(\s*(?:True|1)\s*(?:,\s*(?:True|1)\s*)?\)",
        assertions=r"^\s*assert\b|\bself\.assert\w+\s*\(",
    ),
    install=install_steps,
    # flake8, pylint, `black --check`, tox and nox: known checks whose output is read generically.
    generic_commands=(
        Command(("flake8", "pylint"), Kind.LINT),
        Command(("black",), match=_black_checks),
        Command(("tox", "nox"), match=_tox_runs),
    ),
    steering_env=("PYTHON", "VIRTUAL_ENV", "PYENV"),
    home_dirs=(
        ".pyenv",
        ".local/bin",
        ".local/lib",
        # Interpreters and tool environments that uv and pipx keep (never the rest of
        # ~/.local/share, where keyrings live).
        ".local/share/uv/python",
        ".local/share/uv/tools",
        ".local/share/pipx/venvs",
        ".local/pipx/venvs",
    ),
    # `uv run --frozen pytest`, `poetry run mypy`: the project's environment managers;
    # `uvx ty check`, `pipx run ruff check`: a tool run from an environment of its own,
    # which a check runs from the project's, as any other (the sandbox has no network).
    launchers={
        "uv": Launcher(subcommand=True, options=True, valued=_UV_RUN_VALUED),
        "uvx": Launcher(options=True, valued=_UVX_VALUED),
        "pipx": Launcher(subcommand=True, options=True, valued=_PIPX_RUN_VALUED),
        **{name: Launcher(subcommand=True) for name in ("poetry", "pdm", "hatch", "pipenv", "rye")},
    },
)

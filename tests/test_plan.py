"""Fixture repositories, one per ecosystem and discovery source, each with its expected plan."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from assay.discovery import Candidate, Discovery, Ecosystem, Origin, ProjectEnv, Source, discover
from assay.discovery.model import report
from assay.formats import render_plan
from assay.plan import (
    DEFAULT_PRINTING_DEADLINE_S,
    DEFAULT_TIMEOUT_S,
    PlanOptions,
    Stage,
    plan,
    plan_repository,
)
from assay.verdict import Kind
from tests.repos import write


def make_venv(root: Path, name: str = ".venv", tools: tuple[str, ...] = ()) -> None:
    (root / name / "bin").mkdir(parents=True)
    (root / name / "pyvenv.cfg").write_text("home = /usr/bin\n")
    os.symlink("/usr/bin/python3", root / name / "bin" / "python")
    for tool in tools:
        (root / name / "bin" / tool).write_text("#!/bin/sh\n")


def argvs(p) -> dict[str, list[str]]:
    return {c.name: list(c.argv) for c in p.checks}


def kinds(p) -> list[str]:
    return [c.kind.value for c in p.checks]


PACKAGE_JSON = {
    "name": "web",
    "scripts": {
        "build": "tsc -p .",
        "typecheck": "tsc --noEmit",
        "lint": "eslint src",
        "test": "jest",
        "start": "node dist/index.js",
    },
}


def test_package_json_only(tmp_path: Path) -> None:
    write(tmp_path, {"package.json": json.dumps(PACKAGE_JSON, indent=2), "package-lock.json": "{}"})
    p = plan_repository(tmp_path)
    # the build script is plain tsc, so `npm run typecheck` (tsc --noEmit) covers it
    assert argvs(p) == {
        "npm-typecheck": ["npm", "run", "typecheck"],
        "npm-lint": ["npm", "run", "lint"],
        "npm-test": ["npm", "run", "test"],
    }
    # The test script is jest alone: npm runs it, asked for jest's report after `--`.
    assert [c.tool for c in p.checks] == ["npm-test", "npm-test", "npm-jest"]
    assert p.checks[-1].source == "package.json:7"
    assert any("covered by npm run typecheck" in d.reason for d in p.dropped)
    assert [s.stage for s in p.stages] == [Stage.CHECK]


def test_package_manager_from_lockfile_and_field(tmp_path: Path) -> None:
    write(tmp_path / "a", {"package.json": '{"scripts": {"test": "vitest"}}', "pnpm-lock.yaml": ""})
    write(
        tmp_path / "b",
        {
            "package.json": '{"packageManager": "yarn@4.1.0", "scripts": {"test": "vitest"}}',
            "package-lock.json": "{}",
        },
    )
    assert plan_repository(tmp_path / "a").checks[0].argv == ("pnpm", "run", "test")
    b = plan_repository(tmp_path / "b")
    assert b.checks[0].argv == ("yarn", "run", "test")
    assert b.env is not None and b.env.package_manager_source == "package.json packageManager"


def test_pretest_hook_that_builds_replaces_the_build_check(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "package.json": json.dumps(
                {"scripts": {"build": "webpack", "pretest": "npm run build", "test": "mocha"}}
            )
        },
    )
    p = plan_repository(tmp_path)
    assert argvs(p) == {"npm-test": ["npm", "run", "test"]}
    assert "pretest" in (p.checks[0].reason or "")
    assert any("pretest" in n for n in p.notes)


def test_npm_init_placeholder_test_is_dropped(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "package.json": json.dumps(
                {"scripts": {"test": 'echo "Error: no test specified" && exit 1'}}
            )
        },
    )
    p = plan_repository(tmp_path)
    assert p.checks == ()
    assert any("placeholder" in d.reason for d in p.dropped)
    assert "no build, typecheck, lint or test command" in p.empty_note


def test_workspaces_get_one_workspace_wide_command(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "package.json": json.dumps({"private": True, "workspaces": ["packages/*"]}),
            "packages/a/package.json": json.dumps({"scripts": {"test": "jest"}}),
            "packages/b/package.json": json.dumps(
                {"scripts": {"test": "jest", "lint": "eslint ."}}
            ),
            "packages/c/README.md": "not a package",
        },
    )
    p = plan_repository(tmp_path)
    assert argvs(p) == {
        "npm-lint": ["npm", "run", "lint", "--workspaces", "--if-present"],
        "npm-test": ["npm", "run", "test", "--workspaces", "--if-present"],
    }
    assert any("workspaces: 2 package(s)" in n for n in p.notes)


def test_pyproject_only_uses_in_tree_venv(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname='x'\n\n[tool.pytest.ini_options]\naddopts='-ra'\n\n"
            "[tool.ruff]\nline-length=100\n\n[tool.mypy]\nstrict=true\n",
            "src/x/__init__.py": "",
            "tests/test_x.py": "def test_x(): pass\n",
        },
    )
    make_venv(tmp_path, tools=("pytest", "ruff", "mypy"))
    p = plan_repository(tmp_path)
    assert argvs(p) == {
        "compileall": [
            ".venv/bin/python",
            "-m",
            "compileall",
            "-q",
            "-x",
            r"(^|/)(\.venv|\.git|\.tox|\.nox|node_modules|build|dist|__pycache__)(/|$)",
            "src",
        ],
        "mypy": [".venv/bin/python", "-m", "mypy", "src"],
        "ruff": [
            ".venv/bin/python",
            "-m",
            "ruff",
            "check",
            ".",
            "--extend-exclude",
            "./pyproject.toml",
        ],
        "pytest": [".venv/bin/python", "-m", "pytest", "-q", "-x"],
    }
    assert kinds(p) == ["build", "typecheck", "lint", "test"]
    by_name = {c.name: c for c in p.checks}
    assert by_name["pytest"].source == "pyproject.toml:4"
    assert by_name["pytest"].tool == "pytest"
    assert "in-tree virtualenv .venv" in (by_name["pytest"].reason or "")
    # No deadline stated: the tests run while they print, stopped once quiet for the
    # default; the rest print nothing until done, and only the fixed deadline stops them.
    assert {c.name: (c.timeout_s, c.no_output_timeout_s) for c in p.checks} == {
        "compileall": (DEFAULT_PRINTING_DEADLINE_S, None),
        "mypy": (DEFAULT_PRINTING_DEADLINE_S, None),
        "ruff": (DEFAULT_PRINTING_DEADLINE_S, None),
        "pytest": (DEFAULT_PRINTING_DEADLINE_S, DEFAULT_TIMEOUT_S),
    }
    # Byte-compiling produces nothing later checks read: it runs beside mypy, ruff and pytest.
    assert [s.stage for s in p.stages] == [Stage.CHECK]
    assert [c.name for c in p.stages[0].checks] == ["compileall", "mypy", "ruff", "pytest"]


def test_builds_that_produce_artifacts_run_first() -> None:
    from assay.evidence import Check
    from assay.plan import stage_of

    assert (
        stage_of(Check("go-build", Kind.BUILD, ("go", "build", "./..."), tool="go")) is Stage.BUILD
    )
    assert stage_of(Check("tsc-build", Kind.BUILD, ("tsc",), tool="tsc")) is Stage.BUILD
    assert stage_of(Check("compileall", Kind.BUILD, ("python3",), tool="compileall")) is Stage.CHECK


def test_venv_that_linters_would_scan_is_excluded(tmp_path: Path) -> None:
    write(tmp_path, {"setup.cfg": "[mypy]\nstrict = True\n", "ruff.toml": "", "app.py": ""})
    make_venv(tmp_path, "venv")
    make_venv(tmp_path, "env")
    p = plan_repository(tmp_path)
    a = argvs(p)
    assert a["mypy"] == ["mypy", "app.py"]  # the project's code: no environment in it
    assert a["ruff"] == ["ruff", "check", ".", "--extend-exclude", "env,./ruff.toml"]
    assert "venv" in a["compileall"][5] and "env" in a["compileall"][5]


def test_a_configured_mypy_checks_the_projects_code_not_its_tests_and_docs(
    tmp_path: Path,
) -> None:
    """As more-itertools: a `[mypy]` section (for stubtest), tests and docs that would not
    type-check, and no command that runs mypy: the package is what is checked."""
    write(
        tmp_path,
        {
            "setup.cfg": "[mypy]\ndisallow_untyped_defs = true\n",
            "pkg/__init__.py": "",
            "tool.py": "",
            "setup.py": "",
            "tests/__init__.py": "",
            "tests/test_pkg.py": "",
            "docs/conf.py": "",
            "test_top.py": "",
        },
    )
    assert argvs(plan_repository(tmp_path))["mypy"] == ["mypy", "pkg", "tool.py"]


def test_a_configured_mypy_with_no_code_at_the_root_checks_the_tree(tmp_path: Path) -> None:
    write(tmp_path, {"setup.cfg": "[mypy]\nstrict = True\n", "tests/test_x.py": ""})
    make_venv(tmp_path, "venv")
    a = argvs(plan_repository(tmp_path))
    assert a["mypy"] == ["mypy", ".", "--exclude", "^venv/"]


@pytest.mark.parametrize(
    ("config_file", "config", "planned"),
    [
        # packaging 26.4's sdist: its mypy `files` names noxfile.py, which it leaves out.
        (
            "pyproject.toml",
            '[tool.mypy]\nfiles = ["src", "tests", "noxfile.py"]\n',
            ["mypy", "src", "tests"],
        ),
        ("mypy.ini", "[mypy]\nfiles = src/, noxfile.py\n", ["mypy", "src/"]),
        # Every path there: mypy reads its own `files`, as the maintainers run it.
        ("pyproject.toml", '[tool.mypy]\nfiles = ["src", "tests"]\n', ["mypy"]),
        # A glob would not be expanded on the command line: left to mypy, as written.
        ("mypy.ini", "[mypy]\nfiles = src/**/*.py, noxfile.py\n", ["mypy"]),
        # Nothing named is there: mypy's own message says so.
        ("mypy.ini", "[mypy]\nfiles = lib, noxfile.py\n", ["mypy"]),
    ],
)
def test_mypy_files_that_the_tree_lacks_are_left_off_its_command_line(
    tmp_path: Path, config_file: str, config: str, planned: list[str]
) -> None:
    write(tmp_path, {config_file: config, "src/p/__init__.py": "", "tests/test_p.py": ""})
    p = plan_repository(tmp_path)
    (typecheck,) = [c for c in p.checks if c.tool == "mypy"]
    assert list(typecheck.argv) == planned
    assert ("noxfile.py, which this tree lacks" in (typecheck.reason or "")) == (len(planned) > 1)
    # As marshmallow 4.4.0's sdist: tox runs mypy on the `files` it names, `examples` too.
    write(tmp_path, {"tox.ini": "[testenv:mypy]\ncommands = mypy --show-error-codes\n"})
    (typecheck,) = [c for c in plan_repository(tmp_path).checks if c.tool == "mypy"]
    assert list(typecheck.argv) == ["mypy", "--show-error-codes", *planned[1:]]
    write(tmp_path, {"tox.ini": "[testenv:mypy]\ncommands = mypy -p p\n"})
    (typecheck,) = [c for c in plan_repository(tmp_path).checks if c.tool == "mypy"]
    assert list(typecheck.argv) == ["mypy", "-p", "p"]  # its own targets: as written


#: exceptiongroup 1.3.2: native tox in pyproject.toml, its `typing` env outside env_list.
_TYPING_ENV_TOML = (
    '[tool.tox]\nenv_list = ["3.11"]\n[tool.tox.env_run_base]\n'
    'commands = [["python", "-m", "pytest"]]\n[tool.tox.env.typing]\n'
    'commands = [["pyright", "tests/check_types.py"], ["mypy", "tests/check_types.py"]]\n'
)
_TYPING_ENV_INI = (
    "[tox]\nenvlist = py311\n[testenv]\ncommands = pytest\n"
    "[testenv:typing]\ncommands = mypy tests/check_types.py\n"
)


@pytest.mark.parametrize(
    ("tox_file", "tox", "typing_env"),
    [
        ("pyproject.toml", _TYPING_ENV_TOML, True),
        ("tox.ini", _TYPING_ENV_INI, True),
        ("tox.ini", "[tox]\nenvlist = py311\n[testenv]\ncommands = pytest\n", False),
    ],
)
def test_a_configured_mypy_checks_what_the_projects_own_mypy_command_names(
    tmp_path: Path, tox_file: str, tox: str, typing_env: bool
) -> None:
    """A tox env that runs only when asked is not planned, but its `mypy` command is where
    the project says what mypy checks ("the code itself isn't type checked in CI"): the
    configured mypy checks that, not the package. Without one, the package."""
    mypy = "[tool.mypy]\nwarn_unused_ignores = true\n"
    files = {"src/eg/__init__.py": "", "tests/check_types.py": "", "pyproject.toml": mypy}
    files[tox_file] = files.get(tox_file, "") + tox
    write(tmp_path, files)
    p = plan_repository(tmp_path)
    (typecheck,) = [c for c in p.checks if c.tool == "mypy"]
    targets = ["tests/check_types.py"] if typing_env else ["src"]
    assert list(typecheck.argv) == ["mypy", *targets]
    assert ("run as tox env typing (" in (typecheck.reason or "")) == typing_env
    assert any(d.what == "tox env typing" for d in p.dropped) == typing_env  # never run


_MYPY_MIRROR = (
    "repos:\n  - repo: https://github.com/pre-commit/mirrors-mypy\n    rev: v2.3.0\n"
    "    hooks:\n      - id: mypy\n"
)


@pytest.mark.parametrize(
    ("hook", "options"),
    [
        # marko: the mirror's own arguments, the hook setting none.
        (_MYPY_MIRROR + "        exclude: ^docs/\n", ["--ignore-missing-imports"]),
        (
            _MYPY_MIRROR + "        args: [--strict, --config-file, mypy.ini, -p, eg, src/x.py]\n",
            ["--strict", "--config-file", "mypy.ini"],
        ),
        (_MYPY_MIRROR + "        args: []\n", []),
        ("repos: []\n", []),
    ],
)
def test_a_configured_mypy_takes_the_options_of_the_projects_pre_commit_hook(
    tmp_path: Path, hook: str, options: list[str]
) -> None:
    files = {
        "pyproject.toml": "[tool.mypy]\nstrict = true\n",
        "src/eg/__init__.py": "",
        ".pre-commit-config.yaml": hook,
    }
    write(tmp_path, files)
    (typecheck,) = [c for c in plan_repository(tmp_path).checks if c.tool == "mypy"]
    assert list(typecheck.argv) == ["mypy", *options, "src"]
    assert ("its pre-commit hook" in (typecheck.reason or "")) == bool(options)


def test_makefile_only(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "Makefile": (
                ".PHONY: test lint\nVERSION := 1\n\nbuild:\n\tcc -o app main.c\n\n"
                "test: build\n\t./run-tests.sh\n\nlint:\n\tshellcheck *.sh\n\n%.o: %.c\n\tcc -c $<\n"
            )
        },
    )
    p = plan_repository(tmp_path)
    assert argvs(p) == {
        "make-build": ["make", "build"],
        "make-lint": ["make", "lint"],
        "make-test": ["make", "test"],
    }
    assert {c.name: c.source for c in p.checks}["make-test"] == "Makefile:7"
    assert all(c.tool == "make" for c in p.checks)


def test_makefile_check_target_takes_the_kind_of_its_recipe(tmp_path: Path) -> None:
    write(
        tmp_path,
        {"Makefile": "check:\n\t@python -m pytest -q\nci: check\nverify:\n\t./all.sh\n"},
    )
    p = plan_repository(tmp_path)
    assert argvs(p) == {"make-test": ["make", "check"]}
    # `ci` builds `check` first, so it runs tests too; `verify` runs nothing assay knows.
    assert any("make ci" in d.what and "preferred" in d.reason for d in p.dropped)
    assert any("verify" in d.what and "kind is unknown" in d.reason for d in p.dropped)


def test_justfile(tmp_path: Path) -> None:
    write(
        tmp_path,
        {"justfile": "set shell := ['bash', '-c']\n\ntest *ARGS:\n    cargo test {{ARGS}}\n"},
    )
    assert argvs(plan_repository(tmp_path)) == {"just-test": ["just", "test"]}


def test_workflow_only(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            ".github/workflows/ci.yml": (
                "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    env:\n      PYTHONHASHSEED: '0'\n"
                "    steps:\n      - uses: actions/checkout@v4\n      - run: pip install -e .\n"
                "      - run: |\n          ruff check --fix --exit-zero .\n          pytest -n auto tests/\n"
                "      - run: mypy --python-version ${{ matrix.py }} src\n"
            )
        },
    )
    p = plan_repository(tmp_path)
    a = argvs(p)
    assert a["pytest"] == ["python3", "-m", "pytest", "-n", "auto", "tests/", "-q", "-x"]
    # --fix removed: verification must not edit code; --exit-zero would hide every finding.
    assert a["ruff"] == ["ruff", "check", "."]
    assert "mypy" not in a
    by_name = {c.name: c for c in p.checks}
    assert by_name["pytest"].env == {"PYTHONHASHSEED": "0"}
    assert by_name["pytest"].source == ".github/workflows/ci.yml:12"
    assert any("CI expression" in d.reason for d in p.dropped)


def test_ci_confirms_a_configured_check_and_lends_env(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "tests/test_a.py": "",
            ".gitlab-ci.yml": "variables:\n  DJANGO_SETTINGS: test\ntests:\n  script:\n    - pytest\n",
        },
    )
    p = plan_repository(tmp_path)
    test = next(c for c in p.checks if c.kind is Kind.TEST)
    assert test.source == "pytest.ini:1"
    assert test.env == {"DJANGO_SETTINGS": "test"}
    assert "CI runs it too (.gitlab-ci.yml:5)" in (test.reason or "")


def test_readme_only(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "README.md": (
                "# tool\n\nInstall:\n\n```sh\n$ pip install -e .\n```\n\nRun the tests:\n\n```bash\n"
                "$ python -m pytest tests\n```\n\n```python\npytest.main()\n```\n"
            ),
            "tests/cases.txt": "",
        },
    )
    p = plan_repository(tmp_path)
    assert argvs(p) == {"pytest": ["python3", "-m", "pytest", "tests", "-q", "-x"]}
    assert p.checks[0].source == "README.md:12"


def test_polyglot_python_and_typescript(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "package.json": json.dumps({"scripts": {"test": "vitest run", "build": "vite build"}}),
            "tsconfig.json": '{\n  // comments are allowed\n  "compilerOptions": {"strict": true,},\n}\n',
            "pyproject.toml": "[tool.pytest.ini_options]\n[tool.ruff]\n",
            "tests/test_api.py": "import pytest\n",
        },
    )
    os.makedirs(tmp_path / "node_modules/.bin")
    (tmp_path / "node_modules/.bin/tsc").write_text("")
    p = plan_repository(tmp_path)
    assert argvs(p) == {
        "npm-build": ["npm", "run", "build"],
        "compileall": [
            "python3",
            "-m",
            "compileall",
            "-q",
            "-x",
            r"(^|/)(\.git|\.tox|\.nox|node_modules|build|dist|__pycache__)(/|$)",
            ".",
        ],
        "tsc": ["node_modules/.bin/tsc", "--noEmit"],
        "ruff": ["ruff", "check", ".", "--extend-exclude", "./pyproject.toml"],
        "npm-test": ["npm", "run", "test"],
        "pytest": ["python3", "-m", "pytest", "-q", "-x"],
    }
    assert [s.stage for s in p.stages] == [Stage.BUILD, Stage.CHECK]
    # Python's byte-compile runs with the other checks; TypeScript's build stays first.
    assert [len(s.checks) for s in p.stages] == [1, 5]


def test_tox_only(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "tox.ini": (
                "[tox]\nenvlist = py311, lint\n\n[testenv]\ndeps = -rrequirements.txt\nsetenv =\n    MODE = test\n"
                "commands =\n    python runtests.py {posargs:--fast}\n\n[testenv:lint]\ncommands = flake8 src\n"
            )
        },
    )
    p = plan_repository(tmp_path)
    a = argvs(p)
    assert a["python3-test"] == ["python3", "runtests.py", "--fast"]
    assert a["flake8-lint"] == ["flake8", "src"]
    test = next(c for c in p.checks if c.kind is Kind.TEST)
    assert test.env == {"MODE": "test"}
    assert test.source == "tox.ini:9"


def test_noxfile_read_without_running_it(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "noxfile.py": (
                "import nox\nraise SystemExit('never imported')\n\n@nox.session(python=['3.11'])\n"
                "def tests(session):\n    session.install('.')\n    session.run('pytest', '-q', *session.posargs)\n"
            )
        },
    )
    p = plan_repository(tmp_path)
    assert argvs(p)["pytest"] == ["python3", "-m", "pytest", "-q", "-x"]
    assert p.checks[-1].source == "noxfile.py:7"


def test_unittest_only(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "setup.py": "from setuptools import setup\nsetup()\n",
            "tests/__init__.py": "",
            "tests/test_core.py": "import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self): pass\n",
        },
    )
    p = plan_repository(tmp_path)
    test = next(c for c in p.checks if c.kind is Kind.TEST)
    assert test.argv == ("python3", "-m", "unittest", "discover", "-s", "tests", "-t", ".")
    assert test.tool == "unittest"
    assert any("fallback" in d.what or "pytest" in d.what for d in p.dropped)


@pytest.mark.parametrize(
    ("files", "argv_tail"),
    [
        # decorator 5.1.1: its README runs `python src/tests/test.py`.
        (
            {"src/decorator.py": "", "src/tests/__init__.py": "", "src/tests/test.py": ""},
            ("-s", "src/tests", "-t", "src"),
        ),
        # Named as unittest's `test*.py` finds them, not as pytest collects them.
        ({"calc.py": "", "tests/tests.py": ""}, ("-s", "tests")),
    ],
)
def test_unittest_suites_found_where_and_as_unittest_finds_them(
    tmp_path: Path, files: dict[str, str], argv_tail: tuple[str, ...]
) -> None:
    case = "import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self): pass\n"
    suite = {p: case if p.endswith(("test.py", "tests.py")) else t for p, t in files.items()}
    write(tmp_path, {"setup.py": "from setuptools import setup\nsetup()\n", **suite})
    test = next(c for c in plan_repository(tmp_path).checks if c.kind is Kind.TEST)
    assert test.argv == ("python3", "-m", "unittest", "discover", *argv_tail)


def test_pytest_style_tests_without_config_fall_back_to_pytest(tmp_path: Path) -> None:
    write(tmp_path, {"requirements.txt": "", "tests/test_a.py": "import pytest\n"})
    test = next(c for c in plan_repository(tmp_path).checks if c.kind is Kind.TEST)
    assert test.argv == ("python3", "-m", "pytest", "-q", "-x")


def test_cargo_and_go(tmp_path: Path) -> None:
    write(tmp_path / "rs", {"Cargo.toml": "[package]\nname = 'x'\nversion = '0.1.0'\n"})
    write(tmp_path / "go", {"go.mod": "module example.com/x\n\ngo 1.22\n"})
    assert argvs(plan_repository(tmp_path / "rs")) == {
        "cargo-check": ["cargo", "check"],
        "cargo-test": ["cargo", "test"],
    }
    go = plan_repository(tmp_path / "go")
    assert argvs(go) == {"go-test": ["go", "test", "./..."]}
    assert any("go build" in d.what and "covered by go test" in d.reason for d in go.dropped)


def test_a_cargo_test_goes_quiet_longer_than_libtest_takes_to_name_a_hung_test(
    tmp_path: Path,
) -> None:
    """libtest names a test still running after 60 s in full; stopped for silence at 60 s
    too, heck's hung test was named by its thread, cut to 15 bytes, one run in two."""
    write(tmp_path, {"Cargo.toml": "[package]\nname = 'x'\nversion = '0.1.0'\n"})
    silence = {c.name: c.no_output_timeout_s for c in plan_repository(tmp_path).checks}
    assert silence["cargo-check"] is None  # only the fixed deadline: it prints as it ends
    assert silence["cargo-test"] is not None and silence["cargo-test"] > 60
    stated = plan_repository(tmp_path, PlanOptions(timeout_s=30)).checks
    assert {c.no_output_timeout_s for c in stated} == {None}


def _go_ci(*steps: str) -> str:
    runs = "".join(f"      - run: {step}\n" for step in steps)
    return (
        "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
        f"    steps:\n      - uses: actions/checkout@v4\n{runs}"
    )


def test_go_vet_only_where_the_project_s_own_gate_lints(tmp_path: Path) -> None:
    """go-cmp's CI runs `go test -race` and no vet, and its tests use unkeyed literals on
    purpose: vet is not part of that gate, nor of a module that states no checks at all
    (go-cmp's tarball, no CI in it, was FAILED by vet). A CI that vets keeps it."""
    go_mod = "module example.com/x\n\ngo 1.22\n"
    ci = ".github/workflows/ci.yml"
    write(tmp_path / "tests-only", {"go.mod": go_mod, ci: _go_ci("go test -race ./...")})
    write(tmp_path / "vets", {"go.mod": go_mod, ci: _go_ci("go vet ./...", "go test ./...")})
    write(tmp_path / "bare", {"go.mod": go_mod})
    tests_only = plan_repository(tmp_path / "tests-only")
    assert argvs(tests_only) == {"go-test": ["go", "test", "-race", "./..."]}
    assert argvs(plan_repository(tmp_path / "bare")) == {"go-test": ["go", "test", "./..."]}
    assert not any("vet" in " ".join(c.argv) for c in plan_repository(tmp_path / "bare").checks)
    assert argvs(plan_repository(tmp_path / "vets")) == {
        "go-vet": ["go", "vet", "./..."],
        "go-test": ["go", "test", "./..."],
    }


def test_assay_config_outranks_discovery(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": "[tool.pytest.ini_options]\n\n[tool.assay]\ntimeout = 30\nrequire_tests = false\n"
            "required = ['typecheck']\nskip = ['build']\n\n[tool.assay.commands]\n"
            "test = { command = 'pytest tests/unit', timeout = 120, env = { CI = '1' } }\n",
            "Makefile": "test:\n\tpytest\n",
        },
    )
    p = plan_repository(tmp_path)
    assert argvs(p) == {"pytest": ["pytest", "tests/unit"]}  # explicit: no flags added
    check = p.checks[0]
    assert (
        check.timeout_s == 120 and check.env == {"CI": "1"} and check.source == "pyproject.toml:10"
    )
    assert p.require_tests is False
    assert p.missing == frozenset({Kind.TYPECHECK})
    assert any("required typecheck" in n for n in p.notes)


def test_options_override_config(tmp_path: Path) -> None:
    write(
        tmp_path,
        {"assay.toml": "timeout = 30\n[commands]\ntest = 'pytest'\nlint = 'ruff check .'\n"},
    )
    p = plan(
        discover(tmp_path),
        PlanOptions(timeout_s=5, kinds=frozenset({Kind.TEST}), require_tests=True),
    )
    assert [c.name for c in p.checks] == ["pytest"]
    assert (p.checks[0].timeout_s, p.checks[0].no_output_timeout_s) == (5, None)
    assert any("not requested" in d.reason for d in p.dropped)
    configured = plan_repository(tmp_path).checks[0]
    # A stated deadline is a fixed one: no no-output limit cuts it short.
    assert (configured.timeout_s, configured.no_output_timeout_s) == (30, None)


def test_malformed_assay_config_is_a_configuration_error(tmp_path: Path) -> None:
    write(tmp_path, {"assay.toml": "[commands]\ntset = 'pytest'\n", "pytest.ini": "[pytest]\n"})
    p = plan_repository(tmp_path)
    assert not p.runnable and p.checks == ()
    assert "unknown kind 'tset'" in (p.config_error or "")
    assert "configuration error" in render_plan(p)


def test_nonexistent_and_empty(tmp_path: Path) -> None:
    missing = plan_repository(tmp_path / "nope")
    assert not missing.runnable and "no such file" in (missing.root_problem or "")
    empty = plan_repository(tmp_path)
    assert empty.runnable and empty.checks == ()
    assert "nothing to run" in render_plan(empty)


def test_plan_json_and_text(tmp_path: Path) -> None:
    write(tmp_path, {"package.json": json.dumps(PACKAGE_JSON), "tsconfig.json": "{}"})
    p = plan_repository(tmp_path)
    data = json.loads(json.dumps(p.to_dict()))
    assert data["schema"] == "assay.plan/2"
    assert [c["stage"] for c in data["checks"]] == ["check", "check", "check"]
    assert data["stages"] == [
        {
            "stage": "check",
            "parallel": True,
            "checks": ["npm-typecheck", "npm-lint", "npm-test"],
        }
    ]
    assert {d["detector"] for d in data["detectors"]} >= {"package.json", "manifests", "fallback"}
    assert any("tsc --noEmit" in d["what"] for d in data["dropped"])
    text = render_plan(p, verbose=True)
    assert "1. check (in parallel)" in text and "dropped" in text
    assert "2." not in text  # one stage: typecheck, lint and test run together


@pytest.mark.parametrize("fail_fast", [True, False])
def test_pytest_flags(tmp_path: Path, fail_fast: bool) -> None:
    write(tmp_path, {"pytest.ini": "[pytest]\n", "Makefile": "test:\n\tpytest -v --maxfail=2\n"})
    p = plan(discover(tmp_path), PlanOptions(fail_fast=fail_fast))
    assert p.checks[-1].argv[-1] == ("-x" if fail_fast else "-q")


def test_checks_that_cover_each_other_keep_one(tmp_path: Path) -> None:
    def build(tool: str, other: str, ecosystem: Ecosystem) -> Candidate:
        return Candidate(
            Kind.BUILD,
            (tool,),
            tool,
            ecosystem,
            Origin.MANIFEST,
            Source("x"),
            "r",
            redundant_with=frozenset({other}),
        )

    found = report("manifests", [build("a", "b", Ecosystem.NODE), build("b", "a", Ecosystem.GO)])
    discovery = Discovery(str(tmp_path), ProjectEnv("python3", "PATH"), (found,))
    p = plan(discovery)
    assert [c.argv for c in p.checks] == [("b",)]  # once `a` is left out, nothing covers `b`
    assert [str(d) for d in p.dropped] == [f"dropped a (x): {p.dropped[0].reason}"]


def test_stated_arguments_replace_a_configured_tools_composed_ones(tmp_path: Path) -> None:
    # `[tool.ruff]` alone would plan `ruff check .`; the maintainers lint only `pkg tests`
    # (their Makefile `check`, which CI runs): a pristine tree must not fail on the rest.
    write(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "pkg"\n\n[tool.ruff]\nline-length = 79\n',
            "setup.cfg": "[mypy]\nstrict = true\n",
            "Makefile": ("check:\n\truff format --check .\n\truff check pkg tests\n\tmypy pkg\n"),
            ".github/workflows/ci.yml": (
                "on: push\njobs:\n  lint:\n    runs-on: ubuntu-latest\n"
                "    steps:\n      - run: make check\n"
            ),
        },
    )
    p = plan_repository(tmp_path)
    lint = next(c for c in p.checks if c.tool == "ruff")
    typecheck = next(c for c in p.checks if c.tool == "mypy")
    assert lint.argv[:4] == ("ruff", "check", "pkg", "tests")
    assert "run as Makefile:1 states it" in (lint.reason or "")
    assert typecheck.argv[:2] == ("mypy", "pkg")


def test_a_stated_command_for_another_subcommand_does_not_replace_the_composed_one(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "pkg"\n\n[tool.ruff]\n',
            "Makefile": "check:\n\truff format --check src\n",
        },
    )
    lint = next(c for c in plan_repository(tmp_path).checks if c.tool == "ruff")
    assert lint.argv[:3] == ("ruff", "check", ".")


@pytest.mark.parametrize(("enabler", "planned"), [("", False), ('addopts = "--mypy"\n', True)])
def test_a_mypy_the_project_turns_off_through_pytest_enabler_is_not_planned(
    tmp_path: Path, enabler: str, planned: bool
) -> None:
    """inflect 7.6.0 (the jaraco skeleton): mypy.ini is there, and pyproject.toml's empty
    `[tool.pytest-enabler.mypy]` turns off the only way its CI runs mypy."""
    write(
        tmp_path,
        {
            "mypy.ini": "[mypy]\nstrict = True\n",
            "pyproject.toml": (
                "[project]\nname = 'p'\nversion = '1'\n"
                f"[tool.pytest-enabler.mypy]\n# Disabled due to jaraco/skeleton#143\n{enabler}"
            ),
            "p/__init__.py": "",
            "tests/test_p.py": "",
        },
    )
    p = plan_repository(tmp_path)
    assert any(c.tool == "mypy" for c in p.checks) is planned
    assert any("[tool.pytest-enabler.mypy] turns" in d.reason for d in p.dropped) is not planned


@pytest.mark.parametrize(
    ("commands", "linted", "formatted"),
    [
        # bleach 6.4.0: its tox lint env checks the formatting first, then lints.
        (
            "ruff format --check src tests\n    ruff check src tests",
            ["ruff", "check", "src", "tests"],
            ("ruff-format", ["ruff", "format", "--check", "src", "tests"]),
        ),
        (
            "black --check src\n    flake8 src",
            ["flake8", "src"],
            ("black-format", ["black", "--check", "src"]),
        ),
        (
            "python -m ruff format --check src\n    python -m ruff check src",
            ["check", "src"],
            ("ruff-format", ["format", "--check", "src"]),
        ),
        ("black --check src", ["black", "--check", "src"], None),  # a formatter alone is run
        # One formatter's check per ecosystem: the first the project states.
        (
            "black --check src\n    isort --check-only src\n    flake8 src",
            ["flake8", "src"],
            ("black-format", ["black", "--check", "src"]),
        ),
    ],
)
def test_a_linter_is_chosen_and_the_formatters_check_the_project_runs_beside_it(
    tmp_path: Path, commands: str, linted: list[str], formatted: tuple[str, list[str]] | None
) -> None:
    """A change its linter passes and its formatter rejects fails the project's CI: both
    are run, the linter first (a formatter's check finds less than a linter does)."""
    write(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "p"\nversion = "1"\n',
            "tox.ini": f"[testenv:lint]\ncommands =\n    {commands}\n",
        },
    )
    lints = [c for c in plan_repository(tmp_path).checks if c.kind is Kind.LINT]
    assert list(lints[0].argv[-len(linted) :]) == linted, lints[0].argv
    if formatted is None:
        assert len(lints) == 1, lints
        return
    name, argv = formatted
    assert len(lints) == 2, lints
    assert lints[1].name == name and list(lints[1].argv[-len(argv) :]) == argv, lints[1]


def test_a_formatters_check_no_one_states_is_not_run_beside_the_linter(tmp_path: Path) -> None:
    """Where the project lints through its configuration alone, nothing says whose
    formatter, or which release, its code is kept to."""
    write(
        tmp_path,
        {
            "pyproject.toml": (
                '[project]\nname = "p"\nversion = "1"\n[tool.ruff]\nline-length = 99\n'
                "[tool.black]\nline-length = 99\n"
            ),
            "p.py": "x = 1\n",
        },
    )
    lints = [c for c in plan_repository(tmp_path).checks if c.kind is Kind.LINT]
    assert [c.argv[:2] for c in lints] == [("ruff", "check")], lints


def test_a_command_left_out_for_a_configured_one_names_it_as_configured(tmp_path: Path) -> None:
    """sqlparse 0.6.1: ruff configured in pyproject.toml outranks CI's `ruff check
    sqlparse/`, then runs as CI states it. The dropped entry named the composed command
    (`ruff check . --extend-exclude ./pyproject.toml`), which never ran."""
    write(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "p"\nversion = "0"\n[tool.ruff]\n',
            "p/__init__.py": "",
            ".github/workflows/ci.yml": "on: push\njobs:\n  lint:\n    runs-on: x\n"
            "    steps:\n      - run: ruff check p/\n",
        },
    )
    p = plan_repository(tmp_path)
    (ruff,) = [c for c in p.checks if c.name == "ruff"]
    assert ruff.argv[:3] == ("ruff", "check", "p/"), ruff.argv
    (why,) = [d.reason for d in p.dropped if d.what == "ruff check p/"]
    assert "ruff as configured in pyproject.toml" in why and "extend-exclude" not in why, why


@pytest.mark.parametrize("name", ["typescript", "check:types", "types:check", "test:types"])
def test_a_script_named_for_type_checking_is_the_typecheck(tmp_path: Path, name: str) -> None:
    """fastq 1.20.3 checks its .d.ts with `"typescript": "tsc --project ./test/tsconfig.json"`:
    not planned, a type error there was VERIFIED."""
    scripts = {"test": "tape test/*.js", name: "tsc --project ./test/tsconfig.json"}
    write(tmp_path, {"package.json": json.dumps({"name": "q", "scripts": scripts})})
    assert argvs(plan_repository(tmp_path))["npm-typecheck"] == ["npm", "run", name]


def test_a_command_holding_a_nul_byte_is_left_out_with_why(tmp_path: Path) -> None:
    """A CI step's YAML `"\\0"` decodes to a NUL byte, which no argv can hold: planning
    crashed on it (a traceback from `assay plan`, an INDETERMINATE verify)."""
    write(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "p"\nversion = "0"\n',
            ".github/workflows/ci.yml": "name: ci\non: push\njobs:\n  test:\n"
            '    runs-on: ubuntu-latest\n    steps:\n      - run: "pytest -q tests\\0x"\n',
            "tests/test_a.py": "def test_a():\n    pass\n",
        },
    )
    planned = plan_repository(tmp_path)
    assert not any("\0" in word for check in planned.checks for word in check.argv)
    (dropped,) = [d for d in planned.dropped if "NUL byte" in d.reason]
    assert dropped.what.endswith("pytest -q tests\\0x")
    assert str(dropped.source).startswith(".github/workflows/ci.yml")

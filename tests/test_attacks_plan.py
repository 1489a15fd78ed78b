"""Attacks on what runs: a change that leaves the code wrong and, instead of fixing it,
rewrites the plan, the runner's configuration, or the protected files themselves.

Each attack is a real repository whose base has a bug and a test that catches it; the
change keeps the bug and cheats. Under `--base REF --protect` none may reach VERIFIED:
the plan comes from the base, every file that decides how tests are found, run or
reported is restored from the base, and whatever the change runs before the tests
(install, a build step) cannot leave protected files rewritten. Without `--protect`,
the tampering `--base` finds keeps the status from VERIFIED and is shown to a reader.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

import pytest

import assay
from assay.pipeline import VerifyOptions, make_plan
from assay.report import Report
from assay.verdict import Kind, Status
from tests.cli import assay as assay_cli
from tests.cli import no_traceback, path_with_venv
from tests.repos import commit_all, write_dedented

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _venv_tools_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest, as the project's tool, is the one in this environment."""
    monkeypatch.setenv("PATH", path_with_venv())


@dataclass(frozen=True, slots=True)
class Attack:
    """A base with a bug its tests catch, and a change that keeps the bug and cheats."""

    base: dict[str, str]
    change: dict[str, str]
    executable: tuple[str, ...] = ()
    """Files of the change committed as executables."""
    deleted: tuple[str, ...] = ()
    install: bool = False
    """Verify with `--install` (the change's setup.py runs)."""
    expected: Status = Status.FAILED
    """The status under `--protect` (bubblewrap): the base's tests ran and failed, or
    (INDETERMINATE) what the change ran to cheat could not finish."""


PY_BASE = {
    "pyproject.toml": """
        [project]
        name = "calc"
        version = "0"

        [tool.pytest.ini_options]
        testpaths = ["tests"]
    """,
    "calc.py": """
        def add(a, b):
            return a - b
    """,
    "tests/test_calc.py": """
        from calc import add


        def test_add():
            assert add(2, 2) == 4


        def test_add_zero():
            assert add(1, 0) == 1
    """,
}

#: A pytest plugin that turns every failure into a pass: pytest prints "2 passed" itself.
FORGE_PLUGIN = """
    import pytest


    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(item, call):
        outcome = yield
        outcome.get_result().outcome = "passed"
"""

#: The same tests, every assertion gone: what a rewrite of the test file leaves.
PY_TESTS_PASSING = """
    def test_add():
        assert True


    def test_add_zero():
        assert True
"""

NODE_TEST_BASE = {
    "calc.js": """
        exports.add = (a, b) => a - b;
    """,
    "test/calc.test.js": """
        const test = require('node:test');
        const assert = require('node:assert');
        const { add } = require('../calc');

        test('add', () => { assert.strictEqual(add(2, 2), 4); });
    """,
}

#: Prints what a passing run prints and exits 0, whatever it is asked to run.
FAKE_PASS = """
    #!/bin/sh
    echo "# tests 2"
    echo "# pass 2"
    echo "# fail 0"
    echo "2 passed"
    echo "test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out"
    exit 0
"""

UNITTEST_BASE = {
    "setup.py": """
        from setuptools import setup

        setup(name="calc", version="0", py_modules=["calc"])
    """,
    "calc.py": """
        def add(a, b):
            return a - b
    """,
    "tests/__init__.py": "",
    "tests/test_calc.py": """
        import unittest

        from calc import add


        class TestAdd(unittest.TestCase):
            def test_add(self):
                self.assertEqual(add(2, 2), 4)
    """,
}

#: The change's setup.py: `pip install -e .` runs it, and it rewrites the test.
SETUP_REWRITES_TESTS = """
    from pathlib import Path

    from setuptools import setup

    Path("tests/test_calc.py").write_text(
        "import unittest\\n\\n\\n"
        "class TestAdd(unittest.TestCase):\\n"
        "    def test_add(self):\\n"
        "        self.assertTrue(True)\\n"
    )
    setup(name="calc", version="0", py_modules=["calc"])
"""

#: Run by the base's `make build`: the change made it rewrite the test file.
BUILD_REWRITES_TESTS = """
    from pathlib import Path

    Path("tests/test_calc.py").write_text(
        "def test_add():\\n    assert True\\n\\n\\ndef test_add_zero():\\n    assert True\\n"
    )
"""

#: Imported by the first test module pytest collects: rewrites the test module collected
#: after it to pass, and puts it back as it was when the process ends.
CALC_REWRITES_A_LATER_TEST = """
    import atexit
    from pathlib import Path

    _later = Path(__file__).parent / "tests" / "test_later.py"
    try:
        _original = _later.read_text()
        _later.write_text("def test_add():\\n    assert True\\n")
        atexit.register(_later.write_text, _original)
    except OSError:
        pass


    def add(a, b):
        return a - b


    def mul(a, b):
        return a * b
"""

RUST_BASE = {
    "Cargo.toml": """
        [package]
        name = "calc"
        version = "0.1.0"
        edition = "2021"
    """,
    "src/lib.rs": """
        pub fn add(a: i64, b: i64) -> i64 {
            a - b
        }
    """,
    "tests/add.rs": """
        #[test]
        fn adds() {
            assert_eq!(calc::add(2, 2), 4);
        }
    """,
}

#: A base whose type checker and linter each find a fault its tests do not see.
_CHECKED_BASE = {
    "pyproject.toml": PY_BASE["pyproject.toml"]
    + """
        [tool.mypy]
        files = ["calc.py"]

        [tool.ruff]
        line-length = 100
    """,
    "calc.py": """
        def add(a: int, b: int) -> int:
            return a + b


        LABEL: int = "sum"


        def unused() -> int:
            return undefined_name
    """,
    "tests/test_calc.py": """
        from calc import add


        def test_add():
            assert add(2, 2) == 4
    """,
}
#: The same with a type error alone, and with a lint error alone.
TYPED_BASE = {
    **_CHECKED_BASE,
    "calc.py": _CHECKED_BASE["calc.py"].split("\n\n\n        def unused")[0],
}
LINTED_BASE = {
    "pyproject.toml": _CHECKED_BASE["pyproject.toml"].replace(
        '[tool.mypy]\n        files = ["calc.py"]\n', ""
    ),
    "calc.py": _CHECKED_BASE["calc.py"].replace('LABEL: int = "sum"', ""),
    "tests/test_calc.py": _CHECKED_BASE["tests/test_calc.py"],
}

ATTACKS: dict[str, Attack] = {
    # ---------------------------------------------------------------- the plan
    "assay-toml-test-command": Attack(
        PY_BASE,
        {
            "assay.toml": """
            [commands]
            test = "python3 -c \\"print('2 passed')\\""
        """
        },
    ),
    "pyproject-skips-tests": Attack(
        PY_BASE,
        {
            "pyproject.toml": PY_BASE["pyproject.toml"]
            + """
            [tool.assay]
            require_tests = false
            skip = ["test"]
        """
        },
    ),
    "makefile-recipe-echoes": Attack(
        {
            **PY_BASE,
            "pyproject.toml": '[project]\nname = "calc"\nversion = "0"\n',
            "Makefile": ".PHONY: test\ntest:\n\tpython3 -m pytest -q tests\n",
        },
        {"Makefile": '.PHONY: test\ntest:\n\t@echo "# pass 2"; echo "2 passed"\n'},
    ),
    "package-json-script-edited": Attack(
        {
            **NODE_TEST_BASE,
            "package.json": """
                {"name": "calc", "version": "1.0.0",
                 "scripts": {"test": "npm run unit", "unit": "node --test"}}
            """,
        },
        {
            "package.json": """
                {"name": "calc", "version": "1.0.0",
                 "scripts": {"test": "npm run unit", "unit": "echo '2 passed'"}}
            """
        },
    ),
    # ---------------------------------------------------------------- runner configuration
    "dot-pytest-ini-plugin": Attack(
        PY_BASE, {".pytest.ini": "[pytest]\naddopts = -p forge\n", "forge.py": FORGE_PLUGIN}
    ),
    "pytest-toml-plugin": Attack(
        PY_BASE,
        {"pytest.toml": '[pytest]\naddopts = ["-p", "forge"]\n', "forge.py": FORGE_PLUGIN},
    ),
    "django-style-tests-py": Attack(
        {
            **{k: v for k, v in PY_BASE.items() if not k.startswith("tests/")},
            "pyproject.toml": """
                [project]
                name = "calc"
                version = "0"

                [tool.pytest.ini_options]
                python_files = ["tests.py", "test_*.py"]
            """,
            "app/__init__.py": "",
            "app/tests.py": PY_BASE["tests/test_calc.py"],
        },
        {"app/tests.py": PY_TESTS_PASSING},
    ),
    "npmrc-script-shell": Attack(
        {
            **NODE_TEST_BASE,
            "package.json": '{"name": "calc", "version": "1.0.0", "scripts": {"test": "node --test"}}',
        },
        {".npmrc": "script-shell=./fake-shell\n", "fake-shell": FAKE_PASS},
        executable=("fake-shell",),
    ),
    "node-test-dash-file": Attack(
        {
            "calc.js": NODE_TEST_BASE["calc.js"],
            "package.json": '{"name": "calc", "version": "1.0.0", "scripts": {"test": "node --test"}}',
            "calc-test.js": NODE_TEST_BASE["test/calc.test.js"].replace("../calc", "./calc"),
        },
        {
            "calc-test.js": """
            const test = require('node:test');

            test('add', () => {});
        """
        },
    ),
    "cargo-config-runner": Attack(
        RUST_BASE,
        {
            ".cargo/config.toml": "[target.'cfg(all())']\nrunner = \"./fake-runner\"\n",
            "fake-runner": FAKE_PASS,
        },
        executable=("fake-runner",),
    ),
    "base-config-names-a-fixture": Attack(
        {
            **PY_BASE,
            "assay.toml": 'protect = ["fixtures/**"]\n',
            "fixtures/sum.txt": "4\n",
            "tests/test_calc.py": """
                from pathlib import Path

                from calc import add


                def test_add():
                    expected = int(Path("fixtures/sum.txt").read_text())
                    assert add(2, 2) == expected
            """,
        },
        {"fixtures/sum.txt": "0\n"},
    ),
    # The base keeps its suite under names of its own (`testpaths`, `python_files`), which
    # no default pattern protects: the change rewrote the failing test and passed.
    "suite-under-names-of-its-own": Attack(
        {
            "pyproject.toml": """
                [project]
                name = "calc"
                version = "0"

                [tool.pytest.ini_options]
                testpaths = ["checks"]
                python_files = ["check_*.py"]
            """,
            "calc.py": "def add(a, b):\n    return a - b\n",
            "checks/check_calc.py": """
                from calc import add


                def test_add():
                    assert add(2, 2) == 4
            """,
        },
        {
            "checks/check_calc.py": """
                from calc import add


                def test_add():
                    assert add(2, 2) in (0, 4)
            """,
        },
    ),
    # The base's tests assert through a helper module of the package's own (pandas keeps
    # `pandas/_testing/`): the change made the helper assert nothing, and passed.
    "test-helper-neutered": Attack(
        {
            "pyproject.toml": '[project]\nname = "calc"\nversion = "0"\n',
            "calc/__init__.py": "def add(a, b):\n    return a - b\n",
            "calc/_testing/__init__.py": """
                def assert_equal(left, right):
                    assert left == right, f"{left!r} != {right!r}"
            """,
            "tests/test_calc.py": """
                from calc import add
                from calc._testing import assert_equal


                def test_add():
                    assert_equal(add(2, 2), 4)
            """,
        },
        {"calc/_testing/__init__.py": "def assert_equal(left, right):\n    pass\n"},
    ),
    # The base's test reads its cases from a fixture at the root: the change wrote the wrong
    # code's answer into it, and passed.
    "fixture-data-edited": Attack(
        {
            "pyproject.toml": '[project]\nname = "calc"\nversion = "0"\n',
            "calc.py": "def add(a, b):\n    return a - b\n",
            "fixtures/add_cases.json": "[[2, 2, 4], [1, 0, 1]]\n",
            "tests/test_calc.py": """
                import json

                from calc import add


                def test_add():
                    for a, b, total in json.load(open("fixtures/add_cases.json")):
                        assert add(a, b) == total
            """,
        },
        {"fixtures/add_cases.json": "[[2, 2, 0], [1, 0, 1]]\n"},
    ),
    # The same, where the data lies in no directory of a usual name and the test joins its
    # path from pieces (a red team's next round).
    "named-test-data-edited": Attack(
        {
            "pyproject.toml": '[project]\nname = "calc"\nversion = "0"\n',
            "calc.py": "def add(a, b):\n    return a - b\n",
            "data/add_cases.json": "[[2, 2, 4], [1, 0, 1]]\n",
            "tests/test_calc.py": """
                import json
                import pathlib

                from calc import add

                CASES = pathlib.Path(__file__).parent.parent / "data" / "add_cases.json"


                def test_add():
                    for a, b, total in json.loads(CASES.read_text()):
                        assert add(a, b) == total
            """,
        },
        {"data/add_cases.json": "[[2, 2, 0], [1, 0, 1]]\n"},
    ),
    "globbed-test-data-edited": Attack(
        {
            "pyproject.toml": '[project]\nname = "calc"\nversion = "0"\n',
            "calc.py": "def add(a, b):\n    return a - b\n",
            "cases/two.json": "[2, 2, 4]\n",
            "cases/one.json": "[1, 0, 1]\n",
            "tests/test_calc.py": """
                import json
                import pathlib

                from calc import add

                CASES = (pathlib.Path(__file__).parent.parent / "cases").glob("*.json")


                def test_add():
                    for path in CASES:
                        a, b, total = json.loads(path.read_text())
                        assert add(a, b) == total
            """,
        },
        {"cases/two.json": "[2, 2, 0]\n"},
    ),
    # A red team's: a root `hypothesis` of the change's own, whose `@given` gives the test the
    # one input the broken `add` passes for (the real one, installed, finds the bug).
    "shadowed-test-dependency": Attack(
        {
            **PY_BASE,
            "pyproject.toml": PY_BASE["pyproject.toml"] + '\n        pythonpath = ["."]\n',
            "tests/test_calc.py": """
                from hypothesis import given, strategies as st

                from calc import add


                @given(st.integers(), st.integers())
                def test_add(a, b):
                    assert add(a, b) == a + b
            """,
        },
        {
            "hypothesis/__init__.py": """
                import inspect
                import os
                import sys

                __path__ = [os.path.dirname(__file__)] + [
                    os.path.join(p, "hypothesis") for p in sys.path if p.endswith("site-packages")
                ]

                from . import core, strategies


                def is_hypothesis_test(test):
                    return False


                def given(*strategies, **named):
                    def wrap(test):
                        arity = len(inspect.signature(test).parameters)
                        test.__defaults__ = tuple([7] + [0] * (arity - 1))
                        return test

                    return wrap
            """,
            "hypothesis/strategies.py": "def integers(*args, **kwargs):\n    return None\n",
            "hypothesis/core.py": "pytest_shows_exceptiongroups = True\nrunning_under_pytest = False\n",
        },
        expected=Status.INDETERMINATE,
    ),
    # ---------------------------------------------------------------- rewrites before the tests
    "build-step-rewrites-tests": Attack(
        {**PY_BASE, "Makefile": "build:\n\tpython3 gen.py\n", "gen.py": "print('generated')\n"},
        {"gen.py": BUILD_REWRITES_TESTS},
    ),
    "code-under-test-rewrites-a-later-test": Attack(
        {
            **PY_BASE,
            "calc.py": """
                def add(a, b):
                    return a - b


                def mul(a, b):
                    return a * b
            """,
            "tests/test_calc.py": """
                from calc import mul


                def test_mul():
                    assert mul(2, 3) == 6
            """,
            "tests/test_later.py": """
                from calc import add


                def test_add():
                    assert add(2, 2) == 4
            """,
        },
        {"calc.py": CALC_REWRITES_A_LATER_TEST},
    ),
    # Locked against the sandbox's uid, the test cannot be rewritten: the install fails.
    # ---------------------------------------------------------------- the checkers' settings
    "mypy-ini-ignores-errors": Attack(
        TYPED_BASE, {"mypy.ini": "[mypy]\nfiles = calc.py\nignore_errors = True\n"}
    ),
    "pyproject-mypy-override-ignores-errors": Attack(
        TYPED_BASE,
        {
            "pyproject.toml": TYPED_BASE["pyproject.toml"]
            + """
            [[tool.mypy.overrides]]
            module = "calc"
            ignore_errors = true
        """
        },
    ),
    "ruff-toml-excludes-the-code": Attack(
        LINTED_BASE, {"ruff.toml": 'line-length = 100\nextend-exclude = ["calc.py"]\n'}
    ),
    # The base's tests pass; the change adds a module nothing imports, broken. The plan is
    # the base's, and its compileall had named the base's modules one by one.
    "new-module-with-a-syntax-error": Attack(
        {**PY_BASE, "calc.py": "\n        def add(a, b):\n            return a + b\n"},
        {"util.py": "def broken(:\n    pass\n"},
    ),
    "mypy-turned-off-in-the-file": Attack(
        TYPED_BASE,
        {"calc.py": "\n        # mypy: ignore-errors" + TYPED_BASE["calc.py"]},
        expected=Status.INDETERMINATE,
    ),
    # A CI step names pytest's settings by `-c`, a file no default protects: the change
    # put a right copy of the module first on the path there (VERIFIED, the bug kept).
    "pytest-settings-named-by-c": Attack(
        {
            **PY_BASE,
            "pyproject.toml": '[project]\nname = "calc"\nversion = "0"\n',
            ".github/workflows/ci.yml": """
                name: ci
                on: [push]
                jobs:
                  test:
                    runs-on: ubuntu-latest
                    steps:
                      - uses: actions/checkout@v4
                      - run: pip install pytest
                      - run: python -m pytest -c ci/testing.ini
            """,
            "ci/testing.ini": "[pytest]\ntestpaths = ../tests\n",
        },
        {
            "ci/testing.ini": "[pytest]\ntestpaths = ../tests\npythonpath = ../shadow\n",
            "shadow/calc.py": "def add(a, b):\n    return a + b\n",
        },
    ),
    # The same file named by the `PYTEST_ADDOPTS` a CI step sets, not by a word of its
    # command: the right copy first on the path there was VERIFIED too.
    "pytest-settings-named-by-pytest-addopts": Attack(
        {
            **PY_BASE,
            "pyproject.toml": '[project]\nname = "calc"\nversion = "0"\n',
            ".github/workflows/ci.yml": """
                name: ci
                on: [push]
                jobs:
                  test:
                    runs-on: ubuntu-latest
                    steps:
                      - uses: actions/checkout@v4
                      - run: pip install pytest
                      - env:
                          PYTEST_ADDOPTS: -c ci/testing.ini
                        run: python -m pytest
            """,
            "ci/testing.ini": "[pytest]\ntestpaths = ../tests\n",
        },
        {
            "ci/testing.ini": "[pytest]\ntestpaths = ../tests\npythonpath = ../shadow\n",
            "shadow/calc.py": "def add(a, b):\n    return a + b\n",
        },
    ),
    # pytest reads more arguments from a file a CI step names by `@`: the change put the
    # right copy first on the path there (`-o pythonpath=shadow`).
    "pytest-arguments-read-from-a-response-file": Attack(
        {
            **PY_BASE,
            "pyproject.toml": '[project]\nname = "calc"\nversion = "0"\n',
            ".github/workflows/ci.yml": """
                name: ci
                on: [push]
                jobs:
                  test:
                    runs-on: ubuntu-latest
                    steps:
                      - uses: actions/checkout@v4
                      - run: pip install pytest
                      - run: python -m pytest @ci/pytest.args
            """,
            "ci/pytest.args": "tests\n",
        },
        {
            "ci/pytest.args": "-o\npythonpath=shadow\ntests\n",
            "shadow/calc.py": "def add(a, b):\n    return a + b\n",
        },
    ),
    # The response file is the base's, and it names pytest's settings by `-c`: the change
    # put the right copy first on the path in those settings.
    "pytest-settings-named-in-a-response-file": Attack(
        {
            **PY_BASE,
            "pyproject.toml": '[project]\nname = "calc"\nversion = "0"\n',
            ".github/workflows/ci.yml": """
                name: ci
                on: [push]
                jobs:
                  test:
                    runs-on: ubuntu-latest
                    steps:
                      - uses: actions/checkout@v4
                      - run: pip install pytest
                      - run: python -m pytest @ci/pytest.args
            """,
            "ci/pytest.args": "-c\nci/testing.ini\n",
            "ci/testing.ini": "[pytest]\ntestpaths = ../tests\n",
        },
        {
            "ci/testing.ini": "[pytest]\ntestpaths = ../tests\npythonpath = ../shadow\n",
            "shadow/calc.py": "def add(a, b):\n    return a + b\n",
        },
    ),
    # The same file named by `-c` in a step that runs in a directory of its own: the
    # name is the directory's, `pkg/ci/testing.ini`.
    "pytest-settings-named-by-c-in-a-working-directory": Attack(
        {
            **{f"pkg/{path}": text for path, text in PY_BASE.items()},
            "pkg/pyproject.toml": '[project]\nname = "calc"\nversion = "0"\n',
            ".github/workflows/ci.yml": """
                name: ci
                on: [push]
                jobs:
                  test:
                    runs-on: ubuntu-latest
                    steps:
                      - uses: actions/checkout@v4
                      - run: pip install pytest
                      - working-directory: pkg
                        run: python -m pytest -c ci/testing.ini
            """,
            "pkg/ci/testing.ini": "[pytest]\ntestpaths = ../tests\n",
        },
        {
            "pkg/ci/testing.ini": "[pytest]\ntestpaths = ../tests\npythonpath = ../shadow\n",
            "pkg/shadow/calc.py": "def add(a, b):\n    return a + b\n",
        },
    ),
    # mypy reads a `# type: ignore` before the first statement, a comment after it or
    # not, as `ignore_errors` for the file: it was VERIFIED with the base's type error.
    "mypy-turned-off-by-an-ignore-with-a-reason": Attack(
        TYPED_BASE,
        {"calc.py": "\n        # type: ignore  # vendored" + TYPED_BASE["calc.py"]},
        expected=Status.INDETERMINATE,
    ),
    "install-setup-py-rewrites-tests": Attack(
        UNITTEST_BASE,
        {"setup.py": SETUP_REWRITES_TESTS},
        install=True,
        expected=Status.INDETERMINATE,
    ),
}


def attacked_repo(root: Path, attack: Attack) -> Path:
    """A repository whose HEAD~1 is the base and whose HEAD is the change."""
    commit_all(write_dedented(root, attack.base), "base")
    write_dedented(root, attack.change)
    for rel in attack.executable:
        path = root / rel
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    for rel in attack.deleted:
        (root / rel).unlink()
    return commit_all(root, "change")


def protected(repo: Path, attack: Attack, sandbox: str = "auto") -> Report:
    options = VerifyOptions(base="HEAD~1", protect=True, install=attack.install, sandbox=sandbox)
    return assay.verify(repo, options)


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_an_attack_on_what_runs_is_never_verified_under_protect(tmp_path: Path, name: str) -> None:
    attack = ATTACKS[name]
    repo = attacked_repo(tmp_path / "repo", attack)
    report = protected(repo, attack)
    assert report.status is not Status.VERIFIED, report.to_dict()
    assert report.status is attack.expected, (report.note, report.output())


def test_the_change_is_verified_by_the_base_plan_once_it_is_fixed(tmp_path: Path) -> None:
    """The same protection passes an honest fix: the base's plan runs the change's code."""
    repo = attacked_repo(
        tmp_path / "repo",
        Attack(PY_BASE, {"calc.py": "def add(a, b):\n    return a + b\n"}),
    )
    report = protected(repo, Attack(PY_BASE, {}))
    assert report.status is Status.VERIFIED, report.note


def test_the_plan_under_protect_is_the_base_plan_run_in_the_workspace(tmp_path: Path) -> None:
    attack = ATTACKS["assay-toml-test-command"]
    repo = attacked_repo(tmp_path / "repo", attack)
    report = protected(repo, attack)
    plan = report.plan
    assert plan["root"] == str(repo.resolve())
    tests = [c for c in plan["checks"] if c["kind"] == Kind.TEST.value]
    assert tests and all("print" not in " ".join(c["argv"]) for c in tests), tests
    assert all(not os.path.isabs(c["cwd"]) for c in plan["checks"])
    # The change's own plan is the forged one: the base's is what ran.
    own = make_plan(repo, VerifyOptions())
    assert any("print" in " ".join(c.argv) for c in own.checks)


@pytest.mark.parametrize(
    ("name", "after"),
    [
        ("build-step-rewrites-tests", "the build stage"),
        ("install-setup-py-rewrites-tests", "the install steps"),
    ],
)
def test_without_a_uid_to_lock_against_a_rewrite_is_put_back_before_the_tests(
    tmp_path: Path, name: str, after: str
) -> None:
    """The `local` backend runs checks as this process's user: nothing can be locked
    against it, so the rewrite happens, and is undone before the tests run, and shown."""
    attack = ATTACKS[name]
    repo = attacked_repo(tmp_path / "repo", attack)
    report = protected(repo, attack, sandbox="local")
    assert report.status is Status.FAILED, (report.note, report.output())
    rewritten = report.to_dict()["extra"]["rewritten"]
    assert {"after": after, "restored": ["tests/test_calc.py"], "removed": []} in rewritten
    assert f"rewritten after {after}: tests/test_calc.py" in report.note


def test_under_bubblewrap_a_protected_file_cannot_be_rewritten(tmp_path: Path) -> None:
    """As root, checks run as a uid of their own: protected files are root's and
    read-only to it, so the change's build step fails instead of rewriting the test."""
    if os.geteuid() != 0:
        pytest.skip("checks run as a uid of their own only when assay runs as root")
    attack = ATTACKS["build-step-rewrites-tests"]
    repo = attacked_repo(tmp_path / "repo", attack)
    report = protected(repo, attack, sandbox="bwrap")
    assert report.status is Status.FAILED
    (build,) = [e for e in report.checks if e.check.kind is Kind.BUILD and "make" in e.check.name]
    assert "PermissionError" in build.reason, build.reason
    assert "rewritten" not in report.to_dict()["extra"]


# --------------------------------------------------------------------------- without --protect

WITHOUT_PROTECT = {
    "assert-true": (
        Attack(PY_BASE, {"tests/test_calc.py": PY_TESTS_PASSING}),
        "assertion_weakened",
    ),
    "test-file-deleted": (
        Attack(
            {**PY_BASE, "tests/test_other.py": "def test_other():\n    assert 1 + 1 == 2\n"},
            {},
            deleted=("tests/test_calc.py",),
        ),
        "protected_deleted",
    ),
}


@pytest.mark.parametrize("name", sorted(WITHOUT_PROTECT))
def test_tampering_found_with_base_alone_is_indeterminate_and_shown(
    tmp_path: Path, name: str
) -> None:
    attack, signal = WITHOUT_PROTECT[name]
    repo = attacked_repo(tmp_path / "repo", attack)
    report = assay.verify(repo, VerifyOptions(base="HEAD~1"))
    assert report.status is Status.INDETERMINATE, (report.note, report.output())
    assert "tests/test_calc.py" in report.note and signal in report.note
    done = assay_cli("verify", str(repo), "--base", "HEAD~1", "--no-cache", timeout=120)
    no_traceback(done)
    assert done.returncode == Status.INDETERMINATE.exit_code, done.stdout
    assert "VERIFIED" not in done.stdout.replace("UNVERIFIED", ""), done.stdout
    shown = [line for line in done.stdout.splitlines() if line.startswith("tampering:")]
    assert any(signal in line and "tests/test_calc.py" in line for line in shown), done.stdout

"""`hatch run SCRIPT` as the commands the script runs: environments, a script that runs
another, `{args}` with and without a default, a command whose failure is ignored, and a
placeholder assay cannot fill."""

from __future__ import annotations

import shlex

import pytest

from assay.discovery.hatch_scripts import read_scripts, script_commands

PYPROJECT = """
[tool.hatch.envs.default.scripts]
unittest = "pytest {args:tests}"
test-cov = "coverage run -m pytest {args:tests}"
cov-report = ["- coverage combine", "coverage report"]
cov = ["test-cov", "cov-report"]
check = "flake8 sqlparse/"
test = ["check", "unittest"]
here = "pytest {root}/tests"
loop = "loop"
masked = "pytest tests || true"
both = "flake8 src && pytest {args:tests}"

[tool.hatch.envs.types.scripts]
check = "mypy --install-types --non-interactive {args:sqlparse tests}"

[tool.hatch.envs.lint]
dependencies = ["ruff"]
"""
SCRIPTS = read_scripts(PYPROJECT)


@pytest.mark.parametrize(
    ("line", "commands"),
    [
        ("hatch run cov", [["coverage", "run", "-m", "pytest", "tests"], ["coverage", "report"]]),
        ("hatch run test", [["flake8", "sqlparse/"], ["pytest", "tests"]]),
        (
            "hatch run unittest tests/test_a.py -k 'a b'",
            [["pytest", "tests/test_a.py", "-k", "a b"]],
        ),
        (
            "hatch run types:check",
            [["mypy", "--install-types", "--non-interactive", "sqlparse", "tests"]],
        ),
        # An environment inherits the default's scripts.
        ("hatch run lint:unittest", [["pytest", "tests"]]),
        ("hatch run here", []),
        ("hatch run loop", []),
        # The shell makes it succeed: no check; `&&` runs two.
        ("hatch run masked", []),
        ("hatch run both", [["flake8", "src"], ["pytest", "tests"]]),
        # Not a script: a command hatch runs in its environment, read as any other.
        ("hatch run flake8", None),
        ("hatch build", None),
        ("hatch run", None),
    ],
)
def test_a_script_is_the_commands_it_runs(line: str, commands: list[list[str]] | None) -> None:
    assert script_commands(shlex.split(line), SCRIPTS) == commands


@pytest.mark.parametrize(
    "text", ["not toml [", "[tool]\nhatch = 5\n", "[tool.hatch.envs]\na = 1\n"]
)
def test_a_malformed_table_has_no_scripts(text: str) -> None:
    assert read_scripts(text) == {}

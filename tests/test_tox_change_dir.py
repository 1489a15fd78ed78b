"""tox runs an environment's commands in its `change_dir` (`changedir`): typing_extensions
4.16's `changedir = src` then `python -m unittest discover` finds its tests in src/. Run
from the root, the same command found none, and the tree was INDETERMINATE."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assay.plan import plan_repository
from assay.tools.tox_config import read_tox
from tests.cli import assay
from tests.repos import write

MODULE = "def double(x):\n    return x * 2\n"
TESTS = (
    "import unittest\n\nfrom mod import double\n\n\n"
    "class T(unittest.TestCase):\n    def test_double(self):\n"
    "        self.assertEqual(double(2), 4)\n"
)


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ("changedir = src", "src"),
        ("change_dir = {toxinidir}/src", "src"),
        ("changedir = {toxinidir}", ""),
        ("changedir = ./src/../tests/", "tests"),
        ("", ""),
        ("changedir = {envtmpdir}", None),
        ("changedir = /tmp", None),
        ("changedir = ../elsewhere", None),
    ],
)
def test_change_dir_is_read_relative_to_the_root(setting: str, expected: str | None) -> None:
    config, _ = read_tox("tox.ini", f"[testenv]\n{setting}\ncommands = pytest\n")
    assert config is not None
    (env,) = config.envs
    assert env.change_dir == expected


def test_change_dir_in_native_toml() -> None:
    config, _ = read_tox(
        "tox.toml", '[env_run_base]\nchange_dir = "src"\ncommands = [["pytest"]]\n'
    )
    assert config is not None
    assert [e.change_dir for e in config.envs] == ["src"]


def test_a_command_runs_where_change_dir_says(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "tox.ini": "[tox]\nenvlist = py311\n[testenv]\nchangedir = src\n"
            "commands = python -m unittest discover\n",
            "src/mod.py": MODULE,
        },
    )
    (test,) = [c for c in plan_repository(tmp_path).checks if c.kind.value == "test"]
    assert (test.argv[-2:], test.cwd) == (("unittest", "discover"), "src")


def test_a_directory_only_tox_makes_drops_the_command(tmp_path: Path) -> None:
    write(tmp_path, {"tox.ini": "[testenv]\nchangedir = {envtmpdir}\ncommands = pytest\n"})
    plan = plan_repository(tmp_path)
    assert any("only tox makes (change_dir)" in d.reason for d in plan.dropped), plan.dropped


@pytest.mark.parametrize(("doubled", "status"), [("x * 2", "VERIFIED"), ("x * 3", "FAILED")])
def test_tests_found_from_change_dir_decide_the_verdict(
    tmp_path: Path, doubled: str, status: str
) -> None:
    repo = write(
        tmp_path / "repo",
        {
            "tox.ini": "[tox]\nenvlist = py311\n[testenv]\nchangedir = src\n"
            "commands = python -m unittest discover\n",
            "src/mod.py": MODULE.replace("x * 2", doubled),
            "src/test_mod.py": TESTS,
        },
    )
    done = assay("verify", "--json", "--no-cache", str(repo), timeout=300)
    assert "Traceback" not in done.stderr, done.stderr  # a failing test's is in the report
    report = json.loads(done.stdout)
    assert report["status"] == status, report["note"]
    (unittest,) = [c for c in report["checks"] if c["name"] == "unittest"]
    assert unittest["tests"]["executed"] == 1


def test_the_projects_interpreter_is_named_from_change_dir(tmp_path: Path) -> None:
    """With the project's own virtualenv (as `--install` makes it), its interpreter is a path
    from the root, `.venv/bin/python`: run in src/, that path named nothing and the check was
    UNVERIFIED for want of Python."""
    repo = write(
        tmp_path / "repo",
        {
            "tox.ini": "[tox]\nenvlist = py311\n[testenv]\nchangedir = src\n"
            "commands = python -m unittest discover\n",
            "src/mod.py": MODULE,
            "src/test_mod.py": TESTS,
        },
    )
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", repo / ".venv"], check=True)
    (test,) = [c for c in plan_repository(repo).checks if c.kind.value == "test"]
    assert (test.argv[0], test.cwd) == ("../.venv/bin/python", "src")
    done = assay("verify", "--json", "--no-cache", str(repo), timeout=300)
    report = json.loads(done.stdout)
    assert report["status"] == "VERIFIED", report["note"]


#: boltons 26.2.0's tox: its doctests run from `.tox`, tox's own work directory.
TOX_IN_WORK_DIR = (
    "[tox]\nenvlist = py3\n\n[testenv]\nchangedir = {setting}\n"
    "commands = pytest --doctest-modules {{env_site_packages_dir}}/calc {{tox_root}}/tests\n"
)
DOUBLE = 'def double(x):\n    """\n    >>> double(2)\n    {result}\n    """\n    return x * 2\n'


def doctested(root: Path, setting: str = ".tox", result: str = "4") -> Path:
    return write(
        root,
        {
            "calc/__init__.py": DOUBLE.format(result=result),
            "tests/test_calc.py": "def test_nothing():\n    pass\n",
            "tox.ini": TOX_IN_WORK_DIR.format(setting=setting),
        },
    )


@pytest.mark.parametrize("setting", [".tox", "{toxworkdir}", "empty", "out/run"])
def test_a_change_dir_tox_makes_runs_the_command_from_the_root(
    tmp_path: Path, setting: str
) -> None:
    """tox makes a change_dir the tree does not hold, empty, before it runs the commands;
    they name the tree by tox's root. The command was dropped as running somewhere the
    tree does not hold, and a wrong docstring example was VERIFIED by a bare pytest."""
    plan = plan_repository(doctested(tmp_path, setting))
    (test,) = [c for c in plan.checks if c.kind.value == "test"]
    assert (test.argv[3:5], test.cwd) == (("--doctest-modules", "calc"), ".")
    assert "change_dir" in test.reason and "from the root" in test.reason


def test_a_developers_tox_work_dir_in_the_tree_is_still_made_by_tox(tmp_path: Path) -> None:
    root = doctested(tmp_path)
    (root / ".tox" / "py3").mkdir(parents=True)
    (test,) = [c for c in plan_repository(root).checks if c.kind.value == "test"]
    assert test.cwd == "."


def test_a_command_climbing_out_of_a_made_change_dir_keeps_it(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "tests/test_calc.py": "def test_nothing():\n    pass\n",
            "tox.ini": "[tox]\nenvlist = py3\n[testenv]\nchangedir = empty\ncommands = pytest ../tests\n",
        },
    )
    plan = plan_repository(tmp_path)
    assert any("runs in empty/" in d.reason for d in plan.dropped), plan.dropped


@pytest.mark.parametrize(("result", "status"), [("4", "VERIFIED"), ("5", "FAILED")])
def test_doctests_run_from_toxs_work_dir_decide_the_verdict(
    tmp_path: Path, result: str, status: str
) -> None:
    repo = doctested(tmp_path / "repo", result=result)
    done = assay("verify", "--json", "--no-cache", str(repo), timeout=300)
    assert "Traceback" not in done.stderr, done.stderr
    report = json.loads(done.stdout)
    assert report["status"] == status, report["note"]
    (pytest_check,) = [c for c in report["checks"] if c["name"] == "pytest"]
    assert "--doctest-modules" in pytest_check["argv"]

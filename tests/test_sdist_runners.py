"""sqlparse 0.5.1's sdist: a Makefile `test: tox` with no tox.ini in the tree, and CI's
`hatch run flake8`, which hatch, offline in the sandbox, cannot make an environment for.
Neither is a check of this tree as written: the tox run is left out for the tests the tree
does hold, and the flake8 runs from the project's environment, not through hatch."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.discovery.command_lines import core_command
from assay.plan import plan_repository
from tests.cli import installed_and_verified
from tests.repos import workflow, write

PYPROJECT = (
    '[project]\nname = "clean"\nversion = "0.1"\n\n'
    "[tool.hatch.envs.default]\ndependencies = ['pytest', 'flake8']\n\n"
    "[tool.hatch.envs.default.scripts]\n"
    "test-cov = 'coverage run -m pytest {args:tests}'\n"
    "cov-report = ['- coverage combine', 'coverage report']\n"
    "cov = ['test-cov', 'cov-report']\n"
)
MAKEFILE = "test:\n\ttox\n"
CLEAN = "def double(x):\n    return 2 * x\n"
TEST = "from clean import double\n\n\ndef test_double():\n    assert double(2) == 4\n"


def sdist_like(root: Path, **more: str) -> Path:
    files = {
        "pyproject.toml": PYPROJECT,
        "Makefile": MAKEFILE,
        ".github/workflows/ci.yml": workflow("hatch run flake8", "hatch run cov"),
        "clean.py": CLEAN,
        "tests/test_clean.py": TEST,
    }
    return write(root, {**files, **more})


def test_a_tox_or_nox_run_without_its_configuration_is_left_out(tmp_path: Path) -> None:
    plan = plan_repository(sdist_like(tmp_path, **{".github/workflows/ci.yml": ""}))
    names = [c.name for c in plan.checks]
    assert "pytest" in names and "make-test" not in names, names
    reasons = {d.what: d.reason for d in plan.dropped}
    assert "the tree has no tox configuration" in reasons["make test"], reasons


def test_a_nox_run_without_a_noxfile_is_left_out(tmp_path: Path) -> None:
    repo = sdist_like(tmp_path, Makefile="test:\n\tnox -s tests\n")
    plan = plan_repository(repo)
    assert "make-test" not in [c.name for c in plan.checks]
    assert "no noxfile.py" in {d.what: d.reason for d in plan.dropped}["make test"]
    write(repo, {"noxfile.py": "import nox\n"})
    assert "make-test" in [c.name for c in plan_repository(repo).checks]


@pytest.mark.parametrize(
    "config",
    [
        {"tox.ini": "[tox]\nenvlist = py\n"},
        {"setup.cfg": "[tox:tox]\nenvlist = py\n"},
        {"pyproject.toml": PYPROJECT + "\n[tool.tox]\nenv_list = ['py']\n"},
    ],
    ids=["tox.ini", "setup.cfg", "pyproject.toml"],
)
def test_a_tox_run_with_its_configuration_stays(tmp_path: Path, config: dict[str, str]) -> None:
    names = [c.name for c in plan_repository(sdist_like(tmp_path, **config)).checks]
    assert "make-test" in names, names


def test_a_tox_run_that_names_its_configuration_stays(tmp_path: Path) -> None:
    repo = sdist_like(tmp_path, Makefile="test:\n\ttox -c ci/tox.ini\n")
    assert "make-test" in [c.name for c in plan_repository(repo).checks]


def test_a_hatch_script_ci_runs_is_the_commands_it_runs(tmp_path: Path) -> None:
    """sqlparse's `hatch run cov`: `test-cov` (`coverage run -m pytest {args:tests}`), then
    `cov-report`, whose `coverage combine` ignores its failure and `coverage report` is
    no check."""
    (test,) = [c for c in plan_repository(sdist_like(tmp_path)).checks if c.kind.value == "test"]
    assert test.name == "pytest" and test.argv[-3:-2] == ("tests",), test.argv
    assert "hatch" not in test.argv and ".github/workflows/ci.yml" in str(test.source)
    # Cited as CI writes it, with what it stands for.
    assert "runs: hatch run cov (it runs: coverage run -m pytest tests)" in test.reason, test


def test_a_linter_run_through_an_environment_manager_runs_directly(tmp_path: Path) -> None:
    (lint,) = [c for c in plan_repository(sdist_like(tmp_path)).checks if c.kind.value == "lint"]
    assert lint.argv[-1:] == ("flake8",) and "hatch" not in lint.argv, lint.argv
    assert core_command(["FOO=1", "uv", "run", "tox", "-e", "py"]) == ["tox", "-e", "py"]


@pytest.mark.parametrize(
    ("code", "status"), [(CLEAN, "VERIFIED"), ("import os\n" + CLEAN, "FAILED")]
)
def test_sqlparse_like_sdist_is_verified_for_real(tmp_path: Path, code: str, status: str) -> None:
    report = installed_and_verified(sdist_like(tmp_path / "repo", **{"clean.py": code}), tmp_path)
    assert report["status"] == status, report["note"]
    verdicts = {c["name"]: c["verdict"] for c in report["checks"]}
    lint = "pass" if status == "VERIFIED" else "fail"
    assert verdicts == {"compileall": "pass", "flake8-lint": lint, "pytest": "pass"}, verdicts

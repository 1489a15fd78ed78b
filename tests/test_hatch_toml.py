"""hatch.toml, hatch's own configuration file, is read as pyproject.toml's `[tool.hatch]`.

hatch-vcs 0.5.0 keeps its environments there alone: CI's `hatch run lint:all` runs
`black --check --diff .` and `mypy --install-types --non-interactive hatch_vcs tests`.
Unread, black was left out and mypy ran on `hatch_vcs` only, as its configuration
implied: a type error in the tests, which CI fails, was VERIFIED."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.discovery.hatch_scripts import read_scripts
from assay.plan import plan_repository
from assay.tools.python_requirements import hatch_requirements
from tests.cli import verified_json
from tests.repos import workflow, write

HATCH_TOML = """\
[envs.default]
dependencies = ["pytest"]
[envs.default.scripts]
test = "pytest {args:tests}"

[envs.lint]
detached = true
dependencies = ["mypy>=0.991"]
[envs.lint.scripts]
typing = "mypy {args:calc tests}"
all = ["typing"]
"""
TYPED_TEST = "from calc import double\n\n\ndef test_double() -> None:\n    assert double(2) == 4\n"


def project(root: Path, test: str = TYPED_TEST) -> Path:
    return write(
        root,
        {
            "pyproject.toml": "[project]\nname = 'calc'\nversion = '1'\n\n[tool.mypy]\nstrict = true\n",
            "hatch.toml": HATCH_TOML,
            "calc/__init__.py": "def double(x: int) -> int:\n    return x * 2\n",
            "tests/test_calc.py": test,
            ".github/workflows/ci.yml": workflow("hatch run lint:all", "hatch run test"),
        },
    )


def test_hatch_tomls_scripts_are_read_and_win_over_pyprojects() -> None:
    pyproject = '[tool.hatch.envs.lint.scripts]\ntyping = "mypy calc"\nstyle = "ruff check"\n'
    scripts = read_scripts(pyproject, HATCH_TOML)
    assert scripts["lint"]["typing"] == ("mypy {args:calc tests}",)
    assert "style" not in scripts["lint"], "hatch.toml's environment is hatch's, whole"
    assert scripts["default"]["test"] == ("pytest {args:tests}",)


def test_a_script_ci_runs_from_hatch_toml_is_planned(tmp_path: Path) -> None:
    checks = {c.name: c for c in plan_repository(project(tmp_path)).checks}
    assert checks["mypy"].argv[-2:] == ("calc", "tests"), checks["mypy"].argv
    assert "ci.yml:7 states it: mypy calc tests" in checks["mypy"].reason
    test = next(c for c in checks.values() if c.kind.value == "test")
    assert "hatch run test" in test.reason, test.reason


def test_hatch_tomls_environments_declare_what_the_checks_need(tmp_path: Path) -> None:
    declared = hatch_requirements(project(tmp_path))
    assert declared is not None
    assert (declared.file, declared.args) == ("hatch.toml", ("pytest", "mypy>=0.991"))


def test_environments_that_are_no_table_declare_nothing(tmp_path: Path) -> None:
    """`[tool.hatch] envs = [1]` is no table of environments: nothing, not a crash."""
    write(tmp_path, {"pyproject.toml": '[project]\nname = "x"\n\n[tool.hatch]\nenvs = [1]\n'})
    assert hatch_requirements(tmp_path) is None


@pytest.mark.slow
@pytest.mark.parametrize(
    ("test", "status"),
    [(TYPED_TEST, "VERIFIED"), (TYPED_TEST.replace("-> None", ""), "FAILED")],
    ids=["typed", "untyped"],
)
def test_a_type_error_in_the_tests_fails_as_ci_fails(
    tmp_path: Path, test: str, status: str
) -> None:
    report = verified_json(project(tmp_path / "repo", test), tmp_path / "state")
    assert report["status"] == status, report["note"]
    (mypy,) = [c for c in report["checks"] if c["name"] == "mypy"]
    assert mypy["argv"][-2:] == ["calc", "tests"]

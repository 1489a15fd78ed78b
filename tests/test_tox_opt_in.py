"""A tox environment that `env_list` leaves out runs only when asked for by name: a bare
`tox` (and tox-gh-actions' mapping) runs the list. semver 3.1.2's `[testenv:mypy]` is in
neither its env_list nor its CI, and mypy fails there on an optional backend's import the
maintainers never type-check; assay ran it and failed a tree whose gate passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.plan import plan_repository
from tests.repos import write_dedented

TOX = """
    [tox]
    envlist = checks, py311

    [testenv]
    commands = pytest

    [testenv:checks]
    commands = ruff check src

    [testenv:typing]
    commands = mypy src
"""


def planned(root: Path) -> dict[str, tuple[str, ...]]:
    return {c.kind.value: c.argv for c in plan_repository(root).checks}


def test_an_environment_env_list_leaves_out_is_not_run(tmp_path: Path) -> None:
    write_dedented(tmp_path, {"tox.ini": TOX, "src/pkg/__init__.py": ""})
    plan = plan_repository(tmp_path)
    assert [c.argv for c in plan.checks if c.kind.value == "typecheck"] == []
    assert planned(tmp_path)["lint"] == ("ruff", "check", "src")
    (why,) = [d.reason for d in plan.dropped if d.what == "tox env typing"]
    assert "env_list leaves it out" in why


@pytest.mark.parametrize(
    "asks",
    [
        {
            ".github/workflows/ci.yml": "on: push\njobs:\n  t:\n    steps:\n      - run: tox -e typing\n"
        },
        {"Makefile": "check:\n\ttox -e checks,typing\n"},
        # tox-gh-actions' mapping, in tox.ini itself.
        {"tox.ini": TOX + "\n[gh-actions]\npython =\n    3.11: py311, typing\n"},
    ],
)
def test_an_environment_ci_or_make_asks_for_is_run(tmp_path: Path, asks: dict[str, str]) -> None:
    write_dedented(tmp_path, {"tox.ini": TOX, "src/pkg/__init__.py": "", **asks})
    assert planned(tmp_path)["typecheck"] == ("mypy", "src")


def test_without_an_env_list_every_environment_is_read(tmp_path: Path) -> None:
    tox = TOX.replace("    [tox]\n    envlist = checks, py311\n", "")
    write_dedented(tmp_path, {"tox.ini": tox, "src/pkg/__init__.py": ""})
    assert planned(tmp_path)["typecheck"] == ("mypy", "src")


def test_a_configured_type_checker_only_an_opt_in_environment_runs_is_not_run(
    tmp_path: Path,
) -> None:
    """`[tool.mypy]` alone implies no gate where CI runs tox and mypy is named only in an
    environment `env_list` leaves out (item 4 of semver's sweep): the maintainers never run
    it, so its findings must not fail their tree."""
    pyproject = '[project]\nname = "pkg"\n\n[tool.mypy]\nstrict = true\n'
    ci = "on: push\njobs:\n  t:\n    steps:\n      - run: tox\n"
    files = {
        "tox.ini": TOX,
        "pyproject.toml": pyproject,
        ".github/workflows/ci.yml": ci,
        "src/pkg/__init__.py": "",
    }
    write_dedented(tmp_path, files)
    plan = plan_repository(tmp_path)
    assert [c.argv for c in plan.checks if c.kind.value == "typecheck"] == []
    assert any("mypy is configured, but" in d.reason for d in plan.dropped)
    # The same environment, asked for by CI, is the gate's.
    (tmp_path / ".github/workflows/ci.yml").write_text(ci + "      - run: tox -e typing\n")
    assert planned(tmp_path)["typecheck"] == ("mypy", "src")


def test_a_lint_environments_type_check_is_a_type_check(tmp_path: Path) -> None:
    """python-dotenv's `[testenv:lint]` runs flake8 and `mypy ... src tests`: read as lints
    by the environment's name, the mypy line was dropped as "not a lint command", and only a
    configuration's `mypy src` ran, so tests/ went unchecked."""
    tox = """
        [tox]
        envlist = lint, py311

        [testenv]
        commands = pytest

        [testenv:lint]
        commands =
            flake8 src tests
            mypy --python-version=3.11 src tests
    """
    write_dedented(tmp_path, {"tox.ini": tox, "src/pkg/__init__.py": ""})
    checks = planned(tmp_path)
    assert checks["lint"] == ("flake8", "src", "tests")
    assert checks["typecheck"] == ("mypy", "--python-version=3.11", "src", "tests")

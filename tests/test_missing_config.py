"""A tool that stopped because the configuration file its command names is not there checked
nothing: no verdict on the code (`assay.missing_config`), and the note names the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.missing_config import missing_config
from tests.cli import assay, assay_env
from tests.repos import git, write


@pytest.mark.parametrize(
    ("output", "argv", "named"),
    [
        # Each as the tool says it (pylint 3, flake8 7, mypy 1, ruff 0.x, pytest 8).
        (
            "The config file ./.pylintrc doesn't exist!",
            ("pylint", "--rcfile=./.pylintrc", "pkg"),
            "./.pylintrc",
        ),
        (
            "The specified config file does not exist: lint.cfg",
            ("flake8", "--config", "lint.cfg"),
            "lint.cfg",
        ),
        (
            "mypy: error: Cannot find config file 'mypy.ini'",
            ("mypy", "--config-file", "mypy.ini", "pkg"),
            "mypy.ini",
        ),
        (
            "The path `ruff.toml` does not point to a configuration file",
            ("ruff", "check", "--config", "ruff.toml"),
            "ruff.toml",
        ),
        (
            "ERROR: Config file '/w/repo/ci/pytest.ini' not found.",
            ("pytest", "-c", "ci/pytest.ini"),
            "ci/pytest.ini",
        ),
        # A file the command does not name is not the command's configuration.
        ("mypy: error: Cannot find config file 'mypy.ini'", ("mypy", "pkg"), None),
        ("pkg/a.py:1: error: Name 'x' is not defined", ("mypy", "--config-file", "mypy.ini"), None),
    ],
)
def test_a_missing_configuration_is_read_only_of_a_file_the_command_names(
    output: str, argv: tuple[str, ...], named: str | None
) -> None:
    assert missing_config(output, argv) == named


def test_a_type_check_whose_configuration_is_missing_is_unverified(tmp_path: Path) -> None:
    """For real: tox's type environment names mypy.ini, which the tree (an sdist) lacks."""
    repo = write(
        tmp_path / "repo",
        {
            "pkg/__init__.py": "def f() -> int:\n    return 1\n",
            "tests/test_f.py": "from pkg import f\n\n\ndef test_f():\n    assert f() == 1\n",
            "tox.ini": "[tox]\nenvlist = py, type\n\n[testenv]\ndeps = pytest\ncommands = pytest tests\n\n"
            "[testenv:type]\ndeps = mypy\ncommands = mypy --config-file mypy.ini pkg\n",
        },
    )
    git(repo, "init", "-q")
    done = assay("verify", "--json", str(repo), env=assay_env(ASSAY_CACHE_DIR=str(tmp_path / "c")))
    report = json.loads(done.stdout)
    assert report["status"] == "UNVERIFIED", report["note"]
    (mypy,) = [c for c in report["checks"] if c["name"] == "mypy"]
    assert (mypy["verdict"], mypy["cause"]) == ("unverified", "toolchain_missing"), mypy
    assert "mypy.ini, the configuration file its command names, does not exist" in mypy["note"]

"""The `ruff check .` assay composes from a ruff configuration lints what the project's own
ruff lints: its Python, not the configuration files ruff reads (platformdirs 4.11.3's ruff,
run by pre-commit on Python files alone, never reports `rule-codes-in-selectors` on its
pyproject.toml; ruff 0.16 walking the tree did, and the project was FAILED)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from assay.discovery.files import RepoFiles
from assay.discovery.model import ProjectEnv
from assay.discovery.python import ruff_check_args
from assay.discovery.ruff_config_files import config_files, exclusion_patterns
from assay.plan import plan_repository
from tests.cli import VENV_BIN, installed_and_verified
from tests.repos import write, write_dedented

#: Ruff settings that draw `rule-codes-in-selectors` (RUF201, a preview rule of ruff 0.16)
#: on the file that holds them, and on nothing else of a clean module.
SELECTING_BY_CODE = """
    [tool.ruff.lint]
    preview = true
    extend-select = ["RUF"]
    ignore = ["E501"]
"""

PROJECT = {
    "pyproject.toml": """
        [project]
        name = "doubling"
        version = "0.1"
        [tool.pytest.ini_options]
        pythonpath = ["."]
    """
    + SELECTING_BY_CODE,
    "doubling.py": '''
        """Doubling."""


        def double(x: int) -> int:
            """Twice `x`."""
            return 2 * x
    ''',
    "tests/test_doubling.py": """
        from doubling import double


        def test_double():
            assert double(2) == 4
    """,
    # pre-commit.ci runs the hooks (so `--install` installs the hook's ruff), and the
    # hook hands ruff the Python files alone.
    ".pre-commit-config.yaml": """
        ci:
          autoupdate_schedule: monthly
        repos:
          - repo: https://github.com/astral-sh/ruff-pre-commit
            rev: v0.16.3
            hooks:
              - id: ruff-check
    """,
}


def ruff_argv(root: Path) -> list[str]:
    return next(list(c.argv) for c in plan_repository(root).checks if c.tool == "ruff")


def test_the_configuration_files_found_are_the_files_ruff_would_walk_into(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": "",
            ".ruff.toml": "",
            "sub/pkg/ruff.toml": "",
            "sub/pyproject.toml": "",
            # A directory by the name: what it holds is Python to lint, never left out.
            "tools/ruff.toml/check.py": "",
            # Where ruff's own exclusions, or the project's environment, keep its walk out.
            ".tox/py/pyproject.toml": "",
            "node_modules/x/pyproject.toml": "",
            "build/pyproject.toml": "",
            "env/lib/pyproject.toml": "",
        },
    )
    found = config_files(RepoFiles(str(tmp_path)), skip=("env",))
    assert sorted(found) == [
        ".ruff.toml",
        "pyproject.toml",
        "sub/pkg/ruff.toml",
        "sub/pyproject.toml",
    ]


def test_each_file_is_left_out_by_its_path_never_by_a_name_or_a_glob() -> None:
    # A bare name would match every entry of that name, a directory's files included.
    assert exclusion_patterns(["pyproject.toml", ".ruff.toml", "sub/ruff.toml"]) == (
        "./pyproject.toml",
        "./.ruff.toml",
        "sub/ruff.toml",
    )
    # A comma splits the option's value, a glob matches more than the file, a leading dash
    # is an option: such a path stays linted.
    unusual = ["a,b/pyproject.toml", "*/pyproject.toml", "[x]/ruff.toml", "-x/ruff.toml"]
    assert exclusion_patterns(unusual) == ()


def test_the_composed_command_names_the_files_beside_the_environments_ruff_walks_into() -> None:
    env = ProjectEnv("python3", "PATH", venv_dirs=(".venv", "env"))
    assert ruff_check_args(env, ("pyproject.toml", "sub/ruff.toml")) == (
        "check",
        ".",
        "--extend-exclude",
        "env,./pyproject.toml,sub/ruff.toml",
    )
    assert ruff_check_args(ProjectEnv("python3", "PATH"), ()) == ("check", ".")


def test_the_planned_ruff_leaves_the_configuration_files_out(tmp_path: Path) -> None:
    write_dedented(tmp_path, PROJECT)
    assert ruff_argv(tmp_path) == ["ruff", "check", ".", "--extend-exclude", "./pyproject.toml"]


def test_a_ruff_check_the_project_states_runs_as_stated(tmp_path: Path) -> None:
    """tox running `ruff check .` shows its maintainers what ruff finds in pyproject.toml."""
    tox = "[testenv:lint]\ndeps = ruff\ncommands = ruff check .\n"
    write_dedented(tmp_path, {**PROJECT, "tox.ini": tox})
    assert ruff_argv(tmp_path) == ["ruff", "check", "."]


def test_ruff_reads_its_settings_from_a_file_it_leaves_unlinted(tmp_path: Path) -> None:
    """For real, with the ruff of assay's own environment: the finding in pyproject.toml is
    gone, its settings still apply (`RUF005`, which only its `extend-select` selects), and a
    directory that bears a configuration file's name is linted."""
    write_dedented(tmp_path, PROJECT)
    write(
        tmp_path,
        {"tools/ruff.toml/check.py": "import os\n", "joined.py": "A = [2]\nB = [1] + A\n"},
    )
    args = ruff_check_args(ProjectEnv("python3", "PATH"), config_files(RepoFiles(str(tmp_path))))
    done = subprocess.run(
        [str(VENV_BIN / "ruff"), *args, "--no-cache", "--output-format=json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    found = {
        (Path(f["filename"]).relative_to(tmp_path).as_posix(), f["code"])
        for f in json.loads(done.stdout)
    }
    assert found == {("tools/ruff.toml/check.py", "F401"), ("joined.py", "RUF005")}, done.stderr


@pytest.mark.slow
def test_a_project_clean_by_its_hook_is_verified_and_a_finding_in_its_code_fails_it(
    tmp_path: Path,
) -> None:
    """End to end: `--install` installs the hook's ruff 0.16.3, which would report
    `rule-codes-in-selectors` on pyproject.toml had it walked into it."""
    repo = write_dedented(tmp_path / "repo", PROJECT)
    report = installed_and_verified(repo, tmp_path)
    versions = {c["checker"]["tool"]: c["checker"]["version"] for c in report["checks"]}
    assert versions.get("ruff") == "0.16.3", versions
    assert report["status"] == "VERIFIED", (report["note"], report["output"])

    broken = write_dedented(tmp_path / "broken", PROJECT)
    (broken / "doubling.py").write_text(
        '"""Doubling."""\n\nimport os\n\n\ndef double(x: int) -> int:\n    return 2 * x\n'
    )
    report = installed_and_verified(broken, tmp_path)
    assert report["status"] == "FAILED", report["note"]
    assert "doubling.py:3" in report["note"] and "pyproject.toml" not in report["note"], report[
        "note"
    ]


@pytest.mark.slow
def test_a_ruff_from_before_output_format_is_asked_for_json_as_it_knows(tmp_path: Path) -> None:
    """A 2023 hook pin, ruff 0.0.260, knows `--format`, not `--output-format`: asked for the
    latter it stops on a usage error, which failed a clean project. For real, both ways."""
    hook = (
        PROJECT[".pre-commit-config.yaml"]
        .replace("v0.16.3", "v0.0.260")
        .replace("ruff-check", "ruff")
    )
    pyproject = '[project]\nname = "doubling"\nversion = "0.1"\n[tool.ruff]\nline-length = 100\n'
    repo = write_dedented(
        tmp_path / "repo",
        {**PROJECT, "pyproject.toml": pyproject, ".pre-commit-config.yaml": hook},
    )
    report = installed_and_verified(repo, tmp_path)
    [ruff] = [c for c in report["checks"] if c["checker"]["tool"] == "ruff"]
    assert ruff["checker"]["version"] == "0.0.260", ruff["checker"]
    assert report["status"] == "VERIFIED", (report["note"], ruff["stderr"]["text"])

    (repo / "doubling.py").write_text('"""Doubling."""\n\nimport os\n')
    report = installed_and_verified(repo, tmp_path)
    assert report["status"] == "FAILED", report["note"]
    [ruff] = [c for c in report["checks"] if c["checker"]["tool"] == "ruff"]
    assert [(d["file"], d["code"]) for d in ruff["diagnostics"]] == [("doubling.py", "F401")]

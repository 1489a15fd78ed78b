"""`--install` installs the linters and type checkers a project pins at the versions it pins,
with what its pre-commit hooks add to them (type stubs, plugins): a lint finding must come
from the tool the maintainers run, not from whatever release is newest today."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from assay.evidence import Check
from assay.install import incomplete_environment, install_steps
from tests.cli import installed_and_verified
from tests.repos import write_dedented

PIP = (".venv/bin/python", "-m", "pip", "install", "-q")

PROJECT = {
    "pyproject.toml": """
        [project]
        name = "pinned"
        version = "0.1"
        [tool.mypy]
        files = ["pinned.py"]
        [tool.pytest.ini_options]
        pythonpath = ["."]
    """,
    # requests is not a dependency: only its stubs, which the mypy hook adds, let mypy pass.
    "pinned.py": """
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            import requests


        def status(response: "requests.Response") -> int:
            return response.status_code


        def double(x: int) -> int:
            return 2 * x
    """,
    "tests/test_pinned.py": """
        from pinned import double


        def test_double():
            assert double(2) == 4
    """,
    "tox.ini": """
        [testenv]
        deps = pytest
        commands = pytest
        [testenv:lint]
        deps = -r requirements/lint.txt
        commands = flake8 pinned.py tests
    """,
    "requirements/lint.txt": "flake8==6.0.0\n",
    # pre-commit.ci runs the hooks: their pins are what CI checks with.
    ".pre-commit-config.yaml": """
        ci:
          autoupdate_schedule: monthly
        repos:
          - repo: https://github.com/pre-commit/mirrors-mypy
            rev: v1.10.0
            hooks:
              - id: mypy
                additional_dependencies: ["types-requests==2.31.0.20240406", "--index-url=https://evil.example"]
    """,
}


def tools_step(root: Path) -> Check:
    """The install step of the tools the plan runs, its requirements as its argv's last
    words: a step that writes constraints first is a shell script, whose pip command (the
    one without them, where they do not install) ends it."""
    step = next(s for s in install_steps(root) if s.name == "install-python-tools")
    if step.argv[:2] != ("sh", "-c"):
        return step
    words = shlex.split(step.argv[2].rsplit(" install -q ", 1)[1].split(";")[0])
    return replace(step, argv=(*PIP, *words, *step.argv[4:]))


def test_requirement_files_for_linting_and_typing_in_requirements_dir_are_installed(
    tmp_path: Path,
) -> None:
    write_dedented(
        tmp_path,
        {
            "setup.py": "from setuptools import setup\nsetup()\n",
            "requirements/lint.txt": "flake8==6.0.0\n",
            "requirements/typing.txt": "mypy==1.10.0\n",
            "requirements/style.txt": "black==24.1.0\n",
            "requirements/docs.txt": "sphinx\n",
        },
    )
    argvs = [s.argv for s in install_steps(tmp_path)]
    for name in ("lint", "typing", "style"):
        assert (*PIP, "-r", f"requirements/{name}.txt") in argvs, argvs
    assert (*PIP, "-r", "requirements/docs.txt") not in argvs


def test_a_pre_commit_hooks_additional_dependencies_come_with_its_tool(tmp_path: Path) -> None:
    write_dedented(tmp_path, PROJECT)
    tools = tools_step(tmp_path)
    assert "mypy==1.10.0" in tools.argv and "types-requests==2.31.0.20240406" in tools.argv
    assert not any("evil" in a for a in tools.argv)


@pytest.mark.slow
def test_the_pinned_tools_are_the_ones_that_run(tmp_path: Path) -> None:
    """For real: pip from the index, then the checks in the sandbox. Without the hook's
    stubs the pinned mypy fails on `import requests` (stubs not installed); the version
    is the one mypy reported when probed."""
    repo = write_dedented(tmp_path / "repo", PROJECT)
    done = subprocess.run(
        [sys.executable, "-m", "assay", "verify", "--install", "--json", str(repo)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env={**os.environ, "ASSAY_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert "Traceback" not in done.stderr, done.stderr
    report = json.loads(done.stdout)
    versions = {c["checker"]["tool"]: c["checker"]["version"] for c in report["checks"]}
    assert report["status"] == "VERIFIED", (report["note"], report["output"])
    assert versions.get("mypy") == "1.10.0", versions


def test_an_environment_lacking_a_planned_tool_is_named_with_what_it_lacks(
    tmp_path: Path,
) -> None:
    write_dedented(tmp_path, PROJECT)
    write_dedented(tmp_path, {".venv/bin/python": "", ".venv/bin/pytest": ""})
    incomplete = incomplete_environment(tmp_path)
    assert incomplete is not None
    assert (incomplete.venv, incomplete.lacking) == (".venv", ("flake8", "mypy"))
    write_dedented(tmp_path, {".venv/bin/mypy": "", ".venv/bin/flake8": ""})
    assert incomplete_environment(tmp_path) is None


@pytest.mark.slow
def test_a_project_venv_without_its_linters_gets_a_complete_environment_of_its_own(
    tmp_path: Path,
) -> None:
    """A developer's `.venv` made for running the tests only (pluggy's README set-up) lacks
    the mypy and flake8 the project's pre-commit and tox configuration run: `--install`
    leaves nothing missing, builds the environment in the workspace from what the project
    declares, and never installs into the developer's environment."""
    repo = write_dedented(tmp_path / "repo", PROJECT)
    subprocess.run([sys.executable, "-m", "venv", str(repo / ".venv")], check=True)
    subprocess.run(
        [str(repo / ".venv/bin/python"), "-m", "pip", "install", "-q", "pytest"],
        check=True,
        timeout=600,
    )
    before = sorted(p.name for p in (repo / ".venv/bin").iterdir())
    done = subprocess.run(
        [sys.executable, "-m", "assay", "verify", "--install", "--json", str(repo)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env={**os.environ, "ASSAY_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert "Traceback" not in done.stderr, done.stderr
    report = json.loads(done.stdout)
    assert report["status"] == "VERIFIED", (report["note"], report["output"])
    versions = {c["checker"]["tool"]: c["checker"]["version"] for c in report["checks"]}
    assert versions.get("mypy") == "1.10.0", versions
    assert any("flake8" in " ".join(c["argv"]) for c in report["checks"]), report["checks"]
    made = report["extra"]["install"][0]
    assert made["name"] == "install-venv", made
    assert ".venv lacks flake8, mypy" in made["note"], made["note"]
    assert sorted(p.name for p in (repo / ".venv/bin").iterdir()) == before


#: uv's lockfile, as `uv lock` writes it: every package of the environment, the tools too.
UV_LOCK = """
    version = 1
    requires-python = ">=3.9"

    [[package]]
    name = "ruff"
    version = "0.5.0"
    source = { registry = "https://pypi.org/simple" }

    [[package]]
    name = "pytest"
    version = "8.1.1"
    source = { registry = "https://pypi.org/simple" }

    [[package]]
    name = "pytest"
    version = "7.4.4"
    source = { registry = "https://pypi.org/simple" }
"""

LOCKED = {
    "pyproject.toml": """
        [project]
        name = "locked"
        version = "0.1"
        [tool.ruff]
        [tool.pytest.ini_options]
        pythonpath = ["."]
    """,
    "locked.py": "def double(x: int) -> int:\n    return 2 * x\n",
    "tests/test_locked.py": "from locked import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
    "uv.lock": UV_LOCK,
    # The hook's pin is older news than the lockfile's, which `uv run ruff` runs.
    ".pre-commit-config.yaml": """
        repos:
          - repo: https://github.com/astral-sh/ruff-pre-commit
            rev: v0.6.9
            hooks:
              - id: ruff
    """,
}


def test_a_lockfile_pins_the_tools_over_the_pre_commit_hooks(tmp_path: Path) -> None:
    write_dedented(tmp_path, LOCKED)
    tools = tools_step(tmp_path)
    pinned = [a for a in tools.argv if a.startswith(("ruff", "pytest"))]
    # pytest is locked at two versions (one per Python): which runs is not known, so it is
    # left to the tree's date like any tool nothing pins.
    assert (
        "ruff==0.5.0" in pinned
        and "pytest" in pinned
        and not any("==" in p and "pytest" in p for p in pinned)
    ), pinned
    assert "at the versions uv.lock pins" in (tools.reason or "")


def test_a_poetry_lockfile_pins_them_too(tmp_path: Path) -> None:
    write_dedented(
        tmp_path,
        {
            **{k: v for k, v in LOCKED.items() if k not in ("uv.lock", ".pre-commit-config.yaml")},
            "poetry.lock": '[[package]]\nname = "Ruff"\nversion = "0.4.10"\n',
        },
    )
    tools = tools_step(tmp_path)
    assert "ruff==0.4.10" in tools.argv


@pytest.mark.slow
def test_the_locked_tool_is_the_one_that_runs(tmp_path: Path) -> None:
    report = installed_and_verified(write_dedented(tmp_path / "repo", LOCKED), tmp_path)
    versions = {c["checker"]["tool"]: c["checker"]["version"] for c in report["checks"]}
    assert report["status"] == "VERIFIED", report["note"]
    assert versions.get("ruff") == "0.5.0", versions


@pytest.mark.parametrize(
    ("rev", "pin"),
    [
        # packaging 26: `pre-commit autoupdate --freeze` names a commit and says the release
        # beside it; pip was asked for mypy==41e69167... and the install failed.
        ("41e691678310dfd3833f7ab4e180ddb014310356  # frozen: v1.10.0", "mypy==1.10.0"),
        ("41e691678310dfd3833f7ab4e180ddb014310356", None),
        ("2b7f1e0", None),
        ("v1.10.0", "mypy==1.10.0"),
    ],
)
def test_a_hook_frozen_to_a_commit_pins_the_release_it_names(
    tmp_path: Path, rev: str, pin: str | None
) -> None:
    config = PROJECT[".pre-commit-config.yaml"].replace("rev: v1.10.0", f"rev: {rev}")
    write_dedented(tmp_path, {**PROJECT, ".pre-commit-config.yaml": config})
    pins = [a for a in tools_step(tmp_path).argv if a.startswith("mypy")]
    assert pins == ([pin] if pin else ["mypy"]), pins


def test_hooks_no_ci_runs_pin_nothing(tmp_path: Path) -> None:
    """inflect 7.6.0: its ruff hook pins 0.12.0 and nothing in CI runs the hooks; its CI's
    tox installs ruff unpinned. The hook's stale pin is not what CI checked with."""
    config = PROJECT[".pre-commit-config.yaml"].replace(
        "ci:\n          autoupdate_schedule: monthly\n        ", ""
    )
    write_dedented(tmp_path, {**PROJECT, ".pre-commit-config.yaml": config})
    tools = tools_step(tmp_path)
    assert not any(a.startswith("mypy==") for a in tools.argv), tools.argv
    # Its stubs are still part of the tool as the maintainers run it.
    assert "types-requests==2.31.0.20240406" in tools.argv
    write_dedented(tmp_path, {"tox.ini": "[testenv:lint]\ncommands = pre-commit run -a\n"})
    tools = tools_step(tmp_path)
    assert "mypy==1.10.0" in tools.argv


def test_a_hooks_addition_naming_a_planned_tool_yields_to_its_pin(tmp_path: Path) -> None:
    """iniconfig 2.3.1: uv.lock pins pytest 8.4.2, and its mypy hook adds pytest==7.2.0
    (for its types): both at once cannot be installed."""
    hook = """
        repos:
          - repo: https://github.com/pre-commit/mirrors-mypy
            rev: v1.10.0
            hooks:
              - id: mypy
                additional_dependencies: ["pytest==7.2.0", "types-requests"]
    """
    lock = '[[package]]\nname = "pytest"\nversion = "8.4.2"\n'
    write_dedented(tmp_path, {**LOCKED, ".pre-commit-config.yaml": hook, "uv.lock": lock})
    write_dedented(tmp_path, {"mypy.ini": "[mypy]\n"})
    tools = tools_step(tmp_path)
    assert "pytest==8.4.2" in tools.argv and "types-requests" in tools.argv
    assert "pytest==7.2.0" not in tools.argv


#: werkzeug 3.1.9: uv.lock locks watchdog 6.0.0; watchdog 7, the newest, hangs a test.
LOCKED_DEPENDENCY = {
    "pyproject.toml": """
        [project]
        name = "held"
        version = "0.1"
        dependencies = ["iniconfig"]
        [tool.pytest.ini_options]
        pythonpath = ["."]
    """,
    "tests/test_held.py": """
        from importlib.metadata import version


        def test_the_locked_release_is_the_one_installed():
            assert version("iniconfig") == "2.0.0"
    """,
    "uv.lock": """
        version = 1

        [[package]]
        name = "held"
        version = "0.1"
        source = { editable = "." }

        [[package]]
        name = "iniconfig"
        version = "2.0.0"
        source = { registry = "https://pypi.org/simple" }
    """,
}


def test_every_pip_step_is_held_to_what_the_lockfile_locks(tmp_path: Path) -> None:
    write_dedented(tmp_path, LOCKED_DEPENDENCY)
    steps = install_steps(tmp_path)
    tools = next(s for s in steps if s.name == "install-python-tools")
    # The project itself (an editable source) is no constraint.
    assert tools.argv[4:] == ("iniconfig==2.0.0",), tools.argv
    project = next(s for s in steps if s.name == "install-python")
    assert (
        project.argv[:2] == ("sh", "-c") and "-c .venv/assay-held-versions.txt" in project.argv[2]
    )


@pytest.mark.slow
def test_the_locked_dependency_is_the_one_installed_for_real(tmp_path: Path) -> None:
    report = installed_and_verified(write_dedented(tmp_path / "repo", LOCKED_DEPENDENCY), tmp_path)
    assert report["status"] == "VERIFIED", report["note"]

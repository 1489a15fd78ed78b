"""`assay verify --install`: install steps read from the repository, and a real fresh-clone run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assay.install import INSTALL_TIMEOUT_S, install_steps
from assay.verdict import Kind
from tests.repos import write


def argvs(root: Path) -> list[tuple[str, ...]]:
    return [step.argv for step in install_steps(root)]


def test_python_project_gets_a_venv_and_its_test_extras(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname="p"\nversion="1"\n[project.optional-dependencies]\ntest=["pytest"]\ndocs=["x"]\n',
            "requirements-dev.txt": "ruff\n",
        },
    )
    assert argvs(tmp_path) == [
        ("python3", "-m", "venv", ".venv"),
        (".venv/bin/python", "-m", "pip", "install", "-q", "-e", ".[test]"),
        (".venv/bin/python", "-m", "pip", "install", "-q", "-r", "requirements-dev.txt"),
    ]
    step = install_steps(tmp_path)[0]
    assert (
        step.kind is Kind.BUILD
        and step.timeout_s == INSTALL_TIMEOUT_S
        and step.source == "pyproject.toml"
    )


def test_an_existing_environment_is_used_as_it_is(tmp_path: Path) -> None:
    write(
        tmp_path,
        {"pyproject.toml": "[project]\nname='p'\n", ".venv/bin/python": "", "package.json": "{}"},
    )
    (tmp_path / "node_modules").mkdir()
    assert argvs(tmp_path) == []


def test_node_lockfiles_choose_the_package_manager(tmp_path: Path) -> None:
    for lockfile, expected in [
        ("package-lock.json", ("npm", "ci")),
        ("yarn.lock", ("yarn", "install", "--frozen-lockfile")),
        ("pnpm-lock.yaml", ("pnpm", "install", "--frozen-lockfile")),
    ]:
        root = write(tmp_path / lockfile, {"package.json": "{}", lockfile: ""})
        assert argvs(root) == [expected]
    assert argvs(write(tmp_path / "nolock", {"package.json": "{}"})) == [("npm", "install")]


def test_go_and_rust(tmp_path: Path) -> None:
    root = write(tmp_path, {"go.mod": "module x\n", "Cargo.toml": "[package]\nname='x'\n"})
    assert argvs(root) == [("go", "mod", "download"), ("cargo", "fetch")]


def test_malformed_pyproject_still_installs_without_extras(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": "[project\n"})
    assert (".venv/bin/python", "-m", "pip", "install", "-q", "-e", ".") in argvs(tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local", "bwrap"])
def test_fresh_clone_is_installed_then_verified_with_its_own_environment(
    tmp_path: Path, backend: str
) -> None:
    """Under bwrap the install steps alone get the network (pip must reach the registry)."""
    repo = write(
        tmp_path / "repo",
        {
            "pyproject.toml": (
                '[project]\nname="fresh"\nversion="0.1"\n'
                '[project.optional-dependencies]\ntest=["pytest"]\n'
                '[tool.pytest.ini_options]\npythonpath=["."]\n'
            ),
            "fresh.py": "def double(x):\n    return 2 * x\n",
            "tests/test_fresh.py": "from fresh import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
        },
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "verify",
            "--install",
            "--sandbox",
            backend,
            "--json",
            str(repo),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "ASSAY_CACHE_DIR": str(tmp_path / "cache")},
    )
    report = json.loads(done.stdout)
    assert report["status"] == "VERIFIED", report["note"]
    assert [step["verdict"] for step in report["extra"]["install"]] == ["pass", "pass"]
    pytest_check = next(c for c in report["checks"] if c["name"] == "pytest")
    assert pytest_check["argv"][0] == ".venv/bin/python"  # the environment the install made
    assert not (repo / ".venv").exists(), (
        "the install must happen in the workspace copy, not the clone"
    )

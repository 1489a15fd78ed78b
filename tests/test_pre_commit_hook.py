"""The `assay-verify` pre-commit hook, run by the real `pre-commit` on real commits.

pre-commit installs a hook's repository with pip from a git repository at a revision, so
the test commits a snapshot of this checkout (the files pip needs, and the hook file) to
a repository of its own and names it in a project's `.pre-commit-config.yaml`, as a user
names assay's repository. `pre-commit install` puts the hook in the project's git hooks;
then a plain `git commit` of a passing project goes through and one of a failing project
is refused, with the failing test named. Installing the hook's environment needs PyPI
(assay's dependencies, and pytest for the project's tests).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli import assay_env
from tests.repos import GIT_IDENTITY, commit_all, git, write

pytest.importorskip("pre_commit")

CHECKOUT = Path(__file__).resolve().parents[1]
#: What pip needs to install assay, and the hook declaration.
SNAPSHOT = ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "src", "scripts")

PASSING = {
    "pyproject.toml": '[project]\nname = "tiny"\nversion = "0"\n',
    "test_math.py": "def add(a, b):\n    return a + b\n\n\ndef test_add():\n    assert add(2, 2) == 4\n",
}
BROKEN = "def add(a, b):\n    return a - b\n\n\ndef test_add_sums():\n    assert add(2, 2) == 4\n"


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A git repository holding this checkout's assay, and the commit to name as `rev`."""
    repo = tmp_path_factory.mktemp("assay-hooks")
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
    for name in SNAPSHOT:
        source = CHECKOUT / name
        if source.is_dir():
            shutil.copytree(source, repo / name, ignore=ignore)
        else:
            shutil.copy2(source, repo / name)
    commit_all(repo, "assay at the checkout's state")
    return repo, git(repo, "rev-parse", "HEAD").decode().strip()


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pre-commit's cache of hook environments: one install of assay for the module."""
    return tmp_path_factory.mktemp("pre-commit-home")


def project(root: Path, hook_repo: tuple[Path, str], home: Path) -> Path:
    """A git project with the `assay-verify` hook configured and installed."""
    repo, rev = hook_repo
    config = (
        "repos:\n"
        f"  - repo: {repo}\n"
        f"    rev: {rev}\n"
        "    hooks:\n"
        "      - id: assay-verify\n"
        # The project's tests run with pytest: the hook's environment provides it.
        "        additional_dependencies: [pytest]\n"
    )
    write(root, {**PASSING, ".pre-commit-config.yaml": config})
    commit_all(root, "start")
    pre_commit(root, home, "install")
    return root


def pre_commit(root: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
        cwd=root,
        env=environment(home),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def environment(home: Path) -> dict[str, str]:
    return assay_env(PRE_COMMIT_HOME=str(home), ASSAY_CACHE_DIR=str(home / "assay-state"))


def commit(root: Path, home: Path, message: str) -> subprocess.CompletedProcess[str]:
    """`git commit -am MESSAGE`, which runs the installed pre-commit hook."""
    return subprocess.run(
        ["git", "-C", str(root), *GIT_IDENTITY, "commit", "-am", message],
        env=environment(home),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def test_the_readmes_configuration_is_valid_for_pre_commit(tmp_path: Path) -> None:
    text = (CHECKOUT / "README.md").read_text()
    section = text.split("## pre-commit\n", 1)[1].split("\n## ", 1)[0]
    config = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    assert "id: assay-verify" in config
    (tmp_path / ".pre-commit-config.yaml").write_text(config)
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-config", ".pre-commit-config.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_hook_file_is_valid_for_pre_commit() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-manifest", ".pre-commit-hooks.yaml"],
        cwd=CHECKOUT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_a_commit_that_verifies_goes_through(
    tmp_path: Path, hook_repo: tuple[Path, str], pre_commit_home: Path
) -> None:
    root = project(tmp_path / "project", hook_repo, pre_commit_home)
    write(
        root,
        {
            "test_math.py": PASSING["test_math.py"]
            + "\n\ndef test_zero():\n    assert add(0, 0) == 0\n"
        },
    )
    done = commit(root, pre_commit_home, "another test")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "assay verify" in output and "Passed" in output
    assert git(root, "log", "-1", "--format=%s").decode().strip() == "another test"


@pytest.mark.slow
def test_a_commit_that_fails_verification_is_refused(
    tmp_path: Path, hook_repo: tuple[Path, str], pre_commit_home: Path
) -> None:
    root = project(tmp_path / "project", hook_repo, pre_commit_home)
    write(root, {"test_math.py": BROKEN})
    done = commit(root, pre_commit_home, "break add")
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert "Failed" in output and "FAILED" in output
    assert "test_add_sums" in output  # the reader is told what failed
    assert git(root, "log", "-1", "--format=%s").decode().strip() == "start"

"""What the real `assay` console script loads at start: only what the command asked for needs.

Agents call `assay` in loops, so start-up is paid thousands of times. Each test runs the
installed entry point under `python -X importtime`, which lists every module the process
loaded, and checks that the heavy ones were left alone.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from assay._version import __version__
from tests.cli import ASSAY, PYTHON, assay_env
from tests.repos import git_repo

PASSING_PROJECT = {
    "pyproject.toml": '[project]\nname = "tiny"\nversion = "0"\n',
    "tiny.py": "def one() -> int:\n    return 1\n",
    "test_tiny.py": "from tiny import one\n\n\ndef test_one():\n    assert one() == 1\n",
}

CI_WORKFLOW = """\
name: ci
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: python -m pytest -q
"""


def _imported(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run the console script with `args`; what it did and every module it imported."""
    done = subprocess.run(
        [PYTHON, "-X", "importtime", ASSAY, *args],
        capture_output=True,
        text=True,
        env=assay_env(**(env or {})),
        cwd=cwd,
        timeout=120,
        check=False,
    )
    modules = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }
    modules.discard("package")  # the header line
    return done, modules


def _loaded(modules: set[str], top: str) -> set[str]:
    return {m for m in modules if m == top or m.startswith(top + ".")}


def test_version_loads_neither_click_nor_the_library() -> None:
    """Nor `re`: the console script is assay's own (scripts/assay), not pip's generated
    one, which imports `re` and enum before `main` (8 ms of every warm run)."""
    done, modules = _imported("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"assay {__version__}\n"
    for heavy in ("click", "rich", "yaml", "json", "typing", "dataclasses", "ray", "re", "enum"):
        assert not _loaded(modules, heavy), (heavy, sorted(_loaded(modules, heavy)))
    assert _loaded(modules, "assay") <= {"assay", "assay._version", "assay.cli"}


def test_python_dash_m_version_loads_no_click() -> None:
    done = subprocess.run(
        [PYTHON, "-X", "importtime", "-m", "assay", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout == f"assay {__version__}\n"
    assert "click" not in done.stderr


def test_version_still_answers_beside_other_arguments() -> None:
    """Only a lone `--version` takes the short way; click answers the rest as before."""
    done, modules = _imported("--version", "--help")
    assert done.returncode == 0
    assert done.stdout == f"assay {__version__}\n"
    assert _loaded(modules, "click")


@pytest.mark.slow
def test_verify_without_ci_files_never_loads_yaml_nor_unasked_formats(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo", PASSING_PROJECT)
    done, modules = _imported("verify", "--json", "--sandbox", "none", "--no-cache", str(repo))
    assert json.loads(done.stdout)["status"] == "VERIFIED", done.stdout
    assert not _loaded(modules, "yaml"), sorted(_loaded(modules, "yaml"))
    assert not modules & {"assay.formats.junit", "assay.formats.sarif"}


def test_plan_of_a_repository_with_ci_yaml_does_load_yaml(tmp_path: Path) -> None:
    """The other side: the check above can see yaml when a repository needs it."""
    files = {**PASSING_PROJECT, ".github/workflows/ci.yml": CI_WORKFLOW}
    repo = git_repo(tmp_path / "repo", files)
    done, modules = _imported("plan", "--json", str(repo))
    assert done.returncode == 0, done.stderr
    assert _loaded(modules, "yaml")


def test_plan_without_ci_files_never_loads_yaml(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo", PASSING_PROJECT)
    done, modules = _imported("plan", "--json", str(repo))
    assert done.returncode == 0, done.stderr
    assert not _loaded(modules, "yaml")
    assert not modules & {"assay.formats.junit", "assay.formats.sarif"}


# What `assay run --sandbox none` has no use for: the other backends, the canaries and
# tampering checks of a full verify, the eval commands' machinery, rich.
NOT_FOR_A_BARE_RUN = (
    "assay.sandbox.bwrap",
    "assay.sandbox.seccomp",
    "assay.sandbox.cgroup",
    "assay.canaries",
    "assay.tamper",
    "rich",
)

SANDBOX_BACKENDS = (
    "assay.sandbox.bwrap",
    "assay.sandbox.local",
    "assay.sandbox.none",
    "assay.sandbox.seccomp",
    "assay.sandbox.cgroup",
)


def _eval_machinery(modules: set[str]) -> set[str]:
    """assay.eval beyond the package and the module that registers its click commands."""
    return _loaded(modules, "assay.eval") - {"assay.eval", "assay.eval.commands"}


def test_run_without_sandbox_loads_no_other_backend_nor_verify_machinery(tmp_path: Path) -> None:
    done, modules = _imported(
        "run", "--sandbox", "none", "--kind", "build", "--", "true", cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for heavy in NOT_FOR_A_BARE_RUN:
        assert not _loaded(modules, heavy), (heavy, sorted(_loaded(modules, heavy)))
    assert not _eval_machinery(modules), sorted(_eval_machinery(modules))
    assert not modules & {"concurrent.futures", "logging"}


@pytest.mark.slow
def test_a_cached_verify_loads_no_sandbox_backend(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo", PASSING_PROJECT)
    cache = {"ASSAY_CACHE_DIR": str(tmp_path / "cache")}
    first = subprocess.run(
        [ASSAY, "verify", "--json", str(repo)],
        capture_output=True,
        text=True,
        env=assay_env(**cache),
        timeout=120,
        check=False,
    )
    assert json.loads(first.stdout)["status"] == "VERIFIED", first.stdout + first.stderr
    done, modules = _imported("verify", "--json", str(repo), env=cache)
    report = json.loads(done.stdout)
    assert report["status"] == "VERIFIED", done.stdout
    assert "cached" in report["extra"], report["extra"]
    for backend in SANDBOX_BACKENDS:
        assert backend not in modules, (backend, sorted(_loaded(modules, "assay.sandbox")))
    assert not _loaded(modules, "rich")

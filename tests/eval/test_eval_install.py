"""A task whose tests need an installed dependency: the agent's change is verified in an
environment built from the base's manifests (`verification.install`), with the network on
for the install steps only. Real pip from the index, real bubblewrap."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.eval import run_eval
from assay.eval.task import load_task
from tests.eval.tasks import BUGS, GITIGNORE, GOOD, TESTS, git, write_task

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

#: tomli_w is in no environment assay or its tests use: only an install provides it.
PYPROJECT = """\
[project]
name = "calc"
version = "0.1"
dependencies = ["tomli_w"]
[project.optional-dependencies]
test = ["pytest"]
[tool.setuptools]
py-modules = ["calc"]
[tool.pytest.ini_options]
pythonpath = ["."]
"""


def _task(root: Path, install: bool) -> Path:
    repo = root / "calc-repo"
    (repo / "tests").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    _name, right, wrong = BUGS[1]
    (repo / "calc.py").write_text(GOOD.replace(right, wrong))
    (repo / "tests" / "test_calc.py").write_text("import tomli_w  # noqa: F401\n" + TESTS)
    (repo / "pyproject.toml").write_text(PYPROJECT)
    (repo / ".gitignore").write_text(GITIGNORE)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "bug 1")
    extra = "install = true\n" if install else ""
    return write_task(
        root / "task", 1, repo=repo, commit=git(repo, "rev-parse", "HEAD"), extra=extra
    )


@pytest.mark.slow
def test_a_task_whose_tests_need_a_dependency_is_verified_in_an_environment_built_for_it(
    tmp_path: Path,
) -> None:
    without = _task(tmp_path / "plain", install=False)
    assert load_task(without).install is False
    plain = run_eval([without], "oracle", store=tmp_path / "plain.sqlite")
    assert plain.summary["attempts"][0]["status"] != "VERIFIED"  # tomli_w cannot be imported

    task = _task(tmp_path / "installed", install=True)
    assert load_task(task).install is True
    result = run_eval([task], "oracle", store=tmp_path / "installed.sqlite")

    row = result.summary["attempts"][0]
    assert row["status"] == "VERIFIED", row
    assert set(row["tests"]["fail_to_pass"].values()) == {"passed"}
    assert result.summary["errors"] == 0

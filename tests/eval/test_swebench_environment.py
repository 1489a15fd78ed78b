"""An instance's environment set-up (its `install_config`, or the swebench package's specs
for its repo and version) recorded in its task at import, and what assay cannot honour of
it said there, for real: `assay tasks import` from a git clone."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.cli import assay, no_traceback
from tests.eval.swebench_repos import INSTANCE_ID, NEW_TESTS, git_diff, make_instance, write_jsonl
from tests.eval.tasks import git

#: An instance's own set-up, as SWE-rebench's instances carry it.
INSTALL_CONFIG = {
    "python": "2.6",
    "pre_install": ["apt-get update && apt-get install -y locales"],
    "install": "python -m pip install -e .",
    "pip_packages": ["pytest==7.4.0", "pluggy"],
    "test_cmd": "pytest --no-header -rA --tb=no -p no:cacheprovider",
}
#: psf/requests 2.0 as swebench 4.x's MAP_REPO_VERSION_TO_SPECS has it.
REQUESTS_SPEC = {"python": "3.9", "packages": "pytest", "install": "python -m pip install ."}


def _import(root: Path, instance: dict[str, Any]) -> tuple[Path, str]:
    jsonl = write_jsonl(root / "instances.jsonl", [instance])
    done = assay(
        "tasks", "import", str(jsonl), "--repos", str(root / "repos"), "--out", str(root / "tasks")
    )
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    return root / "tasks" / instance["instance_id"], done.stdout


def _task_toml(folder: Path) -> dict[str, Any]:
    return tomllib.loads((folder / "task.toml").read_text())


def test_an_install_config_is_recorded_and_what_is_not_honoured_is_said(tmp_path: Path) -> None:
    instance = dict(make_instance(tmp_path / "repos"), install_config=INSTALL_CONFIG)
    folder, said = _import(tmp_path, instance)

    task = _task_toml(folder)
    assert task["verification"]["install"] is True
    environment = task["environment"]
    assert environment["source"] == "the instance's install_config"
    assert environment["python"] == "2.6"
    assert environment["pre_install"] == INSTALL_CONFIG["pre_install"]
    assert environment["install"] == ["python -m pip install -e ."]
    assert environment["pip_packages"] == ["pytest==7.4.0", "pluggy"]
    assert environment["test_cmd"] == [INSTALL_CONFIG["test_cmd"]]
    # What installs becomes the verification's: the packages first, as SWE-bench does.
    assert task["verification"]["install_commands"] == [
        "python -m pip install pytest==7.4.0 pluggy",
        "python -m pip install -e .",
    ]
    # No machine here has Python 2.6; apt steps are never run: each said, and recorded.
    notes = environment["not_honoured"]
    assert any("python 2.6 is not on this machine" in n for n in notes)
    assert any("pre_install not run" in n for n in notes)
    for note in notes:
        assert f"environment: {INSTANCE_ID}: {note}" in said


def test_without_specs_the_import_says_why(tmp_path: Path) -> None:
    instance = make_instance(tmp_path / "repos")  # version "1.0", no install_config
    folder, said = _import(tmp_path, instance)
    assert "environment" not in _task_toml(folder)
    assert "install" not in _task_toml(folder)["verification"]
    # The swebench installed here (5.x) keeps no specs map: said, not silently skipped.
    assert f"environment: {INSTANCE_ID}: " in said
    assert "no environment specs" in said


def test_specs_of_the_swebench_package_are_used_for_the_repo_and_version(tmp_path: Path) -> None:
    from assay.eval.swebench import import_instances

    instance = dict(make_instance(tmp_path / "repos"), repo="acme/calc", version="2.0")
    specs = {"acme/calc": {"2.0": REQUESTS_SPEC}}
    notes: list[str] = []
    (folder,) = import_instances(
        write_jsonl(tmp_path / "instances.jsonl", [instance]),
        repos=tmp_path / "repos",
        out=tmp_path / "tasks",
        specs=lambda repo, version: specs.get(repo, {}).get(version),
        on_note=notes.append,
    )
    environment = _task_toml(folder)["environment"]
    assert environment["source"] == "swebench MAP_REPO_VERSION_TO_SPECS['acme/calc']['2.0']"
    assert environment["install"] == ["python -m pip install ."]
    assert environment["python"] == "3.9"
    assert any("run after assay's own install steps" in n for n in notes)
    assert _task_toml(folder)["verification"]["install_commands"] == ["python -m pip install ."]
    assert json.loads((folder / "swebench.json").read_text())["version"] == "2.0"


def test_a_malformed_install_config_is_a_clear_error(tmp_path: Path) -> None:
    instance = dict(make_instance(tmp_path / "repos"), install_config={"install": 3})
    jsonl = write_jsonl(tmp_path / "instances.jsonl", [instance])
    done = assay("tasks", "import", str(jsonl), "--repos", str(tmp_path / "repos"), "--out", str(tmp_path / "tasks"))  # fmt: skip
    no_traceback(done)
    assert done.returncode == 2
    assert "line 1" in done.stderr and "install" in done.stderr
    assert not (tmp_path / "tasks" / INSTANCE_ID).exists()


def test_the_command_line_starts_without_importing_swebench() -> None:
    code = (
        "import sys; from assay.cli import main\n"
        "try:\n    main(['tasks', 'import', '--help'])\nexcept SystemExit:\n    pass\n"
        "assert 'swebench' not in sys.modules, 'swebench imported at start-up'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_the_install_config_is_run_in_the_sandbox_before_the_tests(tmp_path: Path) -> None:
    """A pass-to-pass test that needs a package only the instance's `pip_packages` name
    (fetched from PyPI: the network is on for the install steps only)."""
    instance = make_instance(tmp_path / "repos")
    clone = tmp_path / "repos" / "acme__calc"
    # A project with a name: its editable install is one its own manifest declares.
    (clone / "pyproject.toml").write_text(
        '[project]\nname = "calc"\nversion = "0"\n\n[tool.setuptools]\npy-modules = ["calc"]\n\n'
        + (clone / "pyproject.toml").read_text()
    )
    git(clone, "commit", "-qam", "a named project")
    instance["base_commit"] = git(clone, "rev-parse", "HEAD")
    instance["test_patch"] = git_diff(clone, "tests/test_calc.py", TESTS_NEEDING_SIX)
    instance["PASS_TO_PASS"] = json.dumps(
        ["tests/test_calc.py::test_sub", "tests/test_calc.py::test_six"]
    )
    instance["install_config"] = {
        "python": "3.11",
        "install": "python -c \"import pathlib; pathlib.Path('.venv/spec-ran').touch()\"",
        "pip_packages": ["six==1.16.0"],
    }
    folder, _said = _import(tmp_path, instance)
    done = assay(
        "eval", str(folder), "--agent", "oracle", "--store", str(tmp_path / "e.sqlite"), "--json",
        timeout=900,
    )  # fmt: skip
    no_traceback(done)
    assert done.returncode == 0, (done.stdout, done.stderr)
    (row,) = json.loads(done.stdout)["attempts"]
    assert row["tests"]["pass_to_pass"] == {
        "tests/test_calc.py::test_sub": "passed",
        "tests/test_calc.py::test_six": "passed",
    }, row
    assert row["resolved"] is True


TESTS_NEEDING_SIX = (
    NEW_TESTS
    + """

def test_six():
    import pathlib
    import sys

    import six  # installed by the instance's pip_packages only

    assert six.__version__ == "1.16.0"
    # The install command ran too, in the environment the tests run in.
    assert (pathlib.Path(sys.prefix) / "spec-ran").exists()
"""
)

"""The Python knowledge graph runs a repository's tests with the interpreter `assay verify`
would use: a repository whose tests import a dependency installed only in its in-tree
`.venv` (a real wheel, installed by pip without an index) is graphed, and tasks are made
from it, with coverage.py still supplied by assay inside the sandbox."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from assay.eval.graph.sandboxed_pytest import project_python
from assay.eval.task import load_task
from tests.eval.tasks import git

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

#: The interpreter that makes the in-tree virtualenv; pytest comes from its site-packages.
BASE_PYTHON = getattr(sys, "_base_executable", sys.executable)

APP = textwrap.dedent(
    """
    from tinydep import double


    def quadruple(x):
        return double(double(x))


    def is_big(x):
        if x > 10:
            return True
        return False
    """
).lstrip()

APP_TESTS = textwrap.dedent(
    """
    from app import is_big, quadruple


    def test_quadruple():
        assert quadruple(3) == 12


    def test_is_big():
        assert is_big(11)
        assert not is_big(10)
    """
).lstrip()


def _wheel(directory: Path) -> Path:
    """`tinydep` 1.0 as a real wheel built by hand, its RECORD hashing every file."""
    dist = "tinydep-1.0"
    contents = {
        "tinydep/__init__.py": b"def double(x):\n    return x * 2\n",
        f"{dist}.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tinydep\nVersion: 1.0\n",
        f"{dist}.dist-info/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = []
    for rel, data in contents.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{rel},sha256={digest},{len(data)}")
    record.append(f"{dist}.dist-info/RECORD,,")
    contents[f"{dist}.dist-info/RECORD"] = "\n".join(record).encode()
    path = directory / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for rel, data in contents.items():
            archive.writestr(rel, data)
    return path


@pytest.fixture(scope="module")
def venv_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A committed repository whose tests import `tinydep`, installed only in `.venv`."""
    root = tmp_path_factory.mktemp("mutation-venv")
    repo = root / "app"
    (repo / "tests").mkdir(parents=True)
    (repo / "app.py").write_text(APP)
    (repo / "tests" / "test_app.py").write_text(APP_TESTS)
    (repo / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["."]\n')
    (repo / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n.venv/\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "passing")
    venv = repo / ".venv"
    subprocess.run(
        [BASE_PYTHON, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
        check=True,
    )
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index", "--no-deps"]
        + ["--disable-pip-version-check", str(_wheel(root))],
        check=True,
        capture_output=True,
    )
    # The host's own interpreter cannot import it: only the project's environment can.
    host = subprocess.run([BASE_PYTHON, "-c", "import tinydep"], capture_output=True, check=False)
    assert host.returncode != 0
    return repo


def test_the_interpreter_is_the_in_tree_virtualenvs(venv_repo: Path, tmp_path: Path) -> None:
    chosen = project_python(venv_repo)
    assert chosen.argv0 == chosen.host_path == str(venv_repo.resolve() / ".venv/bin/python")
    assert "in-tree virtualenv .venv" in chosen.source

    plain = tmp_path / "plain"
    plain.mkdir()
    assert project_python(plain).source == "PATH"


def test_tasks_are_generated_from_a_repository_that_needs_its_virtualenv(
    venv_repo: Path, tmp_path: Path
) -> None:
    out = tmp_path / "tasks"
    argv = [sys.executable, "-m", "assay", "tasks", "generate", str(venv_repo)]
    argv += ["--language", "python", "--count", "1", "--out", str(out), "--json"]
    argv += ["--store", str(tmp_path / "store.sqlite"), "--seed", "3"]
    done = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=1200)

    # The graph was built: every unit of app.py covered by the tests that passed there.
    assert done.stdout.startswith("{"), done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["graph"] == {"reused": False, "units": 2, "covered_units": 2}
    # A task made from a mutant that its tests really caught (an assertion, not an import
    # error: the mutant ran against the project's environment too).
    (task,) = report["tasks"]
    spec = load_task(task["folder"])
    assert spec.fail_to_pass
    assert all(t.startswith("tests/test_app.py::test_") for t in spec.fail_to_pass)
    assert "ModuleNotFoundError" not in spec.instruction
    assert "tinydep" not in spec.instruction

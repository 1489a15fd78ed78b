"""A meson-python project under `--install`: built in its own environment, not pip's.

meson-python's editable install imports a loader that runs the build again (`ninja`) when
the project is imported, with the tools of the environment that built it. pip builds in an
isolated environment it deletes afterwards, so every import of the project failed
(`FileNotFoundError: .../pip-build-env-.../bin/ninja`) and a pristine project was FAILED.
Its build requirements are now installed in the project's environment and the project
built there (`--no-build-isolation`), as meson-python's documentation asks. Real pip,
meson-python, meson and ninja from the index, the real `assay verify --install`; under
`--protect` too, where the loader is held to a known release (`assay.editable_loaders`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.tools.python import install_steps
from tests.attacks import change_on_base
from tests.cli import verified_json

pytestmark = pytest.mark.slow

PROJECT = {
    "pyproject.toml": (
        '[build-system]\nrequires = ["meson-python", "meson", "ninja"]\n'
        'build-backend = "mesonpy"\n\n'
        '[project]\nname = "calc"\nversion = "1.0"\n\n'
        '[project.optional-dependencies]\ntest = ["pytest"]\n\n'
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    ),
    "meson.build": (
        "project('calc', version: '1.0')\n"
        "py = import('python').find_installation()\n"
        "py.install_sources(['src/calc/__init__.py'], subdir: 'calc')\n"
    ),
    "src/calc/__init__.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}


def test_the_build_requirements_go_into_the_environment_first(tmp_path: Path) -> None:
    for rel, text in PROJECT.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    steps = {s.name: s.argv for s in install_steps(tmp_path)}
    assert steps["install-python-build-env"][-3:] == ("meson-python", "meson", "ninja"), steps
    assert "--no-build-isolation" in steps["install-python"], steps
    names = list(steps)
    assert names.index("install-python-build-env") < names.index("install-python"), names


@pytest.mark.parametrize(
    ("change", "status"),
    [
        ({"README.md": "calc\n"}, "VERIFIED"),
        ({"src/calc/__init__.py": "def add(a, b):\n    return a - b\n"}, "FAILED"),
    ],
    ids=["honest", "wrong-value"],
)
@pytest.mark.parametrize("protect", [False, True], ids=["plain", "protect"])
def test_a_meson_python_project_is_verified_by_its_tests(
    tmp_path: Path, change: dict[str, str], status: str, protect: bool
) -> None:
    repo = change_on_base(tmp_path / "repo", PROJECT, change, dedent=False)
    args = ("--install", *(("--base", "HEAD~1", "--protect") if protect else ()))
    report = verified_json(repo, tmp_path / "state", *args, timeout=600)
    assert report["status"] == status, (report["note"], report["output"])

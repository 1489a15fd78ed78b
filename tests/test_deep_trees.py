"""A tree thousands of folders deep: Python 3.11's `os.walk` recurses once a folder, and
such a tree (hostile, or a runaway generator's) ended every `assay verify` of it in
`assay could not finish (RecursionError)`. assay's walks of the tree are iterative."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.deep_removal import remove_deep
from assay.filetree import walk
from tests.cli import assay, no_traceback

DEPTH = 1500
PROJECT = {
    "pyproject.toml": '[project]\nname = "deep"\nversion = "0"\n\n'
    '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}


def deep_chain(top: Path, depth: int = DEPTH) -> Path:
    """`top/d/d/.../d` (`depth` folders) holding one file; made without recursion."""
    here = str(top)
    for _ in range(depth):
        here = os.path.join(here, "d")
        os.mkdir(here)
    Path(here, "leaf.txt").write_text("x")
    return Path(here)


@pytest.fixture
def tmp_path(tmp_path: Path) -> Iterator[Path]:
    """pytest's own, removed here: its clean-up of old runs' trees recurses too."""
    yield tmp_path
    remove_deep(tmp_path)


def test_walk_matches_os_walk_and_goes_as_deep_as_the_tree(tmp_path: Path) -> None:
    for name, text in PROJECT.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "link").symlink_to(tmp_path / "tests")  # a link is a file: never followed
    shallow = sorted((top, sorted(d), sorted(f)) for top, d, f in walk(str(tmp_path)))
    assert shallow == sorted((top, sorted(d), sorted(f)) for top, d, f in os.walk(tmp_path))
    leaf = deep_chain(tmp_path / "tests")
    assert str(leaf) in {top for top, _dirs, files in walk(str(tmp_path)) if "leaf.txt" in files}


def test_walk_prunes_what_the_caller_removes(tmp_path: Path) -> None:
    deep_chain(tmp_path, 3)
    (tmp_path / "e").mkdir()
    seen = []
    for top, dirs, _files in walk(str(tmp_path)):
        seen.append(os.path.relpath(top, tmp_path))
        dirs[:] = [name for name in dirs if name != "d"]
    assert seen == [".", "e"]


def test_a_project_with_a_folder_chain_thousands_deep_is_verified(tmp_path: Path) -> None:
    project = tmp_path / "p"
    for name, text in PROJECT.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    (project / "data").mkdir()
    deep_chain(project / "data")
    good = assay("verify", str(project), "--no-cache", timeout=240)
    no_traceback(good)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "VERIFIED" in good.stdout.splitlines()

    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    bad = assay("verify", str(project), "--no-cache", timeout=240)
    assert "FAILED" in bad.stdout.splitlines(), bad.stdout + bad.stderr
    assert "test_calc::test_add" in bad.stdout

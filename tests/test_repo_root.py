"""Which directory `assay verify` checks when started below a project's top."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from assay.discovery.autotools import CONFIGURE_AC
from assay.discovery.cmake import CMAKELISTS
from assay.discovery.make import JUSTFILES, MAKEFILES
from assay.discovery.meson import MESON_BUILD
from assay.repo_root import PROJECT_FILES, RootChoice, project_root
from assay.tools import ECOSYSTEMS


def _git_repository(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / "pyproject.toml").write_text("[project]\nname = 'outer'\n")
    return path.resolve()


def test_every_root_file_discovery_reads_makes_a_project() -> None:
    manifests = {name for e in ECOSYSTEMS for m in e.manifests for name in m.files}
    detected = {*CONFIGURE_AC, CMAKELISTS, MESON_BUILD, *MAKEFILES, *JUSTFILES, "noxfile.py"}
    assert (manifests | detected) - set(PROJECT_FILES) == set()


@pytest.mark.parametrize("manifest", ["pom.xml", "build.gradle", "configure.ac", "justfile"])
def test_a_project_inside_a_larger_git_repository_is_verified_itself(
    tmp_path: Path, manifest: str
) -> None:
    top = _git_repository(tmp_path / "outer")
    module = top / "cells" / "module"
    module.mkdir(parents=True)
    (module / manifest).write_text("")
    assert project_root(module) == RootChoice(module)


def test_a_directory_without_a_project_file_is_still_its_nearest_project(tmp_path: Path) -> None:
    top = _git_repository(tmp_path / "outer")
    below = top / "src" / "pkg"
    below.mkdir(parents=True)
    assert project_root(below).root == top


def test_a_repository_git_cannot_read_is_still_the_top(tmp_path: Path) -> None:
    """A broken `.git/HEAD` made git deny the repository, and the walk went on up to
    the project around it: the Stop hook verified the enclosing project, not the work."""
    outer = tmp_path / "outer"
    outer.mkdir()
    (outer / "pyproject.toml").write_text("[project]\nname = 'outer'\n")
    inner = outer / "work"
    subprocess.run(["git", "init", "-q", str(inner)], check=True)
    (inner / "tests").mkdir()
    (inner / ".git" / "HEAD").write_text("not a ref\n")
    assert project_root((inner / "tests").resolve()).root == inner.resolve()

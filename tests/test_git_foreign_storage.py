"""A working tree's `.git` cannot lead host-side git into another repository of the host."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from assay.safe_git import GitError, open_repository
from tests.test_git_safety import GIT_ENV


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    repo = tmp_path / "victim"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "secret.txt").write_text("hunter2\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "secret")
    return repo


def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "evil"
    tree.mkdir()
    (tree / "x.py").write_text("x = 1\n")
    return tree


def test_a_git_file_naming_another_repository_is_refused(tmp_path: Path, victim: Path) -> None:
    tree = _tree(tmp_path)
    (tree / ".git").write_text(f"gitdir: {victim / '.git'}\n")
    with pytest.raises(GitError, match="outside its working tree"):
        open_repository(tree, timeout=30)


def test_a_commondir_naming_another_repository_is_refused(tmp_path: Path, victim: Path) -> None:
    tree = _tree(tmp_path)
    (tree / ".git").mkdir()
    (tree / ".git" / "HEAD").write_text("ref: refs/heads/master\n")
    (tree / ".git" / "commondir").write_text(f"{victim / '.git'}\n")
    with pytest.raises(GitError, match="commondir"):
        open_repository(tree, timeout=30)


def test_links_into_another_repository_are_refused(tmp_path: Path, victim: Path) -> None:
    tree = _tree(tmp_path)
    (tree / ".git").mkdir()
    (tree / ".git" / "HEAD").write_text("ref: refs/heads/master\n")
    (tree / ".git" / "objects").symlink_to(victim / ".git" / "objects")
    (tree / ".git" / "refs").symlink_to(victim / ".git" / "refs")
    with pytest.raises(GitError, match="link out of the repository"):
        open_repository(tree, timeout=30)


def test_a_linked_worktree_and_a_submodule_are_still_read(tmp_path: Path, victim: Path) -> None:
    head = git(victim, "rev-parse", "HEAD").strip()
    git(victim, "worktree", "add", "-q", str(tmp_path / "linked"))
    assert open_repository(tmp_path / "linked", timeout=30).resolve_commit("HEAD") == head
    sup = tmp_path / "super"
    sup.mkdir()
    git(sup, "init", "-q")
    git(sup, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(victim), "sub")
    assert open_repository(sup / "sub", timeout=30).resolve_commit("HEAD") == head
    assert open_repository(victim, timeout=30).resolve_commit("HEAD") == head


def test_verify_against_another_repositorys_base_is_refused_and_reads_nothing_of_it(
    tmp_path: Path,
) -> None:
    """End to end: a tree with no repository of its own whose `.git` names another's, its
    code printing every test file it finds. `--base HEAD --protect` restored the other
    repository's tests into the workspace (its secret in assay's note), or was VERIFIED
    against that foreign base."""
    from tests.cli import assay, assay_env

    victim = tmp_path / "victim"
    (victim / "tests").mkdir(parents=True)
    (victim / "pyproject.toml").write_text('[project]\nname = "pkg"\nversion = "0.1"\n')
    (victim / "tests" / "test_a.py").write_text("# SECRET_TOKEN=hunter2\ndef test_a():\n    pass\n")
    git(victim, "init", "-q")
    git(victim, "add", "-A")
    git(victim, "commit", "-qm", "victim")
    tree = tmp_path / "evil"
    (tree / "tests").mkdir(parents=True)
    (tree / "pyproject.toml").write_text('[project]\nname = "pkg"\nversion = "0.1"\n')
    (tree / "tests" / "test_a.py").write_text("import pkg\n\ndef test_a():\n    pass\n")
    (tree / "pkg.py").write_text(
        "import pathlib\nprint([p.read_text() for p in pathlib.Path('tests').rglob('*')])\n"
    )
    (tree / ".git").write_text(f"gitdir: {victim / '.git'}\n")
    done = assay(
        "verify",
        "--json",
        "--base",
        "HEAD",
        "--protect",
        str(tree),
        env=assay_env(ASSAY_CACHE_DIR=str(tmp_path / "cache")),
        timeout=300,
    )
    assert "hunter2" not in done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    # A base that cannot be read is the caller's error to mend: no verdict, what is wrong.
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert "could not read --base 'HEAD'" in done.stderr, done.stderr
    assert "lies outside its working tree" in done.stderr, done.stderr


@pytest.mark.parametrize("relative", [False, True])
def test_alternates_borrowing_another_repositorys_objects_are_refused(
    tmp_path: Path, victim: Path, relative: bool
) -> None:
    # git reads every object of an alternate as the repository's own: a ref (or `--base`)
    # naming one of the victim's commits read its files, and `--protect` restored them
    # into the hostile tree's workspace.
    tree = _tree(tmp_path)
    git(tree, "init", "-q")
    objects = victim / ".git" / "objects"
    named = os.path.relpath(objects, tree / ".git" / "objects") if relative else str(objects)
    (tree / ".git" / "objects" / "info" / "alternates").write_text(f"{named}\n")
    git(tree, "update-ref", "refs/heads/base", git(victim, "rev-parse", "HEAD").strip())
    with pytest.raises(GitError, match="alternates"):
        open_repository(tree, timeout=30)


def test_alternates_within_the_tree_are_still_read(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    git(tree, "init", "-q")
    inner = tree / ".git" / "more-objects"
    inner.mkdir()
    (tree / ".git" / "objects" / "info" / "alternates").write_text("../more-objects\n")
    open_repository(tree, timeout=30)

"""Workspace copies and commit export."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from assay.sandbox.provision import CopyFailed, CopyMethod, copy_tree, export_commit, remove_tree


def test_copy_keeps_dotfiles_symlinks_and_modes(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / ".env").write_text("dot")
    (src / "pkg" / "run.sh").write_text("#!/bin/sh\n")
    (src / "pkg" / "run.sh").chmod(0o755)
    (src / "link").symlink_to("pkg/run.sh")
    dst = tmp_path / "dst"
    method = copy_tree(src, dst)
    assert method in (CopyMethod.REFLINK, CopyMethod.PARALLEL)
    assert (dst / ".env").read_text() == "dot"
    assert (dst / "link").is_symlink()
    assert (dst / "pkg" / "run.sh").stat().st_mode & 0o111
    # Independent files, not links to the source: writing the copy leaves the source alone.
    (dst / "pkg" / "run.sh").write_text("changed")
    assert (src / "pkg" / "run.sh").read_text() == "#!/bin/sh\n"


def test_export_commit_writes_that_commit_only(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "f.txt").write_text("v1")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    first = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True)
    (repo / "f.txt").write_text("v2")
    subprocess.run([*git, "commit", "-qam", "two"], check=True)
    out = tmp_path / "out"
    commit = export_commit(repo, "HEAD~1", out)
    assert commit == first.stdout.strip()
    assert (out / "f.txt").read_text() == "v1"
    assert not (out / ".git").exists()
    with pytest.raises(CopyFailed):
        export_commit(repo, "no-such-ref", tmp_path / "none")


def test_remove_tree_handles_read_only_directories(tmp_path: Path) -> None:
    tree = tmp_path / "t"
    (tree / "ro").mkdir(parents=True)
    (tree / "ro" / "f").write_text("x")
    (tree / "ro").chmod(0o500)
    remove_tree(tree)
    assert not tree.exists()

"""The agent's change is taken from its workspace as data: real files, real links, a real
FIFO and a planted `.git`, diffed against a fresh base and applied to it with the task's
protected paths left out."""

from __future__ import annotations

import os
from pathlib import Path

from assay.eval.change import apply_change, fresh_base, take_change
from assay.eval.sources import ResolvedSource
from assay.sandbox.provision import export_commit
from tests.eval.tasks import git, make_repo


def _workspace(tmp_path: Path) -> tuple[ResolvedSource, Path]:
    repo, bases = make_repo(tmp_path)
    source = ResolvedSource(repo=repo, commit=bases[1])
    workspace = tmp_path / "workspace"
    export_commit(repo, bases[1], workspace)
    return source, workspace


def test_the_change_is_a_diff_applied_to_a_fresh_base_without_protected_paths(
    tmp_path: Path,
) -> None:
    source, workspace = _workspace(tmp_path)
    (workspace / "calc.py").write_text(
        (workspace / "calc.py").read_text().replace("a - b", "a + b", 1)
    )
    (workspace / "notes.txt").write_text("new file\n")
    (workspace / "tests" / "test_calc.py").write_text("def test_nothing():\n    pass\n")
    (workspace / "pyproject.toml").unlink()
    os.symlink("/etc/shadow", workspace / "shadow-link")
    os.mkfifo(workspace / "pipe")
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("[core]\n\tfsmonitor = touch /tmp/pwned\n")
    (workspace / "__pycache__").mkdir()
    (workspace / "__pycache__" / "calc.cpython-311.pyc").write_bytes(b"\0planted")

    base = tmp_path / "verify"
    fresh_base(source, base)
    patch = tmp_path / "change.patch"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    change = take_change(workspace, base, scratch, patch)
    applied = apply_change(base, patch, change, ("tests/", "pyproject.toml"))

    assert applied.refused is None
    assert applied.files == (
        "calc.py",
        "notes.txt",
        "pyproject.toml",
        "shadow-link",
        "tests/test_calc.py",
    )
    assert applied.excluded == ("pyproject.toml", "tests/test_calc.py")
    assert any(s.startswith("pipe:") for s in applied.skipped), applied.skipped
    assert "return a + b" in (base / "calc.py").read_text()
    assert (base / "notes.txt").read_text() == "new file\n"
    # Protected paths are the base's, whatever the change did to them.
    assert (base / "pyproject.toml").exists()
    assert "test_add" in (base / "tests" / "test_calc.py").read_text()
    # A link is carried as a link, never followed; nothing of the planted .git or caches.
    assert os.readlink(base / "shadow-link") == "/etc/shadow"
    assert not (base / "__pycache__").exists()
    assert "fsmonitor" not in (base / ".git" / "config").read_text()
    assert not Path("/tmp/pwned").exists()
    assert git(base, "log", "--format=%s") == f"base {source.commit}"


def test_a_change_that_does_not_apply_is_refused_whole(tmp_path: Path) -> None:
    source, workspace = _workspace(tmp_path)
    (workspace / "calc.py").write_text("changed\n")
    base = tmp_path / "verify"
    fresh_base(source, base)
    patch = tmp_path / "change.patch"
    (tmp_path / "scratch").mkdir()
    change = take_change(workspace, base, tmp_path / "scratch", patch)
    (base / "calc.py").write_text("the base moved on\n")  # the diff's context no longer matches

    applied = apply_change(base, patch, change, ())

    assert applied.refused is not None and "git apply refused it" in applied.refused
    assert (base / "calc.py").read_text() == "the base moved on\n"

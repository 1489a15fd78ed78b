"""Workspace copies: what is copied, linked or left out, where it goes, and commit export."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from assay.sandbox import LocalSandbox, ProvisionError, provision
from assay.sandbox.provision import (
    WORKSPACE_DIR_ENV,
    CopyFailed,
    CopyMethod,
    copy_tree,
    export_commit,
    provision_copy,
    remove_tree,
    scan_source,
    scratch_dir,
)


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


# --------------------------------------------------------------------------- what is copied


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _fake_venv(root: Path) -> Path:
    """A tiny `.venv` whose `bin/tool` is a runnable script."""
    venv = root / ".venv"
    _tree(venv, {"pyvenv.cfg": "home = /usr/bin\n", "lib/site.txt": "installed\n"})
    tool = venv / "bin" / "tool"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\necho tool ran\n")
    tool.chmod(0o755)
    return venv


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A monorepo-shaped source with environments, caches and build output in every place."""
    src = tmp_path / "project"
    _tree(
        src,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "pkg/mod.py": "X = 1\n",
            "pkg/sub/__pycache__/mod.cpython-311.pyc": "bytecode",
            ".mypy_cache/3.11/cache.json": "{}",
            "node_modules/left-pad/index.js": "module.exports = 1\n",
            "target/debug/junk": "build output",
            "crates/c/Cargo.toml": "[package]\nname = 'c'\n",
            "crates/c/src/lib.rs": "pub fn f() {}\n",
            "crates/c/target/debug/junk": "build output",
            "packages/web/package.json": "{}\n",
            "packages/web/node_modules/react/index.js": "module.exports = 2\n",
            "src/target/keep.py": "# a source directory that happens to be named target\n",
            "docs/venv/notes.txt": "not a package root: copied\n",
            ".git/config": "[core]\n",
        },
    )
    _fake_venv(src)
    (src / "packages" / "web" / "deps").symlink_to("node_modules")
    return src


def test_scan_sorts_the_tree_by_the_rule(project: Path) -> None:
    layout = scan_source(project, link_git=True)
    assert layout.linked == (".git", ".venv", "node_modules", "packages/web/node_modules")
    assert layout.skipped == (
        ".mypy_cache",
        "crates/c/target",
        "pkg/sub/__pycache__",
        "target",
    )
    assert {"src/target/keep.py", "docs/venv/notes.txt", "packages/web/deps"} <= set(layout.files)
    assert not any(f.startswith((".venv", "node_modules", "target/")) for f in layout.files)
    allocated = [(project / f).lstat() for f in layout.files]  # a hole takes nothing
    assert layout.size == sum(min(s.st_size, s.st_blocks * 512) for s in allocated)
    # Without a read-only link available, .git is copied like any directory.
    assert ".git/config" in scan_source(project, link_git=False).files


def test_environments_are_links_to_the_source_and_caches_are_left_out(
    project: Path, tmp_path: Path
) -> None:
    dst = tmp_path / "ws"
    copy_tree(project, dst)
    for env in (".venv", "node_modules", "packages/web/node_modules"):
        assert (dst / env).is_symlink()
        assert os.readlink(dst / env) == str(project / env)
    assert (
        subprocess.run(
            [str(dst / ".venv" / "bin" / "tool")], capture_output=True, text=True, check=True
        ).stdout
        == "tool ran\n"
    )
    for gone in ("pkg/sub/__pycache__", ".mypy_cache", "target", "crates/c/target"):
        assert not os.path.lexists(dst / gone), gone
    assert (dst / "pkg" / "mod.py").read_text() == "X = 1\n"
    assert (dst / "src" / "target" / "keep.py").exists()
    assert (dst / "docs" / "venv" / "notes.txt").exists()
    assert os.readlink(dst / "packages" / "web" / "deps") == "node_modules"  # a link stays a link
    assert (dst / ".git").is_dir() and not (dst / ".git").is_symlink()


def test_cleanup_removes_the_links_and_leaves_the_source_environment(project: Path) -> None:
    sandbox = LocalSandbox()
    with sandbox.workspace(project) as ws:
        result = sandbox.run(ws, [".venv/bin/tool"], timeout=30)
        assert result.exit_code == 0 and result.stdout.text == "tool ran\n"
        assert ws.provisioned is not None
        assert ".venv" in ws.provisioned.linked
        assert "pkg/sub/__pycache__" in ws.provisioned.skipped
    assert not ws.path.exists()
    assert (project / ".venv" / "bin" / "tool").read_text() == "#!/bin/sh\necho tool ran\n"
    assert (project / "node_modules" / "left-pad" / "index.js").exists()


def test_a_commit_export_links_todays_environments(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _tree(repo, {"a.py": "x = 1\n", ".gitignore": ".venv/\n"})
    _fake_venv(repo)
    git = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    path, commit, record = provision_copy(
        repo, commit="HEAD", backend="t", run_id="r", link_git=True
    )
    try:
        assert commit is not None and record.method is CopyMethod.GIT_ARCHIVE
        assert (path / "a.py").read_text() == "x = 1\n"
        assert (path / ".venv").is_symlink()
        assert not os.path.lexists(path / ".git")  # a commit's tree has no repository state
        assert record.linked == (".venv",)
    finally:
        remove_tree(path)


# --------------------------------------------------------------------------- where it goes


def test_workspace_dir_can_be_chosen(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chosen = tmp_path / "scratch"
    chosen.mkdir()
    monkeypatch.setenv(WORKSPACE_DIR_ENV, str(chosen))
    path, _, record = provision_copy(project, commit=None, backend="t", run_id="r")
    try:
        assert path.parent == chosen
        assert record.location == str(chosen) and WORKSPACE_DIR_ENV in record.location_reason
        assert record.copied_files is not None and record.copied_files > 0
    finally:
        remove_tree(path)


def test_a_missing_workspace_dir_is_an_error_not_a_fallback(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(WORKSPACE_DIR_ENV, str(tmp_path / "absent"))
    with pytest.raises(ProvisionError):
        LocalSandbox().provision(project)


def test_a_tmpfs_with_room_is_preferred(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(WORKSPACE_DIR_ENV, raising=False)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    assert scratch_dir(1024).path == Path("/dev/shm")
    # Not enough room for four times the copy: the system temp dir, and the record says why.
    free = shutil.disk_usage("/dev/shm").free
    fallback = scratch_dir(free)
    assert fallback.path == Path(tempfile.gettempdir())
    assert "no tmpfs" in fallback.reason


def test_filesystem_type_uses_the_longest_mount_point() -> None:
    mounts = (
        "/dev/vda / ext4 rw 0 0\n"
        "tmpfs /dev/shm tmpfs rw 0 0\n"
        "tmpfs /mnt/with\\040space tmpfs rw 0 0\n"
    )
    assert provision.filesystem_type("/dev/shm/x", mounts) == "tmpfs"
    assert provision.filesystem_type("/dev/shmother", mounts) == "ext4"
    assert provision.filesystem_type("/mnt/with space/w", mounts) == "tmpfs"
    assert provision.filesystem_type("/mnt/with", mounts) == "ext4"


def test_clone_falls_back_to_a_copy_where_the_filesystem_cannot_share(tmp_path: Path) -> None:
    src = tmp_path / "a"
    src.write_text("content")
    src.chmod(0o640)
    provision.copy_entry(src, tmp_path / "b", clone=True)
    assert (tmp_path / "b").read_text() == "content"
    assert (tmp_path / "b").stat().st_mode & 0o777 == 0o640


def test_a_sparse_file_is_copied_with_its_holes(tmp_path: Path) -> None:
    """A tree's `truncate -s 10G` file (ignored by git, copied all the same) was written
    out whole: 10 GB of zeros onto the host's disk. Its data is copied, its holes stay."""
    src = tmp_path / "src"
    src.mkdir()
    with open(src / "big.bin", "wb") as big:
        big.seek(5 * 1024**3)
        big.write(b"middle")
        big.truncate(10 * 1024**3)
    assert scan_source(src, link_git=False).size < 1024**2
    path, _, record = provision_copy(src, commit=None, backend="test", run_id="sparse")
    try:
        copy = path / "big.bin"
        assert copy.stat().st_size == 10 * 1024**3
        assert copy.stat().st_blocks * 512 < 1024**2, "the holes were written out"
        with open(copy, "rb") as read:
            read.seek(5 * 1024**3 - 2)
            assert read.read(10) == b"\0\0middle\0\0"
        assert record.copied_bytes is not None and record.copied_bytes < 1024**2
    finally:
        remove_tree(path)


def test_a_copy_that_would_take_half_of_the_free_space_is_refused(tmp_path: Path) -> None:
    from assay.sandbox.provision import _check_room

    free = shutil.disk_usage(tmp_path).free
    _check_room(free // 4, tmp_path)
    with pytest.raises(CopyFailed, match=r"has [\d,]+ free: remove what"):
        _check_room(free // 2 + 10**9, tmp_path)


@pytest.mark.parametrize("names", [3, 80])  # by this thread, and by the pool
def test_a_file_with_many_names_takes_its_bytes_once(tmp_path: Path, names: int) -> None:
    """Hard links in the tree are one file: counted once, copied once, linked again in the
    workspace. Copied per name, a 20 MB file linked 50 times made 1 GB of workspace in
    RAM, and more names sent the workspace to disk, where nothing bounds the checks."""
    from assay.cache import workspace_digest
    from assay.source_layout import scan_source

    src = tmp_path / "src"
    (src / "blob").mkdir(parents=True)
    (src / "blob" / "f0").write_bytes(os.urandom(64 * 1024))
    for i in range(1, names):
        os.link(src / "blob" / "f0", src / "blob" / f"f{i}")
    (src / "other.txt").write_text("x\n")
    layout = scan_source(src, link_git=False)
    assert layout.size == 64 * 1024 + 2
    dst = tmp_path / "dst"
    _, copied = provision.copy_layout(src, dst, layout)
    assert set(copied) == set(layout.files) and None not in copied.values()
    inodes = {os.stat(dst / "blob" / f"f{i}").st_ino for i in range(names)}
    assert len(inodes) == 1
    assert (dst / "blob" / f"f{names - 1}").read_bytes() == (src / "blob" / "f0").read_bytes()
    workspace_digest(src, copied_as=copied)  # the copy holds the very files keyed


def test_verify_copies_a_file_with_many_names_once_and_keeps_them_one_file(
    tmp_path: Path,
) -> None:
    """End to end: 1 MB under 31 names is 1 MB of workspace, and a test still sees the names
    as one file (31 MB before)."""
    import json

    from tests.cli import assay, assay_env

    tree = tmp_path / "tree"
    (tree / "data").mkdir(parents=True)
    (tree / "data" / "f0").write_bytes(os.urandom(1_000_000))
    for i in range(1, 31):
        os.link(tree / "data" / "f0", tree / "data" / f"f{i}")
    (tree / "pyproject.toml").write_text('[project]\nname = "h"\nversion = "0"\n')
    (tree / "test_names.py").write_text(
        "import os\n\ndef test_one_file():\n"
        "    assert os.stat('data/f7').st_ino == os.stat('data/f30').st_ino\n"
    )
    done = assay("verify", "--json", "--no-cache", str(tree), env=assay_env(), timeout=300)
    report = json.loads(done.stdout)
    assert report["status"] == "VERIFIED", report["note"]
    assert report["extra"]["workspace"]["copied_bytes"] < 2_000_000, report["extra"]["workspace"]


# A red team's: the tree is hostile, and a checkout shared with a container whose root has
# the default CAP_MKNOD can hold device nodes. Copying one opened it on the host and copied
# the device's bytes (a disk, memory; an endless /dev/zero) into the workspace, for the
# checks to read; a fifo put in a file's place after it was looked at held the copy forever.


def test_a_device_node_of_the_tree_is_refused_without_being_read(tmp_path: Path) -> None:
    from assay.sandbox.provision import copy_entry

    # Never a skip: a test that does not run proves nothing, and CI runs as root.
    assert os.geteuid() == 0, "making a device node takes root"

    node = tmp_path / "disk.bin"
    os.mknod(node, 0o666 | 0o020000, os.makedev(1, 3))  # /dev/null here; any device alike
    with pytest.raises(shutil.SpecialFileError, match="is a device"):
        copy_entry(node, tmp_path / "copy")
    assert not os.path.lexists(tmp_path / "copy")


def test_a_fifo_in_a_files_place_is_refused_without_waiting(tmp_path: Path) -> None:
    import threading

    from assay.sandbox.provision import _copy_regular

    fifo = tmp_path / "data.txt"
    os.mkfifo(fifo)
    said: list[BaseException | None] = []

    def copy() -> None:
        try:
            _copy_regular(fifo, tmp_path / "copy", clone=False)
            said.append(None)
        except BaseException as exc:  # what the copy raised is the finding
            said.append(exc)

    worker = threading.Thread(target=copy, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # let it go before failing
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert not worker.is_alive(), "the copy waited on a fifo"
    assert isinstance(said[0], shutil.SpecialFileError), said

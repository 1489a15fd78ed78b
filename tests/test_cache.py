"""The verdict cache: keys that miss on any change, and a store safe under concurrent writers."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import time
from pathlib import Path

import pytest

import assay.cache
from assay.cache import (
    VerdictCache,
    cache_key,
    cacheable,
    environment_fingerprint,
    workspace_digest,
)
from assay.evidence import CheckerId
from assay.state_dir import CACHE_DIR_VAR, default_cache_dir
from assay.verdict import Status

PLAN = [{"name": "pytest", "kind": "test", "argv": ["pytest"]}]
CHECKERS = [CheckerId("pytest", "8.2.0", "/usr/bin/pytest")]
REPORT = {"status": "VERIFIED", "checks": [{"verdict": "pass", "cause": "exit_zero"}]}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x = 1\n")
    (root / "node_modules" / "dep").mkdir(parents=True)
    (root / "node_modules" / "dep" / "index.js").write_text("1")
    return root


def key_for(
    root: Path, plan=PLAN, checkers=CHECKERS, sandbox="bwrap 0.8.0", version="0.1.0"
) -> str:
    return cache_key(workspace_digest(root), plan, checkers, sandbox, assay_version=version)


def test_hit_on_an_unchanged_tree(tree: Path, tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "cache")
    cache.put(key_for(tree), REPORT)
    hit = cache.get(key_for(tree))
    assert hit is not None
    assert hit.report == REPORT
    assert hit.stored_at > 0


def test_miss_on_a_one_byte_change(tree: Path, tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "cache")
    cache.put(key_for(tree), REPORT)
    (tree / "src" / "a.py").write_text("x = 2\n")
    assert cache.get(key_for(tree)) is None


def test_miss_on_a_new_file_or_mode_change(tree: Path) -> None:
    before = key_for(tree)
    (tree / "src" / "a.py").chmod(0o755)
    assert key_for(tree) != before
    after_chmod = key_for(tree)
    (tree / "new.txt").write_text("")
    assert key_for(tree) != after_chmod


def test_caches_do_not_change_the_key_but_environments_do(tree: Path) -> None:
    before = key_for(tree)
    (tree / "src" / "__pycache__").mkdir()
    (tree / "src" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"rebuilt by the tool")
    assert key_for(tree) == before  # left out of the workspace: the tool rebuilds it
    (tree / "node_modules" / "dep" / "package.json").write_text('{"version": "2.0.0"}')
    assert key_for(tree) != before  # linked into the workspace: what the checks import


def test_miss_on_tool_version_plan_backend_or_assay_version(tree: Path) -> None:
    base = key_for(tree)
    assert key_for(tree, checkers=[CheckerId("pytest", "8.2.1", "/usr/bin/pytest")]) != base
    assert key_for(tree, plan=[*PLAN, {"name": "mypy"}]) != base
    assert key_for(tree, sandbox="local") != base
    assert key_for(tree, version="0.2.0") != base


def test_ignored_files_count_build_output_does_not(tree: Path) -> None:
    """The key covers what the workspace will hold, which is not what git tracks."""
    subprocess.run(["git", "-C", str(tree), "init", "-q"], check=True)
    (tree / ".gitignore").write_text("conftest.py\ntarget/\n")
    (tree / ".git" / "info" / "exclude").write_text("sitecustomize.py\n")
    before = key_for(tree)
    (tree / "target").mkdir()
    (tree / "target" / "out.bin").write_text("artefact")
    assert key_for(tree) == before  # build output: left out of the workspace
    (tree / "conftest.py").write_text("raise SystemExit\n")
    after_conftest = key_for(tree)
    assert after_conftest != before  # ignored by .gitignore, copied all the same
    (tree / "sitecustomize.py").write_text("raise SystemExit\n")
    after_exclude = key_for(tree)
    assert after_exclude != after_conftest  # ignored by .git/info/exclude
    (tree / "src" / "empty").mkdir()
    assert key_for(tree) != after_exclude  # an empty directory imports (a namespace package)


def test_only_trustworthy_reports_are_cacheable() -> None:
    assert cacheable(Status.VERIFIED, [{"verdict": "pass", "cause": "exit_zero"}])
    assert cacheable("FAILED", [{"verdict": "fail", "cause": "exit_nonzero"}])
    assert not cacheable(Status.INDETERMINATE, [{"verdict": "inconclusive", "cause": "timeout"}])
    assert not cacheable(Status.UNVERIFIED, [])
    assert not cacheable(
        Status.FAILED,
        [
            {"verdict": "fail", "cause": "exit_nonzero"},
            {"verdict": "inconclusive", "cause": "signal"},
        ],
    )
    assert not cacheable(Status.FAILED, [{"verdict": "fail", "cause": "verifier_timeout"}])


def test_size_bound_evicts_oldest(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "cache", max_bytes=2000)
    payload = {"blob": "x" * 600}
    for i in range(6):
        cache.put(f"k{i}", payload)
    assert cache.get("k0") is None
    assert cache.get("k5") is not None
    assert len(cache) <= 3


def test_cache_dir_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(CACHE_DIR_VAR, str(tmp_path / "explicit"))
    assert default_cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv(CACHE_DIR_VAR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "assay"


def _writer(directory: str, worker: int, rounds: int) -> None:
    cache = VerdictCache(directory)
    for i in range(rounds):
        cache.put("shared", {"worker": worker, "round": i, "pad": "p" * 500})
        cache.put(f"own-{worker}-{i}", {"worker": worker, "round": i})
        hit = cache.get("shared")
        assert hit is not None and "worker" in hit.report


@pytest.mark.slow
def test_concurrent_writers_do_not_corrupt(tmp_path: Path) -> None:
    directory = str(tmp_path / "cache")
    ctx = multiprocessing.get_context("spawn")
    workers = [ctx.Process(target=_writer, args=(directory, w, 25)) for w in range(4)]
    for p in workers:
        p.start()
    for p in workers:
        p.join(60)
    assert [p.exitcode for p in workers] == [0, 0, 0, 0]
    cache = VerdictCache(directory)
    assert len(cache) == 1 + 4 * 25
    shared = cache.get("shared")
    assert shared is not None and shared.report["round"] == 24
    import sqlite3

    with sqlite3.connect(cache.path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_listing_never_runs_the_repository_fsmonitor(tree: Path, tmp_path: Path) -> None:
    """A repository's config is not assay's to execute, and a lying monitor could hide files."""
    marker = tmp_path / "fsmonitor-ran"
    subprocess.run(["git", "-C", str(tree), "init", "-q"], check=True)
    subprocess.run(
        ["git", "-C", str(tree), "config", "core.fsmonitor", f"touch {marker}; false #"], check=True
    )
    workspace_digest(tree)
    assert not marker.exists()


# --------------------------------------------------------------------------- the file memo


def rewrite_keeping_size_and_mtime(path: Path, text: str) -> None:
    before = path.stat()
    assert len(text.encode()) == before.st_size
    path.write_text(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_memo_gives_the_same_digest_and_remembers_settled_files(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(assay.cache, "RACY_SECONDS", 0.0)
    cache = VerdictCache(tmp_path / "cache")
    plain = workspace_digest(tree)
    assert workspace_digest(tree, memo=cache) == plain
    assert set(cache.remembered_files(str(tree.resolve()))) == {"src/a.py"}
    assert workspace_digest(tree, memo=cache) == plain  # now from the memo


def test_memo_sees_a_rewrite_that_keeps_size_and_mtime(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The change time moves on every write; nobody but the kernel can put it back."""
    monkeypatch.setattr(assay.cache, "RACY_SECONDS", 0.0)
    cache = VerdictCache(tmp_path / "cache")
    before = workspace_digest(tree, memo=cache)
    time.sleep(0.05)  # past a tick of the coarse clock change times are taken from
    rewrite_keeping_size_and_mtime(tree / "src" / "a.py", "x = 9\n")
    assert workspace_digest(tree, memo=cache) != before


def test_a_file_written_just_now_is_not_trusted_by_its_stat(tree: Path, tmp_path: Path) -> None:
    """Two writes within one tick can leave a stat as it was: such a file is read each time."""
    cache = VerdictCache(tmp_path / "cache")
    before = workspace_digest(tree, memo=cache)
    rewrite_keeping_size_and_mtime(tree / "src" / "a.py", "x = 9\n")  # no sleep
    assert workspace_digest(tree, memo=cache) != before
    assert cache.remembered_files(str(tree.resolve())) == {}


def test_an_unchanged_tree_is_keyed_by_its_listing_without_the_file_rows(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(assay.cache, "RACY_SECONDS", 0.0)
    cache = VerdictCache(tmp_path / "cache")
    plain = workspace_digest(tree)
    assert workspace_digest(tree, memo=cache) == plain
    assert cache.remembered_tree(str(tree.resolve())) is not None

    def no_file_rows(root: str) -> dict[str, tuple[str, bytes]]:
        raise AssertionError("an unchanged tree read its per-file memo")

    monkeypatch.setattr(cache, "remembered_files", no_file_rows)
    assert workspace_digest(tree, memo=cache) == plain


@pytest.mark.parametrize(
    "change",
    [
        lambda root: (root / "src" / "b.py").write_text("y = 2\n"),
        lambda root: (root / "src" / "a.py").unlink(),
        lambda root: (root / "src" / "a.py").rename(root / "src" / "c.py"),
        lambda root: (root / "empty").mkdir(),
        lambda root: (root / "src" / "a.py").chmod(0o755),
    ],
    ids=["added", "removed", "renamed", "new empty dir", "made executable"],
)
def test_a_tree_listed_differently_is_keyed_anew(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change
) -> None:
    monkeypatch.setattr(assay.cache, "RACY_SECONDS", 0.0)
    cache = VerdictCache(tmp_path / "cache")
    before = workspace_digest(tree, memo=cache)
    change(tree)
    assert workspace_digest(tree, memo=cache) == workspace_digest(tree) != before


def test_a_tree_with_a_link_is_named_by_its_listing_too(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(assay.cache, "RACY_SECONDS", 0.0)
    (tree / "src" / "alias.py").symlink_to("a.py")
    cache = VerdictCache(tmp_path / "cache")
    before = workspace_digest(tree, memo=cache)
    assert cache.remembered_tree(str(tree.resolve())) is not None
    (tree / "src" / "alias.py").unlink()
    (tree / "src" / "alias.py").symlink_to("b.py")
    assert workspace_digest(tree, memo=cache) == workspace_digest(tree) != before


def test_a_tree_with_a_file_written_just_now_is_not_named_by_its_listing(
    tree: Path, tmp_path: Path
) -> None:
    cache = VerdictCache(tmp_path / "cache")
    workspace_digest(tree, memo=cache)
    assert cache.remembered_tree(str(tree.resolve())) is None


def test_a_name_that_is_not_utf8_is_keyed_without_the_memo(tree: Path, tmp_path: Path) -> None:
    (tree / os.fsdecode(b"\xff.py")).write_text("y = 1\n")
    cache = VerdictCache(tmp_path / "cache")
    assert workspace_digest(tree, memo=cache) == workspace_digest(tree)


# --------------------------------------------------------------------------- environments


def test_a_package_upgrade_that_keeps_sizes_and_mtimes_is_seen(tree: Path) -> None:
    """npm extracts with one fixed mtime; a new version can have the same sizes too."""
    manifest = tree / "node_modules" / "dep" / "package.json"
    manifest.write_text('{"name": "dep", "version": "1.0.0"}')
    os.utime(manifest, (499162500, 499162500))
    before = environment_fingerprint(tree, "node_modules")
    time.sleep(0.05)
    rewrite_keeping_size_and_mtime(manifest, '{"name": "dep", "version": "2.0.0"}')
    assert environment_fingerprint(tree, "node_modules") != before


def test_scoped_and_nested_packages_are_seen(tree: Path) -> None:
    scoped = tree / "node_modules" / "@scope" / "pkg"
    nested = tree / "node_modules" / "dep" / "node_modules" / "inner"
    for package in (scoped, nested):
        package.mkdir(parents=True)
        (package / "package.json").write_text('{"version": "1.0.0"}')
    for package in (scoped, nested):
        before = environment_fingerprint(tree, "node_modules")
        time.sleep(0.05)
        rewrite_keeping_size_and_mtime(package / "package.json", '{"version": "2.0.0"}')
        assert environment_fingerprint(tree, "node_modules") != before, package


def test_install_records_rewritten_in_place_are_seen(tree: Path) -> None:
    """npm's record of what it installed, and an editable install's `.pth` (which says
    where the code is loaded from), rewritten with their sizes and mtimes kept."""
    lock = tree / "node_modules" / ".package-lock.json"
    lock.write_text('{"packages": {"node_modules/dep": {"version": "1.0.0"}}}')
    site = tree / ".venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (tree / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    pth = site / "__editable__.proj-1.0.pth"
    pth.write_text("/src/a\n")
    before = key_for(tree)
    time.sleep(0.05)
    rewrite_keeping_size_and_mtime(pth, "/src/b\n")
    after_pth = key_for(tree)
    assert after_pth != before
    rewrite_keeping_size_and_mtime(lock, lock.read_text().replace("1.0.0", "2.0.0"))
    assert key_for(tree) != after_pth


def test_the_interpreter_a_venv_points_to_is_part_of_it(tree: Path, tmp_path: Path) -> None:
    """An upgraded base Python changes what the venv runs; the link itself stays the same."""
    base = tmp_path / "base" / "python3.11"
    base.parent.mkdir()
    base.write_text("interpreter 1")
    (tree / ".venv" / "bin").mkdir(parents=True)
    (tree / ".venv" / "pyvenv.cfg").write_text(f"home = {base.parent}\n")
    (tree / ".venv" / "bin" / "python").symlink_to(base)
    before = key_for(tree)
    base.unlink()
    base.write_text("interpreter 2")  # a new inode where the link points
    assert key_for(tree) != before


def test_links_out_of_the_tree_are_keyed_by_target_not_followed(tree: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("s = 1\n")
    (tree / "node_modules" / "escape").symlink_to(outside)
    (tree / "linked-src").symlink_to(outside)
    before = key_for(tree)
    (outside / "secret.py").write_text("s = 2\n")
    (outside / "more.py").write_text("")
    assert key_for(tree) == before  # never walked nor read
    (tree / "node_modules" / "escape").unlink()
    (tree / "node_modules" / "escape").symlink_to(tmp_path)
    assert key_for(tree) != before


def test_a_fifo_in_an_environment_is_looked_at_not_opened(tree: Path) -> None:
    """Opening a FIFO for reading blocks until a writer comes: a stat never opens it."""
    os.mkfifo(tree / "node_modules" / "dep" / "pipe")
    assert len(environment_fingerprint(tree, "node_modules")) == 32


def test_an_environment_that_is_a_link_is_not_walked(tree: Path, tmp_path: Path) -> None:
    """`.venv -> ../elsewhere` is copied as a link: its target is the key, never its content."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "lib").mkdir(parents=True)
    (tree / ".venv").symlink_to(elsewhere)
    before = key_for(tree)
    (elsewhere / "lib" / "mod.py").write_text("")
    assert key_for(tree) == before

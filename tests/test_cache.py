"""The verdict cache: keys that miss on any change, and a store safe under concurrent writers."""

from __future__ import annotations

import multiprocessing
import subprocess
from pathlib import Path

import pytest

from assay.cache import (
    CACHE_DIR_VAR,
    VerdictCache,
    cache_key,
    cacheable,
    default_cache_dir,
    workspace_digest,
)
from assay.evidence import CheckerId
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


def test_skipped_directories_do_not_change_the_key(tree: Path) -> None:
    before = key_for(tree)
    (tree / "node_modules" / "dep" / "index.js").write_text("2")
    assert key_for(tree) == before


def test_miss_on_tool_version_plan_backend_or_assay_version(tree: Path) -> None:
    base = key_for(tree)
    assert key_for(tree, checkers=[CheckerId("pytest", "8.2.1", "/usr/bin/pytest")]) != base
    assert key_for(tree, plan=[*PLAN, {"name": "mypy"}]) != base
    assert key_for(tree, sandbox="local") != base
    assert key_for(tree, version="0.2.0") != base


def test_git_tree_uses_tracked_and_untracked_not_ignored(tree: Path) -> None:
    subprocess.run(["git", "-C", str(tree), "init", "-q"], check=True)
    (tree / ".gitignore").write_text("build/\nnode_modules/\n")
    before = key_for(tree)
    (tree / "build").mkdir()
    (tree / "build" / "out.bin").write_text("artefact")
    assert key_for(tree) == before  # ignored
    (tree / "untracked.py").write_text("y = 1\n")
    assert key_for(tree) != before  # untracked but not ignored


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

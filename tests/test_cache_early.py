"""A cache hit is answered before any sandbox is made, and stays exactly as strict.

The seam: `$ASSAY_WORKSPACE_DIR` names a regular file, so no workspace can be made at
all. A run that needs one comes back INDETERMINATE (`sandbox_unavailable`); a cache hit
answered from the source tree alone never notices.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from assay.pipeline import VerifyOptions, verify
from assay.probe_record import RACY_WINDOW_NS
from assay.report import Report
from assay.verdict import Status
from tests.cli import VENV_BIN, path_with_venv
from tests.repos import PASSING_PYTEST, write

#: Long enough for a binary written now to be trusted by its stat (the probe record's rule).
SETTLE_S = RACY_WINDOW_NS / 1e9 + 0.5


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PATH", path_with_venv())
    return write(tmp_path / "repo", PASSING_PYTEST)


def no_workspace_can_be_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    monkeypatch.setenv("ASSAY_WORKSPACE_DIR", str(blocker))


def run(repo: Path, cache: Path, sandbox: str) -> Report:
    return verify(repo, VerifyOptions(sandbox=sandbox, cache_dir=str(cache)))


@pytest.mark.parametrize("sandbox", ["local", "auto"])
def test_a_cache_hit_makes_no_workspace(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: str
) -> None:
    if sandbox == "auto" and shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is not installed")
    cache = tmp_path / "cache"
    first = run(repo, cache, sandbox)
    assert first.status is Status.VERIFIED, first.note
    assert first.record.cached is None
    no_workspace_can_be_made(tmp_path, monkeypatch)
    again = run(repo, cache, sandbox)
    assert again.status is Status.VERIFIED, again.note
    assert again.record.cached is not None


def test_the_seam_is_real_a_miss_cannot_run(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    assert run(repo, cache, "local").status is Status.VERIFIED
    (repo / "tests" / "test_a.py").write_text("def test_a():\n    assert 2 + 2 == 4\n")
    no_workspace_can_be_made(tmp_path, monkeypatch)
    again = run(repo, cache, "local")
    assert again.status is Status.INDETERMINATE
    assert again.record.cached is None


def test_a_touched_file_misses(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    assert run(repo, cache, "local").status is Status.VERIFIED
    test_file = repo / "tests" / "test_a.py"
    before = test_file.stat()
    test_file.write_text("def test_a():\n    assert 1 + 1 == 3\n")  # same size
    os.utime(test_file, ns=(before.st_atime_ns, before.st_mtime_ns))
    again = run(repo, cache, "local")
    assert again.status is Status.FAILED
    assert again.record.cached is None


def test_other_options_miss(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    assert run(repo, cache, "local").status is Status.VERIFIED
    no_workspace_can_be_made(tmp_path, monkeypatch)
    canaries = verify(repo, VerifyOptions(sandbox="local", cache_dir=str(cache), canaries=True))
    assert canaries.record.cached is None
    timeout = verify(repo, VerifyOptions(sandbox="local", cache_dir=str(cache), timeout_s=77))
    assert timeout.record.cached is None


def test_a_changed_toolchain_binary_misses(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ruff, copied to a directory first on PATH: replaced by another build of itself (the
    same bytes plus one), the run must not be answered from the cache."""
    ruff = shutil.which("ruff", path=str(VENV_BIN))
    assert ruff is not None
    tools = tmp_path / "tools"
    tools.mkdir()
    shutil.copy2(ruff, tools / "ruff")
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{path_with_venv()}")
    (repo / "pyproject.toml").write_text("[tool.pytest.ini_options]\n\n[tool.ruff]\n")
    time.sleep(SETTLE_S)
    cache = tmp_path / "cache"
    first = run(repo, cache, "local")
    assert first.status is Status.VERIFIED, first.note
    assert any(check.check.tool == "ruff" for check in first.checks)
    no_workspace_can_be_made(tmp_path, monkeypatch)
    assert run(repo, cache, "local").record.cached is not None  # unchanged: a hit
    with open(tools / "ruff", "ab") as binary:
        binary.write(b"\0")
    again = run(repo, cache, "local")
    assert again.record.cached is None
    assert again.status is Status.INDETERMINATE


def test_a_fifo_named_as_a_tool_is_not_opened_to_fingerprint_it(tmp_path: Path) -> None:
    """A repository's `.venv/bin/pytest` turned into a FIFO after it was found: reading its
    `#!` line would block the host for ever."""
    fifo = tmp_path / "pytest"
    os.mkfifo(fifo)
    code = "import sys; from assay.probe_record import fingerprint; print(fingerprint(sys.argv[1]))"
    done = subprocess.run(
        [sys.executable, "-c", code, str(fifo)],
        check=False,
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "None"


def node_modules(root: Path, packages: int = 40) -> Path:
    for p in range(packages):
        write(
            root / "node_modules" / f"pkg{p}",
            {"package.json": f'{{"name": "pkg{p}"}}', "index.js": f"module.exports = {p};\n"},
        )
    write(root / "node_modules", {".package-lock.json": '{"lockfileVersion": 3}'})
    return root


def test_node_modules_is_remembered_and_a_file_changed_inside_still_misses(tmp_path: Path) -> None:
    from assay.cache import VerdictCache, environment_fingerprint

    tree = node_modules(tmp_path / "repo")
    memo = VerdictCache(tmp_path / "cache")
    first = environment_fingerprint(tree, "node_modules", memo=memo)
    assert environment_fingerprint(tree, "node_modules") == first
    time.sleep(SETTLE_S)
    assert environment_fingerprint(tree, "node_modules", memo=memo) == first
    # Remembered: the lock file npm keeps is not read again while nothing in the tree changed.
    assert memo.remembered_environment(str(tree.resolve()), "node_modules") is not None
    index = tree / "node_modules" / "pkg7" / "index.js"
    before = index.stat()
    index.write_text("module.exports = 8;\n")  # same size, mtime put back
    os.utime(index, ns=(before.st_atime_ns, before.st_mtime_ns))
    changed = environment_fingerprint(tree, "node_modules", memo=memo)
    assert changed != first
    assert changed == environment_fingerprint(tree, "node_modules")


def test_a_package_added_or_removed_under_a_remembered_node_modules_misses(
    tmp_path: Path,
) -> None:
    from assay.cache import VerdictCache, environment_fingerprint

    tree = node_modules(tmp_path / "repo")
    memo = VerdictCache(tmp_path / "cache")
    time.sleep(SETTLE_S)
    first = environment_fingerprint(tree, "node_modules", memo=memo)
    assert environment_fingerprint(tree, "node_modules", memo=memo) == first
    shutil.rmtree(tree / "node_modules" / "pkg3")
    gone = environment_fingerprint(tree, "node_modules", memo=memo)
    assert gone != first
    moved_in = node_modules(tmp_path / "elsewhere", packages=1) / "node_modules" / "pkg0"
    os.rename(moved_in, tree / "node_modules" / "pkg3")  # an old directory, moved in whole
    assert environment_fingerprint(tree, "node_modules", memo=memo) not in (first, gone)

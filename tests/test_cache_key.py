"""The cache key covers what the workspace will hold: installed environments and ignored files.

Each test verifies a real repository in bubblewrap, changes one thing the checks depend
on, and verifies again: the second run must not be served from the cache.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.pipeline import VerifyOptions, verify
from assay.report import Report
from assay.verdict import Status
from tests.repos import commit_all

#: The interpreter the test virtualenvs are made from: the one this venv was made from,
#: whose own site-packages holds pytest (shown to the test venvs as system site-packages).
BASE_PYTHON = getattr(sys, "_base_executable", sys.executable)
#: npm extracts every file with this mtime, so an upgrade can keep mtimes and sizes.
NPM_MTIME = 499162500

DEP_TEST = "import tinydep\n\n\ndef test_value():\n    assert tinydep.VALUE == 1\n"
JS_TEST = (
    "const test = require('node:test');\n"
    "const assert = require('node:assert');\n"
    "const dep = require('tinydep');\n"
    "test('dep', () => { assert.strictEqual(dep.value, 1); });\n"
)


def run_verify(repo: Path, cache: Path) -> Report:
    return verify(repo, VerifyOptions(sandbox="bwrap", cache_dir=str(cache)))


def wheel(directory: Path, version: str, value: int) -> Path:
    """A real wheel of `tinydep` (one module holding VALUE), built by hand: no index needed."""
    name = f"tinydep-{version}"
    path = directory / f"{name}-py3-none-any.whl"
    module = f"VALUE = {value}\n"
    metadata = f"Metadata-Version: 2.1\nName: tinydep\nVersion: {version}\n"
    wheel_file = "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("tinydep.py", module)
        archive.writestr(f"{name}.dist-info/METADATA", metadata)
        archive.writestr(f"{name}.dist-info/WHEEL", wheel_file)
        archive.writestr(f"{name}.dist-info/RECORD", "")
    return path


def pip_install(repo: Path, *args: str) -> None:
    subprocess.run(
        [str(repo / ".venv" / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index"]
        + ["--no-deps", "--disable-pip-version-check", *args],
        check=True,
        capture_output=True,
    )


@pytest.fixture
def python_repo(tmp_path: Path) -> Path:
    """A git repository whose test imports `tinydep` 1.0, installed with pip in its `.venv`."""
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (repo / "tests" / "test_dep.py").write_text(DEP_TEST)
    (repo / ".gitignore").write_text(".venv/\nconftest.py\n")
    subprocess.run(
        [BASE_PYTHON, "-m", "venv", "--system-site-packages", "--without-pip", str(repo / ".venv")],
        check=True,
    )
    pip_install(repo, str(wheel(tmp_path, "1.0", 1)))
    commit_all(repo, "init")
    return repo


def site_packages(repo: Path) -> Path:
    (found,) = (repo / ".venv" / "lib").glob("python3*/site-packages")
    return found


def assert_verified_then_hit(repo: Path, cache: Path) -> None:
    first = run_verify(repo, cache)
    assert first.status is Status.VERIFIED, first.note
    assert "cached" not in first.extra
    again = run_verify(repo, cache)
    assert again.status is Status.VERIFIED and "cached" in again.extra, again.extra


def assert_recomputed_and_failed(repo: Path, cache: Path) -> None:
    report = run_verify(repo, cache)
    assert "cached" not in report.extra, "served from the cache after the change"
    assert report.status is Status.FAILED, report.note


@pytest.mark.slow
def test_nothing_changed_is_a_hit(python_repo: Path, tmp_path: Path) -> None:
    assert_verified_then_hit(python_repo, tmp_path / "cache")


@pytest.mark.slow
def test_another_installed_version_is_a_miss(python_repo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert_verified_then_hit(python_repo, cache)
    pip_install(python_repo, str(wheel(tmp_path, "2.0", 2)))
    assert_recomputed_and_failed(python_repo, cache)


@pytest.mark.slow
def test_an_installed_module_edited_in_place_is_a_miss(python_repo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert_verified_then_hit(python_repo, cache)
    module = site_packages(python_repo) / "tinydep.py"
    before = module.stat()
    module.write_text("VALUE = 30\n")  # its mtime put back: the key must not rely on it
    os.utime(module, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert_recomputed_and_failed(python_repo, cache)


@pytest.mark.slow
def test_an_editable_install_pointing_elsewhere_is_a_miss(
    python_repo: Path, tmp_path: Path
) -> None:
    """An `__editable__*.pth` says where the code is: pointing it elsewhere changes what runs."""
    cache = tmp_path / "cache"
    for name, value in (("good", 1), ("bad", 2)):
        (python_repo / "vendor" / name).mkdir(parents=True)
        (python_repo / "vendor" / name / "tinydep.py").write_text(f"VALUE = {value}\n")
    site = site_packages(python_repo)
    subprocess.run(
        [str(python_repo / ".venv" / "bin" / "python"), "-m", "pip", "uninstall", "-qy", "tinydep"],
        check=True,
        capture_output=True,
    )
    site.mkdir(exist_ok=True)  # pip removes a directory it leaves empty
    # Relative to the working directory, so that it names the workspace's copy.
    pth = site / "__editable__.tinydep-1.0.pth"
    pth.write_text("import sys; sys.path.insert(0, 'vendor/good')\n")
    assert_verified_then_hit(python_repo, cache)
    before = pth.stat()
    pth.write_text("import sys; sys.path.insert(0, 'vendor/bad')\n")
    os.utime(pth, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert_recomputed_and_failed(python_repo, cache)


@pytest.mark.slow
def test_an_ignored_conftest_is_a_miss(python_repo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert_verified_then_hit(python_repo, cache)
    (python_repo / "conftest.py").write_text("import tinydep\n\ntinydep.VALUE = 2\n")
    assert_recomputed_and_failed(python_repo, cache)


@pytest.mark.slow
def test_an_excluded_conftest_changed_is_a_miss(python_repo: Path, tmp_path: Path) -> None:
    """Ignored through `.git/info/exclude`, present from the start, then edited."""
    cache = tmp_path / "cache"
    (python_repo / ".git" / "info" / "exclude").write_text("tests/conftest.py\n")
    conftest = python_repo / "tests" / "conftest.py"
    conftest.write_text("import tinydep\n\ntinydep.VALUE = 1\n")
    assert_verified_then_hit(python_repo, cache)
    conftest.write_text("import tinydep\n\ntinydep.VALUE = 2\n")
    assert_recomputed_and_failed(python_repo, cache)


def write_node_package(repo: Path, version: str, value: int) -> None:
    """`node_modules/tinydep` as npm leaves it: every file with npm's fixed mtime."""
    package = repo / "node_modules" / "tinydep"
    package.mkdir(parents=True, exist_ok=True)
    files = {
        "package.json": json.dumps({"name": "tinydep", "version": version, "main": "index.js"}),
        "index.js": f"module.exports = {{ value: {value} }};\n",
    }
    for name, text in files.items():
        (package / name).write_text(text)
        os.utime(package / name, (NPM_MTIME, NPM_MTIME))


def test_another_node_package_version_is_a_miss(tmp_path: Path) -> None:
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    (repo / "test").mkdir(parents=True)
    (repo / "package.json").write_text(json.dumps({"name": "x", "version": "1.0.0"}))
    (repo / "test" / "dep.js").write_text(JS_TEST)
    write_node_package(repo, "1.0.0", 1)
    assert_verified_then_hit(repo, cache)
    time.sleep(0.05)  # past a tick of the coarse clock change times are taken from
    write_node_package(repo, "2.0.0", 2)  # same sizes, same mtimes: what an upgrade can look like
    assert_recomputed_and_failed(repo, cache)


@pytest.mark.slow
def test_a_tree_edited_while_its_workspace_is_made_is_never_cached(
    python_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key is the tree's digest: a tree changed between that digest and the copy the
    checks ran on must not get the copy's verdict stored under its own key."""
    from assay import session as sessions

    cache = tmp_path / "cache"
    real_open_session = sessions.open_session
    edited = []

    @contextlib.contextmanager
    def open_then_edit(*args: Any, **kwargs: Any) -> Iterator[Any]:
        with real_open_session(*args, **kwargs) as session:
            if not edited:  # the workspace is made: now the tree changes under it, for real
                (python_repo / "tests" / "test_dep.py").write_text(DEP_TEST.replace("== 1", "== 2"))
                edited.append(True)
            yield session

    monkeypatch.setattr(sessions, "open_session", open_then_edit)
    first = run_verify(python_repo, cache)
    assert first.status is Status.VERIFIED  # the copy was made from the passing tree
    monkeypatch.setattr(sessions, "open_session", real_open_session)
    second = run_verify(python_repo, cache)
    assert second.record.cached is None, "the edited tree was served the old copy's verdict"
    assert second.status is Status.FAILED


@pytest.mark.slow
def test_a_file_made_unreadable_is_a_miss(python_repo: Path, tmp_path: Path) -> None:
    """A workspace keeps each file's mode, and a test sees it: `chmod 000` on the data a
    test reads fails it (the check runs as no owner of the file), and a verdict cached from
    before the change must not answer for it."""
    cache = tmp_path / "cache"
    (python_repo / "tests" / "data.txt").write_text("1\n")
    (python_repo / "tests" / "test_data.py").write_text(
        "from pathlib import Path\n\n\ndef test_data():\n"
        "    assert (Path(__file__).parent / 'data.txt').read_text() == '1\\n'\n"
    )
    assert_verified_then_hit(python_repo, cache)
    (python_repo / "tests" / "data.txt").chmod(0)
    assert_recomputed_and_failed(python_repo, cache)


#: A target built from `in.txt` by a recipe that fails: make runs it only once `in.txt` is
#: newer than `out.txt`.
STALE_TARGET_MAKEFILE = "test: out.txt\n\tpython3 -m pytest -q\n\nout.txt: in.txt\n\tfalse\n"


@pytest.mark.slow
def test_a_file_touched_so_that_make_rebuilds_is_a_miss(tmp_path: Path) -> None:
    """The workspace keeps the order of its files' times (make goes by it): after `touch
    in.txt` make runs the failing recipe, and the verdict from before must not answer."""
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "Makefile").write_text(STALE_TARGET_MAKEFILE)
    (repo / "tests" / "test_it.py").write_text("def test_it():\n    assert True\n")
    (repo / "in.txt").write_text("source\n")
    (repo / "out.txt").write_text("built\n")
    now = time.time_ns()
    os.utime(repo / "in.txt", ns=(now - 10**10, now - 10**10))
    os.utime(repo / "out.txt", ns=(now - 5 * 10**9, now - 5 * 10**9))
    cache = tmp_path / "cache"
    first = run_verify(repo, cache)
    assert first.status is Status.VERIFIED, first.note
    assert "cached" in run_verify(repo, cache).extra
    os.utime(repo / "in.txt", ns=(now, now))  # `touch in.txt`: newer than what it built
    report = run_verify(repo, cache)
    assert "cached" not in report.extra, "served from the cache after the change"
    assert report.status is not Status.VERIFIED, report.note


@pytest.mark.slow
def test_a_sparse_file_is_keyed_and_copied_by_its_data(tmp_path: Path) -> None:
    """An ignored `truncate -s 10G` file took 30 s of reading zeros to key and 10 GB of
    the host's disk to copy, all before the run's deadline counted. Now: a hit when
    nothing changed, a miss when a byte in it did, and well within a 20 s deadline."""
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / "test_it.py").write_text("def test_it():\n    assert True\n")
    with open(repo / "big.bin", "wb") as big:
        big.truncate(10 * 1024**3)
    cache = tmp_path / "cache"
    options = VerifyOptions(sandbox="bwrap", cache_dir=str(cache), deadline_s=20)
    first = verify(repo, options)
    assert first.status is Status.VERIFIED, first.note
    assert first.record.workspace is not None
    assert first.record.workspace["copied_bytes"] < 1024**2
    assert "cached" in verify(repo, options).extra
    with open(repo / "big.bin", "r+b") as big:
        big.seek(7 * 1024**3)
        big.write(b"x")
    assert "cached" not in verify(repo, options).extra


def test_the_order_of_files_times_is_keyed_however_far_apart(tmp_path: Path) -> None:
    """Two times 1.1e19 ns apart (a red team's `os.utime`) overflowed a 64-bit array: the
    run ended "assay could not finish (OverflowError)". What counts is their order."""
    from assay.cache import workspace_digest

    (tmp_path / "early").write_text("a\n")
    (tmp_path / "late").write_text("b\n")
    os.utime(tmp_path / "early", ns=(-2 * 10**18, -2 * 10**18))
    os.utime(tmp_path / "late", ns=(9 * 10**18, 9 * 10**18))
    keyed = workspace_digest(tmp_path)
    os.utime(tmp_path / "late", ns=(9 * 10**18 - 1, 9 * 10**18 - 1))
    assert workspace_digest(tmp_path) == keyed  # still the later one
    os.utime(tmp_path / "late", ns=(-3 * 10**18, -3 * 10**18))
    assert workspace_digest(tmp_path) != keyed


def test_a_workspace_copied_from_a_tree_that_changed_meanwhile_is_never_keyed(
    tmp_path: Path,
) -> None:
    """A red team's race: two directories swapped after the tree was listed, swapped back
    once the copy was made. Every file's own stat is as it was, so the digests before and
    after agreed, and the copy's verdict (the other directory's code) was cached for the
    tree. What each file was as it was copied must be what was keyed."""
    from assay.cache import CacheError, workspace_digest
    from assay.sandbox.provision import copy_layout
    from assay.source_layout import scan_source

    src = tmp_path / "src"
    for name, body in (("pkg", "return a - b"), ("alt", "return a + b")):
        (src / name).mkdir(parents=True)
        (src / name / "core.py").write_text(f"def add(a, b):\n    {body}\n")
    _, copied_honestly = copy_layout(src, tmp_path / "honest", scan_source(src, link_git=False))
    assert workspace_digest(src, copied_as=copied_honestly) == workspace_digest(src)
    listed = scan_source(src, link_git=False)
    (src / "pkg").rename(src / "tmp")
    (src / "alt").rename(src / "pkg")
    (src / "tmp").rename(src / "alt")
    _, copied = copy_layout(src, tmp_path / "raced", listed)
    assert "a + b" in (tmp_path / "raced" / "pkg" / "core.py").read_text()
    (src / "pkg").rename(src / "tmp")
    (src / "alt").rename(src / "pkg")
    (src / "tmp").rename(src / "alt")
    with pytest.raises(CacheError, match="changed while its workspace was made"):
        workspace_digest(src, copied_as=copied)

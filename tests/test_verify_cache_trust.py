"""A cached verdict is believed only when its own evidence gives its status."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli import assay, assay_env


@pytest.mark.slow
def test_a_forged_cache_entry_is_a_miss_not_a_pass(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (repo / "tests" / "test_a.py").write_text("def test_a():\n    assert 1 == 2\n")
    cache = tmp_path / "cache"
    env = assay_env(ASSAY_CACHE_DIR=str(cache))

    def verify() -> dict:
        done = assay("verify", "--json", "--sandbox", "local", str(repo), timeout=120, env=env)
        return json.loads(done.stdout)

    first = verify()
    assert first["status"] == "FAILED"
    # Rewrite the stored verdict to claim success, leaving its evidence as it was.
    with sqlite3.connect(cache / "verdicts.sqlite3") as db:
        ((key, stored),) = db.execute("SELECT key, report FROM verdicts").fetchall()
        forged = json.loads(stored)
        forged.update(status="VERIFIED", exit_code=0, verified=True, note="")
        db.execute("UPDATE verdicts SET report = ? WHERE key = ?", (json.dumps(forged), key))
    again = verify()
    assert again["status"] == "FAILED"
    assert "cached" not in again.get("extra", {})


@pytest.mark.slow
def test_what_a_check_reads_in_git_is_part_of_the_key(tmp_path: Path) -> None:
    """A tracked test that is a link into `.git`, which the workspace links and every check
    can read: editing the file in `.git` left the key as it was, and the verdict of the
    passing test it had been was given again from the cache."""
    import subprocess

    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    hidden = repo / ".git" / "t" / "test_calc.py"
    hidden.parent.mkdir()
    hidden.write_text("from calc import add\n\ndef test_add():\n    assert add(2, 2) == 0\n")
    (repo / "tests" / "test_calc.py").symlink_to("../.git/t/test_calc.py")
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "cache"))

    def status() -> str:
        done = assay("verify", "--json", "--kind", "test", str(repo), timeout=120, env=env)
        return str(json.loads(done.stdout)["status"])

    assert status() == "VERIFIED"
    hidden.write_text("from calc import add\n\ndef test_add():\n    assert add(2, 2) == 4\n")
    assert status() == "FAILED"


@pytest.mark.slow
def test_what_the_key_leaves_out_of_the_source_no_check_can_read(tmp_path: Path) -> None:
    """The source is shown read-only beside its workspace (its environments link there);
    its caches and build output, which neither the copy nor the key holds, are not: a test
    reading the source's `__pycache__/data.txt` by its absolute path would pass on a
    cached verdict whatever that file came to hold."""
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "__pycache__").mkdir()
    (repo / "__pycache__" / "data.txt").write_text("as when first verified\n")
    (repo / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (repo / "tests" / "test_data.py").write_text(
        f"def test_data():\n    print(open({str(repo / '__pycache__' / 'data.txt')!r}).read())\n"
    )
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "cache"))
    done = assay("verify", "--json", "--no-cache", "--kind", "test", str(repo), env=env)
    report = json.loads(done.stdout)
    assert report["status"] == "FAILED", report["note"]
    assert "as when first verified" not in done.stdout
    assert "PermissionError" in done.stdout


def _adder(repo: Path, in_git: bool) -> tuple[Path, bytes, bytes]:
    """A tested `add` in a git repository at `repo`; the file to write through a mapping
    (`calc.py`, or with `in_git` the test itself, kept in `.git` and linked from `tests`),
    its honest bytes and what breaks it."""
    import subprocess

    (repo / "tests").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    test = "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    if not in_git:
        (repo / "tests" / "test_calc.py").write_text(test)
        return repo / "calc.py", b"a + b", b"a - b"
    mapped_file = repo / ".git" / "t" / "test_calc.py"
    mapped_file.parent.mkdir()
    mapped_file.write_text(test)
    (repo / "tests" / "test_calc.py").symlink_to("../.git/t/test_calc.py")
    return mapped_file, b"== 5", b"== 6"


def _status_of(repo: Path, cache: Path) -> Callable[[], str]:
    env = assay_env(ASSAY_CACHE_DIR=str(cache))

    def status() -> str:
        done = assay("verify", "--json", "--kind", "test", str(repo), timeout=120, env=env)
        return str(json.loads(done.stdout)["status"])

    return status


@pytest.mark.slow
@pytest.mark.parametrize("in_git", [False, True], ids=["tree", "environment"])
def test_a_write_through_a_shared_mapping_is_a_new_tree(tmp_path: Path, in_git: bool) -> None:
    """A page written through a `MAP_SHARED` mapping stays writable until it is written
    back, and the writes to it meanwhile move neither time: an add broken so after its
    honest bytes were verified kept every field of the file's stat, and the verdict of
    the passing test was given again from the cache; so did a test in `.git` (keyed, as
    an environment is, by its entries' stats) whose expectation was broken so."""
    import mmap
    import os
    import time

    repo = tmp_path / "repo"
    mapped_file, honest, broken = _adder(repo, in_git)
    status = _status_of(repo, tmp_path / "cache")

    fd = os.open(mapped_file, os.O_RDWR)
    try:
        mapped = mmap.mmap(fd, os.fstat(fd).st_size, mmap.MAP_SHARED)
        mapped[:] = mapped[:]  # the page is dirty and writable from here on
        time.sleep(3.5)  # past the window in which a stat is not trusted at all
        assert status() == "VERIFIED"
        at = mapped.find(honest)
        mapped[at : at + len(broken)] = broken
        assert status() == "FAILED"
        mapped.close()
    finally:
        os.close(fd)


@pytest.mark.slow
@pytest.mark.parametrize("in_git", [False, True], ids=["tree", "environment"])
def test_a_write_through_a_later_mapping_on_tmpfs_is_a_new_tree(in_git: bool) -> None:
    """On tmpfs a page read through a shared mapping is mapped writable at once: writing
    it then, and unmapping, moves neither time of the file. Measured here: a test in
    `.git` (an environment, keyed by its entries' stats) broken so after its tree was
    VERIFIED was given the cached VERIFIED again."""
    import mmap
    import os
    import shutil
    import tempfile

    top = Path(tempfile.mkdtemp(prefix="assay-test-tmpfs-", dir="/dev/shm"))
    try:
        repo = top / "repo"
        mapped_file, honest, broken = _adder(repo, in_git)
        status = _status_of(repo, top / "cache")

        assert status() == "VERIFIED"
        before = os.stat(mapped_file)
        fd = os.open(mapped_file, os.O_RDWR)
        try:
            with mmap.mmap(fd, before.st_size, mmap.MAP_SHARED) as mapped:
                at = mapped.find(honest)  # the read maps the page writable
                mapped[at : at + len(broken)] = broken
        finally:
            os.close(fd)
        after = os.stat(mapped_file)
        assert (after.st_mtime_ns, after.st_ctime_ns) == (before.st_mtime_ns, before.st_ctime_ns)
        assert status() == "FAILED"
    finally:
        shutil.rmtree(top, ignore_errors=True)


@pytest.mark.slow
def test_the_host_variables_a_check_sees_are_part_of_the_key(tmp_path: Path) -> None:
    """A bubblewrap check sees the caller's TZ (and LANG, LC_*...): a test of local time
    that passed under UTC was VERIFIED again from the cache under a TZ it fails under."""
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (repo / "tests" / "test_utc.py").write_text(
        "import time\n\ndef test_utc():\n"
        "    assert time.strftime('%z', time.localtime(0)) == '+0000'\n"
    )

    def status(tz: str) -> str:
        env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "cache"), TZ=tz)
        done = assay("verify", "--json", "--kind", "test", str(repo), timeout=120, env=env)
        return str(json.loads(done.stdout)["status"])

    assert status("UTC") == "VERIFIED"
    assert status("Asia/Tokyo") == "FAILED"
    assert status("UTC") == "VERIFIED"

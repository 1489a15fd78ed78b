"""A check that fills the filesystem its workspace is on is stopped, and says so.

On a disk, only RLIMIT_FSIZE bounded what a check wrote, and that per file: a test writing
file after file filled the host's disk before its deadline. Here "the disk" is a tmpfs of
its own (mounting one needs root, as CI runs), made the workspaces' place with
`ASSAY_WORKSPACE_DIR`, and the test would pass once it had written 200 MiB of its 256."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.sandbox.disk_watch import disk_watch
from tests.cli import assay, assay_env
from tests.repos import write

FILLS_THE_DISK = """\
import os
import time


def test_writes_its_fill():
    for i in range(200):
        with open(f"blob{i}", "wb") as out:
            out.write(b"x" * 1024 * 1024)
        time.sleep(0.01)
"""


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    assert os.geteuid() == 0, "mounting a filesystem of a known size needs root (as CI runs)"
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256m", "tmpfs", str(disk)], check=True)
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


@pytest.mark.parametrize("sandbox", ["bwrap", "local"])
def test_a_check_filling_its_workspaces_disk_is_stopped(
    tmp_path: Path, small_disk: Path, sandbox: str
) -> None:
    repo = write(
        tmp_path / "fills",
        {
            "pyproject.toml": '[project]\nname = "fills"\nversion = "0"\n',
            "test_fill.py": FILLS_THE_DISK,
        },
    )
    env = assay_env(ASSAY_WORKSPACE_DIR=str(small_disk), ASSAY_CACHE_DIR=str(tmp_path / "c"))
    done = assay(
        "verify", "--json", "--no-cache", "--sandbox", sandbox, str(repo), env=env, timeout=300
    )
    report = json.loads(done.stdout)
    assert report["status"] == "INDETERMINATE", report["note"]
    (check,) = [c for c in report["checks"] if c["kind"] == "test"]
    assert check["cause"] == "sandbox_unavailable", check
    assert "was stopped" in report["note"] and "half of what was free" in report["note"]
    assert "Traceback" not in done.stderr, done.stderr


def test_a_watch_answers_only_once_half_the_free_space_is_gone(small_disk: Path) -> None:
    watch = disk_watch(small_disk, small_disk / ".")
    assert watch is not None and watch() is None
    (small_disk / "a").write_bytes(b"x" * 100 * 1024**2)
    assert watch() is None  # 100 of 256 MiB
    (small_disk / "b").write_bytes(b"x" * 40 * 1024**2)
    said = watch()
    assert said is not None and "went from 256 MiB to 116 MiB free" in said, said
    assert disk_watch(small_disk / "no such place") is None


def test_a_later_command_of_the_same_run_is_held_to_the_runs_floor(small_disk: Path) -> None:
    # Each command measured from its own start could take half of what the one before it
    # left: build, lint and test, each under half, filled 7/8 of the disk between them.
    first = disk_watch(small_disk)
    assert first is not None and first() is None
    (small_disk / "a").write_bytes(b"x" * 110 * 1024**2)  # under half of 256 MiB
    second = disk_watch(small_disk)  # the next check of the same workspace
    assert second is not None and second() is None
    (small_disk / "b").write_bytes(b"x" * 60 * 1024**2)  # under half of what was left
    said = second()
    assert said is not None and "half of what was free" in said


@pytest.fixture
def few_inodes(tmp_path: Path) -> Iterator[Path]:
    assert os.geteuid() == 0, "mounting a filesystem of a known size needs root (as CI runs)"
    disk = tmp_path / "inodes"
    disk.mkdir()
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256m,nr_inodes=2000", "tmpfs", str(disk)], check=True
    )
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_a_run_making_empty_files_by_the_thousand_is_stopped(few_inodes: Path) -> None:
    # Empty files take no byte: the watch counted bytes only, and a test could leave the
    # host's filesystem without an inode to make another file with.
    watch = disk_watch(few_inodes)
    assert watch is not None and watch() is None
    for k in range(1200):
        (few_inodes / str(k)).touch()
    said = watch()
    assert said is not None and "inodes" in said

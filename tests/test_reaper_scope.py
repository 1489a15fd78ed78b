"""The reaper looks only at processes that can belong to the run: those started after it.

Every other process on the machine is older than the run, and reading each one's
environment on every sweep made a run's cost grow with the machine's process count.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay import reaper
from assay.process import run_process
from tests.conftest import PYTHON, pid_alive, wait_gone

#: Idle processes that have nothing to do with any run.
BYSTANDERS = 300


@pytest.fixture
def bystanders() -> Iterator[list[int]]:
    """Idle processes started before the test's run, each in a session of its own."""
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(BYSTANDERS):
            procs.append(subprocess.Popen(["sleep", "120"], start_new_session=True))
        time.sleep(0.05)  # a clock tick or more: the run starts strictly later
        yield [p.pid for p in procs]
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


@pytest.fixture
def environ_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pids whose environment the reaper reads, through its one reading function."""
    read: list[int] = []
    original = reaper._environ

    def counting(pid: int) -> bytes | None:
        read.append(pid)
        return original(pid)

    monkeypatch.setattr(reaper, "_environ", counting)
    return read


def test_a_run_reads_no_environment_of_an_older_process(
    bystanders: list[int], environ_reads: list[int], tmp_path: Path
) -> None:
    # The run starts a session of its own (not in its group: only its marker finds it), so
    # the sweeps do read environments: of the run's processes, never of the bystanders.
    pid_file = tmp_path / "pid"
    code = (
        "import subprocess, sys\n"
        "p = subprocess.Popen(['sleep', '60'], start_new_session=True)\n"
        f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
    )
    result = run_process([PYTHON, "-c", code], timeout=30)
    assert result.exit_code == 0, result.stderr.text
    escaped = int(pid_file.read_text())
    assert wait_gone(escaped, 2.0), "the escaped process of the run was not killed"
    assert escaped in environ_reads
    older = set(bystanders) & set(environ_reads)
    assert not older, f"read the environment of {len(older)} processes older than the run"
    assert all(pid_alive(p) for p in bystanders)


def test_an_older_process_carrying_the_marker_is_not_looked_at(tmp_path: Path) -> None:
    # Only a run's own processes can carry its (random) marker; one planted before the run
    # began proves the sweep never looked at it.
    marker = os.urandom(16).hex()
    env = {**os.environ, reaper.MARKER_VAR: marker}
    older = subprocess.Popen(["sleep", "60"], env=env, start_new_session=True)
    try:
        time.sleep(0.05)
        leader = subprocess.Popen(["sleep", "60"], env=env, start_new_session=True)
        escaped = subprocess.Popen(["sleep", "60"], env=env, start_new_session=True)
        since = reaper.start_ticks(leader.pid)
        assert since is not None
        assert sorted(reaper.marked_pids(marker, since=since)) == sorted([leader.pid, escaped.pid])
        reaper.kill_run(leader.pid, marker, keep=leader.pid)  # the run's start: its leader's
        assert leader.wait(2) == -9
        assert wait_gone(escaped.pid, 2.0)  # reaped by the sweep: it is a child of ours here
        assert pid_alive(older.pid), "a process older than the run was killed"
    finally:
        older.kill()
        older.wait()

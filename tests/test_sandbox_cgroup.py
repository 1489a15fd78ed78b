"""A run's control group, for real: priming its joins moves nothing and stops on its own.

(What priming saves is measured in bench/bench_sandbox.py: a join after an idle spell
waits out an RCU grace period unless the lock was taken shortly before.)
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.sandbox import cgroup


@pytest.fixture
def group() -> Iterator[cgroup.RunCgroup]:
    made = cgroup.create(f"assay-test-{os.getpid()}", memory_bytes=256 * 1024**2, pids_max=64)
    try:
        yield made
    finally:
        made.remove()


def primers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "cgroup-primer"]


def members(group: cgroup.RunCgroup) -> list[str]:
    return (group.directories[0] / "cgroup.procs").read_text().split()


def test_priming_ends_once_a_process_has_joined_and_moves_nothing(
    group: cgroup.RunCgroup,
) -> None:
    own_groups = Path("/proc/self/cgroup").read_text()
    with group.joins_primed():
        [primer] = primers()
        child = subprocess.Popen(group.join_argv(["sleep", "5"]))
        try:
            expires = time.monotonic() + 5
            while not members(group) and time.monotonic() < expires:
                time.sleep(0.005)
            assert members(group) == [str(child.pid)]
            primer.join(0.5)  # well before its one-second bound
            assert not primer.is_alive(), "the primer went on after the join"
        finally:
            child.kill()
            child.wait()
    assert Path("/proc/self/cgroup").read_text() == own_groups


def test_priming_without_a_join_ends_with_its_block_or_its_bound(
    group: cgroup.RunCgroup,
) -> None:
    with group.joins_primed():
        [primer] = primers()
        time.sleep(0.05)
        assert primer.is_alive(), "nothing joined: the primer should still be at work"
    primer.join(0.5)
    assert not primer.is_alive()

    group.prime()  # never stopped
    [bounded] = primers()
    bounded.join(cgroup.PRIME_AT_MOST_SECONDS + 1)
    assert not bounded.is_alive()
    assert members(group) == []

"""A run's control group, for real: priming its joins moves nothing and stops on its own;
the groups of runs that died are swept with what they held.

(What priming saves is measured in bench/bench_sandbox.py: a join after an idle spell
waits out an RCU grace period unless the lock was taken shortly before.)
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.sandbox import cgroup
from assay.scratch import tagged_name
from tests.cli import ASSAY


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


def joined(group: cgroup.RunCgroup, *argv: str) -> subprocess.Popen[bytes]:
    """`argv` started into `group` the way a sandbox's launcher does it, once it is in."""
    child = subprocess.Popen(group.join_argv(list(argv)))
    expires = time.monotonic() + 5
    while not members(group) and time.monotonic() < expires:
        time.sleep(0.005)
    assert members(group) == [str(child.pid)]
    return child


def test_priming_ends_once_a_process_has_joined_and_moves_nothing(
    group: cgroup.RunCgroup,
) -> None:
    own_groups = Path("/proc/self/cgroup").read_text()
    with group.joins_primed():
        [primer] = primers()
        child = joined(group, "sleep", "5")
        try:
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


def test_groups_whose_maker_died_are_swept_with_what_they_held() -> None:
    made_by_the_dead = subprocess.run(
        [
            sys.executable,
            "-c",
            "from assay.scratch import tagged_name; print(tagged_name('cgroup'))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    live_name = tagged_name("cgroup")
    assert live_name is not None
    live = cgroup.create(live_name, memory_bytes=256 * 1024**2, pids_max=64)
    stale = cgroup.create(made_by_the_dead, memory_bytes=256 * 1024**2, pids_max=64)
    orphan = None
    try:
        orphan = joined(stale, "sleep", "60")
        newer = cgroup.create(f"{live_name}-2", memory_bytes=None, pids_max=64)
        newer.remove()

        assert orphan.wait(timeout=5) == -9, "what the dead run left was not killed"
        assert not any(d.exists() for d in stale.directories), "the dead run's group stayed"
        assert all(d.exists() for d in live.directories), "a live run's group was swept"
    finally:
        if orphan is not None:
            orphan.kill()
            orphan.wait()
        live.remove()
        with contextlib.suppress(OSError):
            stale.remove()


def test_what_a_member_writes_to_a_tmpfs_counts_against_the_groups_memory(
    group: cgroup.RunCgroup, tmp_path: Path
) -> None:
    """Why workspaces and reports go to a tmpfs where a run's memory is capped: a file
    written there is memory the group holds (on disk it would be the host's, unbounded).
    A member writing four times its cap is stopped well short of it."""
    assert cgroup.can_cap_memory()
    shm = Path("/dev/shm") / f"assay-test-fill-{os.getpid()}"
    fill = (
        "import sys\n"
        "with open(sys.argv[1], 'wb') as out:\n"
        "    for _ in range(64):\n"
        "        out.write(b'x' * 16 * 1024**2)\n"
        "        out.flush()\n"
    )
    try:
        child = joined(group, sys.executable, "-c", fill, str(shm))
        assert child.wait(timeout=60) != 0, "it wrote 1 GiB past a 256 MiB cap"
        assert shm.stat().st_size <= 256 * 1024**2
    finally:
        shm.unlink(missing_ok=True)


def test_a_jvm_in_the_sandbox_reads_the_runs_limits_as_its_containers(tmp_path: Path) -> None:
    """In a cgroup namespace of its own, the host's cgroup mounts read as rooted above the
    run's group (`/../../..`): the JVM's container support raised a NullPointerException
    for every system metric, and GraalVM native images at start (path-to-regexp's
    `recheck`: 13 tests FAILED). Sharing the host's namespace, it finds the run's group."""
    done = subprocess.run(
        [ASSAY, "run", "--json", "--sandbox", "bwrap", "--kind", "build", "--"]
        + ["java", "-XshowSettings:system", "-version"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    record = json.loads(done.stdout)
    said = record["stdout"]["text"] + record["stderr"]["text"]
    assert record["exit_code"] == 0, said
    assert "NullPointerException" not in said
    assert "Provider: cgroupv" in said, said  # the JVM took the sandbox for a container

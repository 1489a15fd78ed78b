"""`assay eval --executor ray` on a real Ray cluster of two nodes on this machine
(`ray.cluster_utils.Cluster`, one CPU each, one cluster for the module): the same results as
the local executor attempt for attempt; a Ray worker SIGKILLed under an attempt makes that
try an infrastructure error, tried again, while the others complete; a driver SIGKILLed
mid-evaluation, then `--resume`, records every attempt exactly once."""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.eval import run_eval
from tests.cli import ASSAY, assay, assay_env, no_traceback
from tests.eval.tasks import HALF_AGENT, make_tasks, write_agent
from tests.test_startup import _imported, _loaded

ray = pytest.importorskip("ray")
cluster_utils = pytest.importorskip("ray.cluster_utils")

pytestmark = [
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap"),
    # Meant to have one worker run them all (`--dist loadgroup`); this pytest-xdist does
    # not always honour it, so the cluster fixture below also takes a lock.
    pytest.mark.xdist_group("ray-cluster"),
]

#: Held by a worker while its cluster is up: two clusters of two nodes each, side by
#: side on a CI machine's cores, would each be starved of what its tests count on.
_CLUSTER_LOCK = Path(tempfile.gettempdir()) / "assay-tests-ray-cluster.lock"

#: What an attempt's result is, whichever executor ran it (not where or when).
SAME = ("outcome", "status", "score", "error", "agent_exit_code", "tests", "tampering")


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """Two Ray nodes, one CPU each, and this process connected to them (no other worker's
    cluster beside them)."""
    with open(_CLUSTER_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released as the file closes
        yield from _cluster()


def _cluster() -> Iterator[str]:
    nodes = cluster_utils.Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False}
    )
    nodes.add_node(num_cpus=1)
    ray.init(address=nodes.address, log_to_driver=False)
    try:
        yield str(nodes.address)
    finally:
        ray.shutdown()
        nodes.shutdown()


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Tasks 1 and 3 name a repository beside them, task 2 a bundle in its folder.
    return make_tasks(tmp_path_factory.mktemp("ray-tasks"), numbers=(1, 2, 3))


def _rows(summary: dict[str, Any]) -> dict[tuple[str, int], dict[str, Any]]:
    return {(r["task_id"], r["epoch"]): r for r in summary["attempts"]}


def _recorded(store: Path) -> list[tuple[str, str, int]]:
    try:
        with sqlite3.connect(store) as db:
            return list(db.execute("SELECT eval_id, task_id, epoch FROM attempts"))
    except sqlite3.OperationalError:  # not created yet
        return []


def test_ray_gives_the_local_executors_results_attempt_for_attempt(
    cluster: str, tasks: Path, tmp_path: Path
) -> None:
    agent = f"python3 {write_agent(tmp_path, 'half', HALF_AGENT)}"
    store = tmp_path / "evals.sqlite"

    local = run_eval([tasks], agent, store=store, concurrency=2)
    on_ray = run_eval([tasks], agent, store=store, concurrency=2, executor="ray")

    assert local.summary["errors"] == 0, local.summary
    assert (
        set(_rows(local.summary))
        == set(_rows(on_ray.summary))
        == {
            ("calc-1", 1),
            ("calc-2", 1),
            ("calc-3", 1),
        }
    )
    for key, row in _rows(local.summary).items():
        there = _rows(on_ray.summary)[key]
        assert {f: there[f] for f in SAME} == {f: row[f] for f in SAME}, key
        assert there["telemetry"] == row["telemetry"]
    assert {r.task_id: r.score.value for r in on_ray.records if r.score} == {
        "calc-1": 1.0,
        "calc-2": 0.0,
        "calc-3": 1.0,
    }
    # Made on the nodes (two at a time, one CPU each: both nodes), kept by the driver.
    nodes = {r.evidence["executor"]["node"] for r in on_ray.records}
    assert len(nodes) == 2, nodes
    assert {r.evidence["task"]["folder"] for r in on_ray.records} == {
        str((tasks / f"task-{n}").resolve()) for n in (1, 2, 3)
    }


#: HALF_AGENT, slow on task 1: long enough for the test to find and kill its Ray worker.
SLOW_ON_ONE = "import os, time\nif os.environ['ASSAY_TASK_ID'] == 'calc-1':\n    time.sleep(6)\n"


def _ray_worker_running(marker: str, task_id: str = "calc-1") -> int | None:
    """The pid of the Ray worker process that an agent for `task_id` whose command line
    holds `marker` runs under: up its parent chain (host pids), the first process Ray
    named `ray::...`. Every task runs the same agent, so the task is read from the
    agent's environment: killing another task's worker would test nothing."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() not in cmdline:
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"ASSAY_TASK_ID={task_id}".encode() not in environ:
            continue
        pid = int(entry)
        while pid > 1:
            try:
                name = Path(f"/proc/{pid}/cmdline").read_bytes()
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                break
            if name.startswith(b"ray::"):
                return pid
            pid = int(stat.rsplit(")", 1)[1].split()[1])
    return None


def test_a_worker_killed_under_an_attempt_is_an_error_of_that_try_retried_others_complete(
    cluster: str, tasks: Path, tmp_path: Path
) -> None:
    script = write_agent(tmp_path, "slow-half", SLOW_ON_ONE + HALF_AGENT)
    killed: list[int] = []

    def kill_its_worker() -> None:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            pid = _ray_worker_running(str(script))
            if pid is not None:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_its_worker)
    killer.start()
    try:
        result = run_eval(
            [tasks],
            f"python3 {script}",
            store=tmp_path / "evals.sqlite",
            concurrency=2,
            retries=1,
            executor="ray",
        )
    finally:
        killer.join()

    assert killed, "the attempt's Ray worker was never seen"
    rows = _rows(result.summary)
    hit = rows[("calc-1", 1)]
    # The lost try is an error of the worker, with its cause; the next try is scored.
    assert (hit["outcome"], hit["score"], hit["tries"]) == ("scored", 1.0, 2)
    (record,) = [r for r in result.records if r.task_id == "calc-1"]
    (lost,) = record.evidence["earlier_tries"]
    assert (lost["stage"], lost["cause"]) == ("worker", "worker_lost"), lost
    assert "WorkerCrashedError" in lost["message"] or "died" in lost["message"], lost
    assert record.evidence["executor"]["pid"] != killed[0]
    for other in ("calc-2", "calc-3"):
        assert rows[(other, 1)]["outcome"] == "scored"
        assert rows[(other, 1)]["tries"] == 1
    assert result.summary["errors"] == 0


def test_a_worker_killed_with_no_retry_left_is_an_error_never_a_score(
    cluster: str, tasks: Path, tmp_path: Path
) -> None:
    script = write_agent(tmp_path, "slow", SLOW_ON_ONE + HALF_AGENT)
    killer = threading.Thread(
        target=lambda: _kill_when_seen(str(script)),
    )
    killer.start()
    try:
        result = run_eval(
            [tasks / "task-1"],
            f"python3 {script}",
            store=tmp_path / "evals.sqlite",
            executor="ray",
        )
    finally:
        killer.join()

    (row,) = result.summary["attempts"]
    assert (row["outcome"], row["score"], row["tries"]) == ("error", None, 1), row
    assert (row["error"]["stage"], row["error"]["cause"]) == ("worker", "worker_lost")
    assert result.summary["errors_by_stage"] == {"worker:worker_lost": 1}


def _kill_when_seen(marker: str) -> None:
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        pid = _ray_worker_running(marker)
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
            return
        time.sleep(0.05)


def test_a_driver_killed_mid_evaluation_then_resumed_records_every_attempt_exactly_once(
    cluster: str, tasks: Path, tmp_path: Path
) -> None:
    store = tmp_path / "evals.sqlite"
    on_ray = ["--executor", "ray", "--ray-address", cluster]
    driver = subprocess.Popen(
        [ASSAY, "eval", str(tasks), "--agent", "nop", "--store", str(store), *on_ray],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=assay_env(),
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 300
        while not _recorded(store) and time.monotonic() < deadline:
            assert driver.poll() is None, "assay eval ended before it was killed"
            time.sleep(0.1)
        os.killpg(driver.pid, signal.SIGKILL)
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
        driver.wait()
    before = _recorded(store)
    assert 1 <= len(before) < 3, before
    eval_id = before[0][0]

    done = assay("eval", "--resume", eval_id, "--store", str(store), *on_ray, timeout=600)

    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = _recorded(store)
    assert sorted(rows) == [(eval_id, f"calc-{n}", 1) for n in (1, 2, 3)]
    assert set(before) <= set(rows)  # what was recorded before the kill is kept, not rerun


def test_a_local_evaluation_never_imports_ray(tmp_path: Path) -> None:
    tasks = make_tasks(tmp_path, numbers=(1,))
    done, modules = _imported(
        "eval", str(tasks), "--agent", "nop", "--store", str(tmp_path / "evals.sqlite")
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert _loaded(modules, "assay.eval.harness")  # it did run the evaluation
    assert not _loaded(modules, "ray"), sorted(_loaded(modules, "ray"))[:5]


def test_executor_usage_errors_are_clear_and_run_nothing(tmp_path: Path) -> None:
    tasks = make_tasks(tmp_path, numbers=(1,))
    store = tmp_path / "evals.sqlite"
    done = assay("eval", str(tasks), "--agent", "nop", "--store", str(store), "--ray-address", "x")
    no_traceback(done)
    assert done.returncode == 2
    assert "--ray-address goes with --executor ray" in done.stderr
    assert _recorded(store) == []
    done = assay("eval", str(tasks), "--agent", "nop", "--executor", "spark")
    assert done.returncode == 2 and "spark" in done.stderr


def test_a_task_no_node_can_hold_is_an_error_not_a_wait(cluster: str, tmp_path: Path) -> None:
    tasks = make_tasks(tmp_path, numbers=(1,))
    toml = tasks / "task-1" / "task.toml"
    toml.write_text(toml.read_text() + textwrap.dedent("\n[limits]\ncpus = 64\n"))

    result = run_eval([tasks], "nop", store=tmp_path / "evals.sqlite", executor="ray")

    (row,) = result.summary["attempts"]
    assert (row["outcome"], row["error"]["cause"]) == ("error", "unschedulable"), row
    assert "64 CPU" in row["error"]["message"]

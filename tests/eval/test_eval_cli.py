"""`assay eval`, `assay report` and `assay tasks validate` as a user runs them: a real
console script, real bubblewrap, a real SQLite store; SIGKILL mid-evaluation, then
`--resume`, records every attempt exactly once."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cli import ASSAY, assay, assay_env, no_traceback
from tests.eval.tasks import make_tasks

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


def _recorded(store: Path) -> list[tuple[str, str, int]]:
    if not store.exists():
        return []
    try:
        with sqlite3.connect(store) as db:
            return list(db.execute("SELECT eval_id, task_id, epoch FROM attempts"))
    except sqlite3.OperationalError:  # not created yet
        return []


@needs_bwrap
def test_sigkill_mid_evaluation_then_resume_records_every_attempt_exactly_once(
    tmp_path: Path,
) -> None:
    tasks = make_tasks(tmp_path, numbers=(1, 3, 4))
    store = tmp_path / "evals.sqlite"
    proc = subprocess.Popen(
        [ASSAY, "eval", str(tasks), "--agent", "nop", "--store", str(store)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=assay_env(),
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 300
        while not _recorded(store) and time.monotonic() < deadline:
            assert proc.poll() is None, "assay eval ended before it was killed"
            time.sleep(0.2)
        first = _recorded(store)
        assert len(first) == 1, first
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert len(_recorded(store)) < 3, "the evaluation finished before it was killed"
    eval_id = first[0][0]

    done = assay("eval", "--resume", eval_id, "--store", str(store), timeout=600)

    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = _recorded(store)
    assert sorted(rows) == [(eval_id, f"calc-{n}", 1) for n in (1, 3, 4)]
    assert first[0] in rows  # the attempt stored before the kill is kept, not run again
    report = assay("report", eval_id, "--store", str(store), "--json")
    summary = json.loads(report.stdout)
    assert (summary["scored"], summary["pass_rate"], summary["errors"]) == (3, 0.0, 0)
    text = assay("report", "--store", str(store))
    assert eval_id in text.stdout
    assert "pass rate: 0.0% (0/3 scored)  errors: 0  attempts: 3/3" in text.stdout


def test_usage_errors_are_clear_and_run_nothing(tmp_path: Path) -> None:
    store = str(tmp_path / "evals.sqlite")
    folder = tmp_path / "task"
    folder.mkdir()
    (folder / "task.toml").write_text('schema = "2.0"\nid = "x"\n')
    cases = [
        (["eval", str(folder), "--store", store], "--agent is required"),
        (
            ["eval", str(folder), "--agent", "nop", "--store", store],
            "schema '2.0' is not supported",
        ),
        (["eval", str(tmp_path / "nothing"), "--agent", "nop", "--store", store], "no such task"),
        (["eval", "--resume", "nope", "--store", store], "no evaluation 'nope'"),
        (["report", "--store", store], "no evaluation yet"),
        (["eval", "--agent", "nop", "--store", store], "no task folders"),
    ]
    for args, message in cases:
        done = assay(*args)
        no_traceback(done)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert message in done.stderr, (args, done.stderr)
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*) FROM attempts").fetchone() == (0,)


@needs_bwrap
@pytest.mark.slow
def test_tasks_validate_accepts_a_sound_task_and_rejects_one_whose_solution_fixes_nothing(
    tmp_path: Path,
) -> None:
    tasks = make_tasks(tmp_path, numbers=(1, 3))
    (tasks / "task-3" / "solution.patch").write_text("")  # the oracle then changes nothing

    done = assay("tasks", "validate", str(tasks), "--concurrency", "2", "--json", timeout=900)

    no_traceback(done)
    assert done.returncode == 1, done.stderr
    results = {t["task_id"]: t for t in json.loads(done.stdout)["tasks"]}
    assert results["calc-1"]["valid"], results["calc-1"]
    assert not results["calc-3"]["valid"]
    assert "not VERIFIED" in results["calc-3"]["reason"]


def _processes_naming(marker: str, *, show: bool = False) -> list[Any]:
    """The pids of the processes whose command line names `marker` (`show`: each with
    its command line, for a failure's message)."""
    found: list[Any] = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append((int(pid), cmdline[:200]) if show else int(pid))
    return found


@needs_bwrap
@pytest.mark.parametrize("concurrency", ["1", "2"])
def test_an_interrupted_evaluation_stops_its_agents_and_records_no_half_attempt(
    tmp_path: Path, concurrency: str
) -> None:
    from tests.eval.tasks import HANGER, write_agent

    tasks = make_tasks(tmp_path, numbers=(1, 3))
    store = tmp_path / "evals.sqlite"
    marker = f"assay-interrupted-{os.getpid()}-{time.monotonic_ns()}"
    agent = write_agent(tmp_path, "hang", HANGER)
    proc = subprocess.Popen(
        [ASSAY, "eval", str(tasks), "--agent", f"python3 {agent} {marker}"]
        + ["--store", str(store), "--concurrency", concurrency],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=assay_env(PYTHONFAULTHANDLER="1"),  # SIGABRT then shows where each thread is
    )
    try:
        deadline = time.monotonic() + 120
        # Each hanging agent is two processes naming the marker: wait for every agent to hang.
        while len(_processes_naming(marker)) < 2 * int(concurrency):
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            naming = _processes_naming(marker, show=True)
            proc.send_signal(signal.SIGABRT)
            err = proc.communicate(timeout=30)[1]
            raise AssertionError(f"still running 60 s after SIGTERM: {naming}\n{err[-8000:]}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    assert proc.returncode == 130, out + err
    assert "Traceback" not in err
    assert _recorded(store) == []  # nothing half-done is stored: --resume runs them all
    time.sleep(0.5)
    assert _processes_naming(marker) == []


@needs_bwrap
def test_a_resume_while_another_process_runs_the_evaluation_is_refused_and_runs_nothing(
    tmp_path: Path,
) -> None:
    """Two runners of one evaluation would run its missing attempts twice. A real process
    (util-linux `flock`) holds the evaluation's lock: a resume is refused, naming it, and
    records nothing; once that process is SIGKILLed, the lock is gone and a resume runs."""
    from assay.eval.lease import lock_path
    from assay.eval.store import Store
    from assay.eval.task import load_task

    tasks = make_tasks(tmp_path, numbers=(1,))
    store_path = tmp_path / "evals.sqlite"
    store = Store(store_path)
    try:
        spec = load_task(tasks / "task-1")
        config = {"epochs": 1, "sandbox": "auto", "planned": 1}
        eval_id = store.create_eval("nop", config, [spec.to_dict()])
    finally:
        store.close()
    # `-o`: the lock is flock's own, not the sleeping child's, so killing flock releases it.
    lock = str(lock_path(store_path, eval_id))
    holder = subprocess.Popen(["flock", "-o", lock, "sleep", "300"], start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not lock_path(store_path, eval_id).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)  # flock(1) creates the file, then takes the lock

        refused = assay("eval", "--resume", eval_id, "--store", str(store_path))

        no_traceback(refused)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert f"evaluation {eval_id} is being run by another process" in refused.stderr
        assert _recorded(store_path) == []
    finally:
        holder.kill()
        holder.wait()
        with contextlib.suppress(ProcessLookupError):  # flock's sleeping child
            os.killpg(holder.pid, signal.SIGKILL)

    done = assay("eval", "--resume", eval_id, "--store", str(store_path), timeout=600)

    assert done.returncode == 0, done.stdout + done.stderr
    assert _recorded(store_path) == [(eval_id, "calc-1", 1)]

"""Ctrl-C or SIGTERM to assay stops every process it started: they live in sessions of their
own, which a terminal's interrupt never reaches."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PYTHON, read_pids, wait_gone

SLEEPER = "import os, sys, time\nopen(sys.argv[1], 'w').write(str(os.getpid()))\ntime.sleep(600)\n"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_assay_leaves_nothing_running(tmp_path: Path, sig: int) -> None:
    pid_file = tmp_path / "pid"
    assay = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "assay",
            "run",
            "--sandbox",
            "none",  # the pid file is written on the host, where the test reads it
            "--kind",
            "build",
            "--",
            PYTHON,
            "-c",
            SLEEPER,
            str(pid_file),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONFAULTHANDLER": "1"},
    )
    (child,) = read_pids(pid_file)
    os.kill(assay.pid, sig)
    try:
        _, err = assay.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        assay.send_signal(signal.SIGABRT)  # faulthandler prints where every thread is
        _, err = assay.communicate(timeout=30)
        pytest.fail(f"assay did not stop within 30 s of the signal; its threads:\n{err}")
    assert assay.returncode == 130
    assert "Interrupted: stopped 1 running command" in err
    assert "Traceback" not in err
    assert wait_gone(child, 2.0), "the command assay started outlived it"


def test_a_run_started_after_the_interrupt_is_killed_at_once(tmp_path: Path) -> None:
    """A thread that had not yet seen the interrupt may start its process after every
    active run was killed (an evaluation's second attempt, between its stage check and its
    agent's start): that process is killed as it starts, not left to its deadline."""
    script = (
        "from assay.process import kill_active_runs, run_process\n"
        "kill_active_runs(and_later=True)\n"
        "r = run_process(['sleep', '30'], timeout=60)\n"
        "print(r.signal, round(r.duration_s, 1))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=20, check=True
    )
    killed_by, duration = done.stdout.split()
    assert killed_by == str(int(signal.SIGKILL)) or killed_by == str(int(signal.SIGTERM))
    assert float(duration) < 5

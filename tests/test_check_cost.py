"""What a check cost: CPU time and peak memory of its whole process tree, in its evidence.

The check is real: a Python program whose child allocates and touches ~100 MiB and burns
~0.3 s of CPU. Under bubblewrap the child runs below the sandbox's own init, which the
outer bwrap never waits for: its cost is only seen when the run's sweep reaps that init."""

from __future__ import annotations

import concurrent.futures
import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.evidence import Check, Evidence
from assay.process import ProcessResult, run_process
from assay.sandbox import BwrapOptions, BwrapSandbox, Workspace
from assay.verdict import Cause, Kind

MIB = 1024 * 1024
CHILD = (
    "import time\n"
    "buf = bytearray(100 * 1024 * 1024)\n"
    "for i in range(0, len(buf), 4096):\n"
    "    buf[i] = 1\n"
    "end = time.process_time() + 0.3\n"
    "while time.process_time() < end:\n"
    "    pass\n"
)
#: The check: its cost is all in a child process, as a test runner's is in its workers.
BURN = f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {CHILD!r}], check=True)\n"


@pytest.fixture
def sandboxed() -> Iterator[tuple[BwrapSandbox, Workspace]]:
    source = Path(tempfile.mkdtemp(prefix="assay-cost-", dir="/var/tmp"))
    (source / "main.py").write_text("print('hello')\n")
    sandbox = BwrapSandbox(BwrapOptions(toolchain_paths=(sys.executable,)))
    try:
        with sandbox.workspace(source) as ws:
            yield sandbox, ws
    finally:
        (source / "main.py").unlink()
        source.rmdir()


def assert_costly(result: ProcessResult) -> None:
    assert result.exit_code == 0, result.stderr.text
    assert result.cpu_s is not None and 0.3 <= result.cpu_s < 5.0, result.cpu_s
    assert result.peak_rss_bytes is not None
    assert 100 * MIB <= result.peak_rss_bytes < 1024 * MIB, result.peak_rss_bytes / MIB


def test_an_unsandboxed_check_counts_its_children() -> None:
    assert_costly(run_process([sys.executable, "-c", BURN], timeout=60))


def test_a_sandboxed_check_counts_what_runs_below_the_sandbox_init(
    sandboxed: tuple[BwrapSandbox, Workspace],
) -> None:
    sandbox, ws = sandboxed
    assert_costly(sandbox.run(ws, [sys.executable, "-c", BURN], timeout=60))


def test_sandboxed_checks_side_by_side_each_count_their_own_cost(
    sandboxed: tuple[BwrapSandbox, Workspace],
) -> None:
    """Checks of one stage run at once: each sandbox's init is left to this process when its
    outer bwrap exits, and a sweep for one check must not reap (and lose) another's."""
    sandbox, ws = sandboxed
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(
            pool.map(lambda _: sandbox.run(ws, [sys.executable, "-c", BURN], timeout=60), range(4))
        )
    for result in results:
        assert_costly(result)


def test_the_cost_is_in_the_evidence_json() -> None:
    result = run_process([sys.executable, "-c", BURN], timeout=60)
    check = Check(name="burn", kind=Kind.BUILD, argv=(sys.executable, "-c", BURN))
    document = json.loads(
        json.dumps(
            Evidence(check, Cause.EXIT_ZERO.verdict, Cause.EXIT_ZERO, result=result).to_dict()
        )
    )
    assert document["cpu_s"] >= 0.3
    assert document["peak_rss_bytes"] >= 100 * MIB
    assert Evidence.from_dict(document).to_dict() == document


def test_nothing_ran_costs_nothing_known() -> None:
    check = Check(name="missing", kind=Kind.BUILD, argv=("missing",))
    document = Evidence(check, Cause.TOOLCHAIN_MISSING.verdict, Cause.TOOLCHAIN_MISSING).to_dict()
    assert document["cpu_s"] is None and document["peak_rss_bytes"] is None


#: A hung check: it spins until it is killed at its deadline (one variant ignores SIGTERM).
SPIN = "while True:\n    pass\n"
#: As a test runner does, it takes a moment on SIGTERM to write its summary, then exits.
SPIN_SUMMING_UP_ON_TERM = (
    "import signal, sys, time\n"
    "def summary(*_):\n"
    "    time.sleep(0.2)\n"
    "    sys.exit(1)\n"
    "signal.signal(signal.SIGTERM, summary)\n" + SPIN
)
SPIN_IGNORING_TERM = "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n" + SPIN


@pytest.mark.parametrize(
    "program",
    [SPIN, SPIN_SUMMING_UP_ON_TERM, SPIN_IGNORING_TERM],
    ids=["term", "sums-up-on-term", "ignores-term"],
)
def test_a_sandboxed_check_killed_at_its_deadline_counts_what_it_spun(
    sandboxed: tuple[BwrapSandbox, Workspace], program: str
) -> None:
    """Killed at its deadline, the command below the sandbox's init must be reaped by that
    init, not by the kernel tearing the namespace down once the init died with the outer bwrap:
    that reaping adds its cost to no one's (the evidence said 0.008 s for a minute's spin)."""
    sandbox, ws = sandboxed
    result = sandbox.run(ws, [sys.executable, "-c", program], timeout=2)
    assert result.timed_out
    assert result.cpu_s is not None and result.cpu_s >= 0.5, result.cpu_s

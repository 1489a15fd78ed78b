"""Waits on the main thread still answer a signal another thread took (`assay.signal_waits`).

Each case runs in its own interpreter: the main thread blocks SIGINT, so the kernel can give
the process's signal only to the worker, which unblocks it and sends it; the worker then
sleeps 20 s. A wait woken in slices raises KeyboardInterrupt at once; an untimed one would
sit out the worker's sleep.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from assay.signal_waits import result_of, results_of, side_by_side, wait_for

PRELUDE = """
import os, signal, sys, threading, time
from concurrent.futures import ThreadPoolExecutor
from assay.signal_waits import result_of, side_by_side, wait_for

def takes_the_signal():
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    time.sleep(0.3)
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(20)
    return "ended"

signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
started = time.monotonic()
"""

WAITS = {
    "a future's result": """
pool = ThreadPoolExecutor(1)
future = pool.submit(takes_the_signal)
try:
    result_of(future)
except KeyboardInterrupt:
    print(round(time.monotonic() - started, 1))
    os._exit(0)
""",
    "calls side by side": """
try:
    side_by_side([takes_the_signal, lambda: time.sleep(20)], "waited")
except KeyboardInterrupt:
    print(round(time.monotonic() - started, 1))
    os._exit(0)
""",
    "an event": """
done = threading.Event()
threading.Thread(target=lambda: (takes_the_signal(), done.set()), daemon=True).start()
try:
    wait_for(done)
except KeyboardInterrupt:
    print(round(time.monotonic() - started, 1))
    os._exit(0)
""",
}


@pytest.mark.parametrize("waited", sorted(WAITS))
def test_a_signal_another_thread_takes_interrupts_the_wait(waited: str) -> None:
    program = PRELUDE + textwrap.dedent(WAITS[waited])
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip(), f"the wait was never interrupted: {done.stderr}"
    assert float(done.stdout) < 5, done.stdout + done.stderr


def test_an_untimed_wait_is_what_misses_the_signal() -> None:
    """The same program with the plain `Future.result()` sits out the worker's sleep: the
    case above could not pass without the slices."""
    program = PRELUDE + textwrap.dedent(
        """
        pool = ThreadPoolExecutor(1)
        future = pool.submit(takes_the_signal)
        try:
            future.result()
        except KeyboardInterrupt:
            print(round(time.monotonic() - started, 1))
            os._exit(0)
        """
    ).replace("time.sleep(20)", "time.sleep(3)")
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True
    )
    assert float(done.stdout) >= 3, done.stdout + done.stderr


def test_wait_for_keeps_event_wait_answers() -> None:
    event = threading.Event()
    started = time.monotonic()
    assert wait_for(event, 0.35) is False
    assert 0.3 <= time.monotonic() - started < 2
    assert wait_for(event, 0) is False
    threading.Timer(0.15, event.set).start()
    assert wait_for(event) is True
    assert wait_for(event, 0) is True


def test_results_of_keeps_order_and_raises_the_callers_own_timeout() -> None:
    def slow(n: int) -> int:
        time.sleep(0.05 * (3 - n))
        return n

    def raises() -> None:
        raise TimeoutError("the call's own")

    with ThreadPoolExecutor(3) as pool:
        assert results_of([pool.submit(slow, n) for n in range(3)]) == [0, 1, 2]
        with pytest.raises(TimeoutError, match="the call's own"):
            result_of(pool.submit(raises))


def test_side_by_side_runs_the_calls_at_once_in_order_and_raises_the_first_error() -> None:
    barrier = threading.Barrier(3, timeout=10)  # broken unless all three run at once

    def meets(n: int) -> tuple[int, str]:
        barrier.wait()
        time.sleep(0.05 * (3 - n))
        return n, threading.current_thread().name

    calls = [lambda n=n: meets(n) for n in range(3)]  # type: ignore[misc]
    assert side_by_side(calls, "probe") == [(n, f"probe-{n}") for n in range(3)]

    def fails() -> None:
        raise ValueError("the second call's")

    with pytest.raises(ValueError, match="the second call's"):
        side_by_side([lambda: 1, fails, lambda: 3], "probe")
    assert side_by_side([lambda: threading.current_thread()], "probe") == [
        threading.current_thread()
    ]

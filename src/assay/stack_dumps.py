"""Asking a hung test process for its stacks before the deadline's kill ends it.

A Go test binary prints every goroutine's stack when it is sent SIGQUIT, then exits; `go
test` relays that as the running test's output, where the Go parser finds the line of the
project's code the test was stuck on (`assay.parsers.go_stacks`). SIGTERM, the deadline's
first signal, ends it without a word. A JVM prints its threads on SIGQUIT too, and goes
on: Surefire's forked one, whose dump Surefire keeps (`assay.parsers.java_stacks`). Only the run's leaves (`reaper.leaf_commands`) are
asked, each through a pidfd opened after its command line was read again, so that a pid
reused since the leaves were looked at is never signalled.

A Go program's dump traces each goroutine from the thread the signal reached, and one
running on another thread only as "goroutine running on other thread; stack unavailable":
sent to the process, the signal went to whichever thread the kernel chose, and a test
spinning on another one was named nowhere, one loaded run in a few. So the signal is sent
to the thread that has used the most processor among those running (`tgkill`, which
refuses a thread of any other process), where there is one; else to the process.

What a dump says is the hung code's own output: it only names a place beside a verdict
that is a hang already. A process that ignores the signal is waited on no longer than
`DUMP_WAIT_SECONDS`, and then killed with the rest.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Sequence

from assay import reaper

#: Longest wait for the asked processes to print their stacks and exit (a dump comes in
#: milliseconds on an idle machine; with the cores busy, a second was sometimes not enough).
DUMP_WAIT_SECONDS = 2.0
#: After they exited, how long what relays their output (`go test`) may take to pass the
#: rest on, unless it exits first.
RELAY_SECONDS = 1.0


def dump_signal(argv: Sequence[str]) -> signal.Signals | None:
    """The signal on which the program `argv` prints its stacks, where known: a Go test
    binary then exits; a JVM goes on (and is waited on no longer than a dump takes)."""
    if argv and (_go_test_binary(argv) or _surefire_jvm(argv)):
        return signal.SIGQUIT
    return None


def _surefire_jvm(argv: Sequence[str]) -> bool:
    """`/usr/lib/jvm/.../bin/java -jar /w/target/surefire/surefirebooter123.jar ...`: the JVM
    Maven's Surefire forks to run the tests, whose dump Surefire keeps in the reports'
    `*.dumpstream` (`assay.parsers.java_stacks`)."""
    return os.path.basename(argv[0]) == "java" and any(
        os.path.basename(word).startswith("surefirebooter") and word.endswith(".jar")
        for word in argv[1:]
    )


def _go_test_binary(argv: Sequence[str]) -> bool:
    """`/tmp/go-build…/b001/calc.test -test.paniconexit0 -test.timeout=10m0s …`, as `go test`
    starts a package's tests."""
    return os.path.basename(argv[0]).endswith(".test") and any(
        word.startswith("-test.") for word in argv[1:]
    )


def ask_for_stacks(leaves: Sequence[reaper.Leaf]) -> list[int]:
    """Send each of `leaves` that prints its stacks on a signal that signal; the pidfds of
    those sent it (readable once each has exited), for the caller to wait on and close."""
    asked: list[int] = []
    for leaf in leaves:
        sig = dump_signal(leaf.argv)
        if sig is None or leaf.pid is None:
            continue
        fd = reaper.pidfd(leaf.pid)
        if fd is None:
            continue
        try:
            if reaper.command_line(leaf.pid) != leaf.argv:
                os.close(fd)  # gone, and its pid perhaps another process's since
                continue
            # A JVM blocks SIGQUIT in its Java threads (its own thread takes it): only Go's
            # is sent to a thread.
            thread = _busiest_running_thread(leaf.pid) if _go_test_binary(leaf.argv) else None
            # The main thread is the pidfd's to signal; another, tgkill's, which signals it
            # only while it is a thread of that pid (both numbers reused at once, never).
            if thread is None or thread == leaf.pid or not _send_to_thread(leaf.pid, thread, sig):
                signal.pidfd_send_signal(fd, sig)
        except OSError:
            os.close(fd)
            continue
        asked.append(fd)
    return asked


def _busiest_running_thread(pid: int) -> int | None:
    """The thread of `pid` in the running state that has used the most processor time (the
    one spinning, in a hung test), or None when none is running."""
    best: tuple[int, int] | None = None
    try:
        tids = [int(t) for t in os.listdir(f"/proc/{pid}/task") if t.isdigit()]
    except OSError:
        return None
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) < 13 or fields[0] != b"R":
            continue
        used = int(fields[11]) + int(fields[12])  # utime + stime, in clock ticks
        if best is None or used > best[0]:
            best = (used, tid)
    return None if best is None else best[1]


def _send_to_thread(pid: int, tid: int, sig: signal.Signals) -> bool:
    """Send `sig` to thread `tid` of process `pid` only; whether it was sent."""
    try:
        import ctypes

        tgkill = ctypes.CDLL(None, use_errno=True).tgkill
    except (OSError, AttributeError):
        return False
    return bool(tgkill(pid, tid, int(sig)) == 0)

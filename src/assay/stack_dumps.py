"""Asking a hung test process for its stacks before the deadline's kill ends it.

A Go test binary prints every goroutine's stack when it is sent SIGQUIT, then exits; `go
test` relays that as the running test's output, where the Go parser finds the line of the
project's code the test was stuck on (`assay.parsers.go_stacks`). SIGTERM, the deadline's
first signal, ends it without a word. Only the run's leaves (`reaper.leaf_commands`) are
asked, each through a pidfd opened after its command line was read again, so that a pid
reused since the leaves were looked at is never signalled.

What a dump says is the hung code's own output: it only names a place beside a verdict
that is a hang already. A process that ignores the signal is waited on no longer than
`DUMP_WAIT_SECONDS`, and then killed with the rest.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Sequence

from assay import reaper

#: Longest wait for the asked processes to print their stacks and exit.
DUMP_WAIT_SECONDS = 1.0
#: After they exited, how long what relays their output (`go test`) may take to pass the
#: rest on, unless it exits first.
RELAY_SECONDS = 0.3


def dump_signal(argv: Sequence[str]) -> signal.Signals | None:
    """The signal on which the program `argv` prints its stacks and exits, where known."""
    if argv and _go_test_binary(argv):
        return signal.SIGQUIT
    return None


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
            signal.pidfd_send_signal(fd, sig)
        except OSError:
            os.close(fd)
            continue
        asked.append(fd)
    return asked

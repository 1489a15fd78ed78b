"""What a person sees while `assay verify` or `assay eval` runs: each finished item's line
as soon as it ends and, on a terminal, a live status line below them (drawn with rich,
imported only here and only then: `assay --version` and piped runs never load it).

`live_display` is the one place that draws: an observer (a `LiveObserver`) says what its
lines and its status are; verify's `LineProgress` names the checks still running, eval's
`EvalProgress` counts attempts. Not on a terminal, only the finished lines are written,
nothing that redraws; with `--json` nothing is written at all (the command line does not
watch then).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import IO, Any, TypeVar

from assay.evidence import Check, Evidence
from assay.report import summary_line
from assay.terminal import for_terminal


class LiveObserver:
    """Finished lines written through `write`, and a status line for the live display.

    Items end in their own threads. Two locks, never one inside the other's holder: rich's
    refresh thread asks `status` while it holds the console's lock, and a line is written
    through that console, so writing while holding the lock `status` takes would deadlock
    the two."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self._write = write
        self._lock = threading.Lock()
        """Guards the subclass's counters; nothing is written while it is held."""
        self._writing = threading.Lock()
        """One finished line at a time."""

    def _emit(self, line: str) -> None:
        """Write one finished line (call without `_lock` held)."""
        with self._writing:
            self._write(line)

    def status(self) -> str:
        """The live line; empty draws nothing."""
        return ""


Observer = TypeVar("Observer", bound=LiveObserver)


@contextlib.contextmanager
def live_display(
    stream: IO[str], make: Callable[[Callable[[str], None]], Observer]
) -> Iterator[Observer]:
    """The observer `make` builds around a line writer for `stream`: with its status drawn
    live below the lines when `stream` is a terminal and rich is installed, else finished
    lines only."""
    if not stream.isatty():
        yield make(lambda line: _write_line(stream, line))
        return
    try:
        from rich.console import Console
        from rich.live import Live
        from rich.text import Text
    except ImportError:  # rich is missing: the lines still come as items end
        yield make(lambda line: _write_line(stream, line))
        return
    console = Console(file=stream, highlight=False)
    observer = make(lambda line: console.print(Text(line), soft_wrap=True))

    class _Status:
        def __rich__(self) -> Any:
            return Text(observer.status(), style="dim")

    with Live(_Status(), console=console, transient=True, refresh_per_second=4):
        yield observer


class LineProgress(LiveObserver):
    """Writes each finished check's summary line; remembers what it wrote, so that the
    final report does not repeat it. Its status names the checks still running."""

    def __init__(self, write: Callable[[str], None]) -> None:
        super().__init__(write)
        self.printed: set[str] = set()
        self.running: dict[str, float] = {}
        """The checks started and not yet ended, by name, with when they started."""

    def started(self, check: Check) -> None:
        with self._lock:
            self.running[check.name] = time.monotonic()

    def finished(self, evidence: Evidence) -> None:
        line = for_terminal(summary_line(evidence))
        with self._lock:
            self.running.pop(evidence.check.name, None)
            self.printed.add(line)
        self._emit(line)

    def still_running(self) -> str:
        """One line naming the checks still running and for how long."""
        now = time.monotonic()
        with self._lock:
            names = [f"{for_terminal(n)} ({now - t:.0f}s)" for n, t in self.running.items()]
        return ("running: " + ", ".join(names)) if names else ""

    def status(self) -> str:
        return self.still_running()


def watching(stream: IO[str]) -> contextlib.AbstractContextManager[LineProgress]:
    """`assay verify`'s observer writing to `stream` (see `live_display`)."""
    return live_display(stream, LineProgress)


def _write_line(stream: IO[str], line: str) -> None:
    stream.write(line + "\n")
    stream.flush()

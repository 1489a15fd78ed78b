"""What a person sees while `assay verify` runs: each check's line as soon as it ends,
and, on a terminal, which checks are still running (drawn with rich, imported only here
and only then: `assay --version` and piped runs never load it).

Not on a terminal, only the finished lines are written, nothing that redraws; with
`--json` nothing is written at all (the command line does not watch then).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import IO, Any

from assay.evidence import Check, Evidence
from assay.report import summary_line
from assay.terminal import for_terminal


class LineProgress:
    """Writes each finished check's summary line through `write`; remembers what it wrote,
    so that the final report does not repeat it."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self._write = write
        # Checks of one stage end in their own threads. Two locks, never one inside the
        # other's holder: rich's refresh thread asks `still_running` while it holds the
        # console's lock, and a line is written through that console, so writing while
        # holding the lock `still_running` takes would deadlock the two.
        self._lock = threading.Lock()
        """Guards `printed` and `running`; nothing is called while it is held."""
        self._writing = threading.Lock()
        """One finished line at a time."""
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
        with self._writing:
            self._write(line)

    def still_running(self) -> str:
        """One line naming the checks still running and for how long."""
        now = time.monotonic()
        with self._lock:
            names = [f"{for_terminal(n)} ({now - t:.0f}s)" for n, t in self.running.items()]
        return ("running: " + ", ".join(names)) if names else ""


@contextlib.contextmanager
def watching(stream: IO[str]) -> Iterator[LineProgress]:
    """A progress observer writing to `stream`: with a live line of what is running when
    `stream` is a terminal and rich is installed, else finished lines only."""
    if not stream.isatty():
        yield LineProgress(lambda line: _write_line(stream, line))
        return
    try:
        from rich.console import Console
        from rich.live import Live
        from rich.text import Text
    except ImportError:  # rich is missing: the lines still come as checks end
        yield LineProgress(lambda line: _write_line(stream, line))
        return
    console = Console(file=stream, highlight=False)
    progress = LineProgress(lambda line: console.print(Text(line), soft_wrap=True))

    class _Running:
        def __rich__(self) -> Any:
            return Text(progress.still_running(), style="dim")

    with Live(_Running(), console=console, transient=True, refresh_per_second=4):
        yield progress


def _write_line(stream: IO[str], line: str) -> None:
    stream.write(line + "\n")
    stream.flush()

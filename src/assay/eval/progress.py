"""What a person sees while `assay eval` runs: a line per finished attempt as it is
recorded and, on a terminal, a live line below them (attempts done of all, pass rate so
far, errors by stage and cause), drawn with rich, imported only here and only then.

Not on a terminal, only the finished lines are written, nothing that redraws.
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from typing import IO, Any

from assay.eval.record import AttemptRecord
from assay.terminal import for_terminal


class EvalProgress:
    """Counts recorded attempts and writes each one's line through `write`."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self._write = write
        # Attempts end in the harness's threads, and rich's refresh thread asks `status`
        # while it holds its console's lock: the counters' lock is never held while
        # writing, so the two never wait on each other (as in assay.live_progress).
        self._lock = threading.Lock()
        self._writing = threading.Lock()
        self.total = 0
        self.done = 0
        self.scored = 0
        self.passed = 0
        self.errors: Counter[str] = Counter()

    def started(self, eval_id: str, count: int) -> None:
        with self._lock:
            self.total = count

    def recorded(self, record: AttemptRecord) -> None:
        with self._lock:
            self.done += 1
            if record.error is not None:
                self.errors[f"{record.error.stage}/{record.error.cause}"] += 1
            else:
                self.scored += 1
                self.passed += int(record.score is not None and record.score.value >= 1.0)
            line = f"[{self.done}/{self.total}] {_outcome(record)}"
        with self._writing:
            self._write(for_terminal(line))

    def status(self) -> str:
        """One line: attempts done of all, the pass rate so far, the errors by cause."""
        with self._lock:
            parts = [f"{self.done}/{self.total} attempts done"]
            if self.scored:
                rate = self.passed / self.scored * 100
                parts.append(f"pass {rate:.1f}% ({self.passed}/{self.scored} scored)")
            if self.errors:
                causes = ", ".join(f"{c} {n}" for c, n in sorted(self.errors.items()))
                parts.append(f"errors {sum(self.errors.values())}: {causes}")
        return for_terminal(" · ".join(parts))


def _outcome(record: AttemptRecord) -> str:
    if record.error is not None:
        what = f"error {record.error.stage}/{record.error.cause}: {record.error.message}"
    else:
        value = record.score.value if record.score else 0.0
        what = f"{record.status} score {value:.1f}"
    return f"{record.task_id} #{record.epoch}: {what}"


@contextlib.contextmanager
def watching(stream: IO[str]) -> Iterator[EvalProgress]:
    """An observer writing to `stream`: with the live line when `stream` is a terminal
    and rich is installed, else finished lines only."""
    if not stream.isatty():
        yield EvalProgress(lambda line: _write_line(stream, line))
        return
    try:
        from rich.console import Console
        from rich.live import Live
        from rich.text import Text
    except ImportError:  # rich is missing: the lines still come as attempts end
        yield EvalProgress(lambda line: _write_line(stream, line))
        return
    console = Console(file=stream, highlight=False)
    progress = EvalProgress(lambda line: console.print(Text(line), soft_wrap=True))

    class _Status:
        def __rich__(self) -> Any:
            return Text(progress.status(), style="dim")

    with Live(_Status(), console=console, transient=True, refresh_per_second=4):
        yield progress


def _write_line(stream: IO[str], line: str) -> None:
    stream.write(line + "\n")
    stream.flush()

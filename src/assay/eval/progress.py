"""What a person sees while `assay eval` runs: a line per finished attempt as it is
recorded and, on a terminal, a live line below them (attempts done of all, pass rate so
far, errors by stage and cause), drawn by the display `assay verify` uses too
(`assay.live_progress.live_display`).

Not on a terminal, only the finished lines are written, nothing that redraws.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable
from typing import IO

from assay.eval.record import AttemptRecord
from assay.live_progress import LiveObserver, live_display
from assay.terminal import for_terminal


class EvalProgress(LiveObserver):
    """Counts recorded attempts and writes each one's line through `write`."""

    def __init__(self, write: Callable[[str], None]) -> None:
        super().__init__(write)
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
        self._emit(for_terminal(line))

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


def watching(stream: IO[str]) -> contextlib.AbstractContextManager[EvalProgress]:
    """`assay eval`'s observer writing to `stream` (see `live_display`)."""
    return live_display(stream, EvalProgress)

"""The one live display `assay verify` and `assay eval` share: on a real pseudo-terminal
the observer's status line is drawn live below its finished lines and erased at the end;
on a pipe only the finished lines come, never a control sequence."""

from __future__ import annotations

import fcntl
import os
import select
import struct
import termios
import time
from collections.abc import Callable
from typing import IO

import pytest

from assay.eval.progress import EvalProgress
from assay.eval.progress import watching as watch_eval
from assay.live_progress import LineProgress, LiveObserver, live_display
from assay.live_progress import watching as watch_verify

#: The start of a control sequence (colour, cursor movement, line erase).
ESC = "\x1b"


class Counting(LiveObserver):
    """Counts what it was told; its status says how many so far."""

    def __init__(self, write: Callable[[str], None]) -> None:
        super().__init__(write)
        self.count = 0

    def tick(self) -> None:
        with self._lock:
            self.count += 1
            line = f"tick {self.count}"
        self._emit(line)

    def status(self) -> str:
        with self._lock:
            return f"{self.count} ticks so far"


def _drain(master: int, seconds: float = 0.6) -> str:
    """What the terminal received within `seconds` (the display keeps redrawing)."""
    text = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and select.select([master], [], [], 0.1)[0]:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        text.append(data.decode(errors="replace"))
    return "".join(text)


def test_on_a_terminal_the_status_is_drawn_live_and_the_lines_stay() -> None:
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    stream: IO[str] = os.fdopen(slave, "w")
    try:
        with live_display(stream, Counting) as observer:
            observer.tick()
            live = _drain(master)  # the display redraws four times a second
            observer.tick()
        after = _drain(master)
    finally:
        stream.close()
        os.close(master)
    assert "tick 1" in live
    assert "1 ticks so far" in live  # drawn while it ran, not only at the end
    assert ESC in live
    assert "tick 2" in after


def test_piped_only_the_finished_lines_come() -> None:
    import io

    stream = io.StringIO()
    with live_display(stream, Counting) as observer:
        observer.tick()
        observer.tick()
    assert stream.getvalue() == "tick 1\ntick 2\n"


@pytest.mark.parametrize("watching", [watch_verify, watch_eval])
def test_verify_and_eval_use_the_one_display(watching: object) -> None:
    import io

    with watching(io.StringIO()) as observer:  # type: ignore[operator]
        assert isinstance(observer, LiveObserver)
        assert isinstance(observer, (LineProgress, EvalProgress))

"""A last answer before the caller's own timeout: the hook's deadline, enforced.

Verification has its own budget, and runs past it end INDETERMINATE. This is for the
case where the hook itself is stuck past it: a caller that kills a hook on its timeout
lets the stop through, so the hook answers first -- blocking, within the cap -- kills
what it started, and exits.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable

from assay.hooks.decide import Decision

__all__ = ["GRACE_S", "Answer"]

#: Seconds past the verification's own deadline before the watchdog answers for it.
GRACE_S = 20.0


class Answer:
    """Says the hook's decision exactly once: from the main path, or from the watchdog
    when `deadline_s` (+ `GRACE_S`) passes first."""

    def __init__(self, say: Callable[[Decision], int], late: Callable[[], Decision]) -> None:
        self._say = say
        self._late = late
        self._lock = threading.Lock()
        self._done = False
        self._timer: threading.Timer | None = None

    def arm(self, deadline_s: float | None) -> None:
        if deadline_s is None:
            return
        self._timer = threading.Timer(deadline_s + GRACE_S, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def give(self, decision: Decision) -> int:
        """Say `decision` (unless the watchdog already answered); the exit code."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            if self._done:
                return 0
            self._done = True
            return self._say(decision)

    def _expire(self) -> None:
        with self._lock:
            if self._done:
                return
            self._done = True
            code = self._say(self._late())
            sys.stdout.flush()
            sys.stderr.flush()
        from assay.process import kill_active_runs

        kill_active_runs(and_later=True)
        os._exit(code)  # the main thread is stuck: nothing else would end the process

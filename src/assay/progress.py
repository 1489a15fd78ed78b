"""Watching a verification while it runs: each check is announced as it starts and ends.

The checks of a stage run side by side in threads, so an observer is called from those
threads. An observer that raises is the reader's problem, never the verdict's: every
call goes through `notify`, which swallows what it raises.
"""

from __future__ import annotations

import contextlib
from typing import Protocol

from assay.evidence import Check, Evidence


class Progress(Protocol):
    """What `assay verify` tells whoever is watching (the command line's live display)."""

    def started(self, check: Check) -> None:
        """`check` is about to run."""

    def finished(self, evidence: Evidence) -> None:
        """A check ran (or was refused); `evidence` is its verdict."""


def notify_started(progress: Progress | None, check: Check) -> None:
    if progress is not None:
        with contextlib.suppress(Exception):  # a broken display must not change a verdict
            progress.started(check)


def notify_finished(progress: Progress | None, evidence: Evidence) -> None:
    if progress is not None:
        with contextlib.suppress(Exception):  # a broken display must not change a verdict
            progress.finished(evidence)

"""The stages of an attempt and the one error type the harness turns into a run's error.

An infrastructure failure is never a score: it is an error of that run, naming the stage
it happened in and its cause (a short, stable word a report can group by).
"""

from __future__ import annotations

import enum

from assay.errors import AssayError


class Stage(enum.StrEnum):
    """An attempt's stages, in order; `cleanup` and `store` close every attempt."""

    GENERATE = "generate"
    PROVISION = "provision"
    RUN = "run"
    VERIFY = "verify"
    SCORE = "score"
    CLEANUP = "cleanup"
    STORE = "store"


class StageError(AssayError):
    """An infrastructure failure: the attempt is an error of `stage`, with `cause`."""

    def __init__(self, stage: Stage, cause: str, message: str) -> None:
        super().__init__(message)
        self.stage = stage
        self.cause = cause
        """A stable word: `no_generator`, `source_missing`, `agent_launch_failed`..."""

"""What one attempt leaves behind: written to the store once, whole, when it is complete."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.eval.score import Score

SCORED = "scored"
ERROR = "error"


@dataclass(frozen=True, slots=True)
class AttemptError:
    """An infrastructure failure of one try: its stage, a stable cause word, the message."""

    stage: str
    cause: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"stage": self.stage, "cause": self.cause, "message": self.message}


@dataclass(frozen=True, slots=True)
class StageTiming:
    attempt_try: int
    stage: str
    seconds: float


@dataclass(frozen=True, slots=True)
class AttemptRecord:
    """One (task, epoch) of an evaluation, after its last try.

    `outcome` is `scored` (with `score`) or `error` (with `error`, never a score). A
    cleanup failure after a scored try makes the attempt an error that keeps its
    verification and score in `evidence`, so nothing it found is lost.
    """

    eval_id: str
    task_id: str
    epoch: int
    outcome: str
    started_at: float
    finished_at: float
    tries: int = 1
    status: str | None = None
    error: AttemptError | None = None
    score: Score | None = None
    timings: tuple[StageTiming, ...] = ()
    evidence: dict[str, Any] = field(default_factory=dict)
    telemetry: dict[str, Any] = field(default_factory=dict)

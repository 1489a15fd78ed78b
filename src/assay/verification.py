"""A build-then-test `Verification` spec run under one deadline: `verify(spec, workdir, env)`.

Errors (catch `VerificationError` for "the verification could not be carried out"):

    VerificationError      the spec or workdir is unusable; nothing ran
     +-- StepStartError    a step could not start (not found, OS failure); carries the phase

A command that ran and exited non-zero is never an error: it is a result.
"""

from __future__ import annotations

import enum
import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from assay.engine import default_runner
from assay.errors import AssayError
from assay.process import CommandRunner, InvalidRun, ProcessResult


class Phase(enum.StrEnum):
    """A step of a verification."""

    BUILD = "build"
    TEST = "test"


class VerificationError(AssayError):
    """The verification could not be carried out; nothing about the code was learned."""


class StepStartError(VerificationError):
    """A step could not start. `phase` says which; `__cause__` is the underlying OS error."""

    def __init__(self, phase: Phase, message: str, result: ProcessResult | None = None) -> None:
        self.phase = phase
        self.result = result
        super().__init__(f"{phase.value} step could not start: {message}")


@dataclass(frozen=True, slots=True)
class Verification:
    """What to run to verify a workdir: an optional build, then the tests."""

    test_cmd: tuple[str, ...]
    build_cmd: tuple[str, ...] | None = None
    timeout_seconds: float = 0
    """One deadline over build and test together; 0 means none."""

    def __post_init__(self) -> None:
        if not self.test_cmd:
            raise VerificationError("test_cmd is empty: there is nothing to verify")
        if self.build_cmd is not None and not self.build_cmd:
            raise VerificationError("build_cmd is empty; leave it out when there is no build")
        timeout = self.timeout_seconds
        if not isinstance(timeout, int | float) or math.isnan(timeout) or timeout < 0:
            raise VerificationError(f"timeout_seconds must be >= 0, got {timeout!r}")


@dataclass(frozen=True, slots=True)
class StepResult:
    """One step that ran."""

    phase: Phase
    result: ProcessResult

    @property
    def succeeded(self) -> bool:
        r = self.result
        return r.exit_code == 0 and not r.timed_out and r.signal is None and r.start_failure is None


@dataclass(frozen=True, slots=True)
class VerificationResult:
    """How a verification ended; a failing build or test is a result, not an error."""

    passed: bool
    phase: Phase
    """The last phase that ran (or, at an expired deadline, the one that could not)."""
    exit_code: int | None
    timed_out: bool
    duration_s: float
    steps: tuple[StepResult, ...] = field(default_factory=tuple)

    @property
    def stdout(self) -> str:
        return "".join(step.result.stdout.text for step in self.steps)

    @property
    def stderr(self) -> str:
        return "".join(step.result.stderr.text for step in self.steps)


def verify(
    spec: Verification | None,
    workdir: str | os.PathLike[str] | None,
    env: Mapping[str, str] | None = None,
    *,
    runner: CommandRunner | None = None,
) -> VerificationResult:
    """Build (when the spec has a build), then test, in `workdir` with `env` laid over the policy.

    A failing build short-circuits the tests. The spec's timeout is one deadline over
    both steps. Raises `VerificationError` before anything runs when the spec or the
    workdir is unusable (an empty workdir never means "the current directory"), and
    `StepStartError` when a step could not start.
    """
    if spec is None:
        raise VerificationError("no verification spec given")
    if workdir is None or not os.fspath(workdir):
        raise VerificationError("workdir is empty: refusing to default to the current directory")
    directory = os.fspath(workdir)
    if not os.path.isdir(directory):
        raise VerificationError(f"workdir does not exist or is not a directory: {directory}")
    run = runner or default_runner
    clock = _Deadline(spec.timeout_seconds)
    steps: list[StepResult] = []
    phases = [(Phase.BUILD, spec.build_cmd), (Phase.TEST, spec.test_cmd)]
    for phase, argv in phases:
        if argv is None:
            continue
        remaining = clock.remaining()
        if remaining is not None and remaining <= 0:
            # run_process reads a zero timeout as "no deadline": never start a step past it.
            return _ended(phase, steps, clock, timed_out=True)
        step = StepResult(phase, _start(run, phase, argv, directory, env, remaining))
        steps.append(step)
        if not step.succeeded:
            return _ended(phase, steps, clock, timed_out=step.result.timed_out)
    return _ended(Phase.TEST, steps, clock, timed_out=False, passed=True)


def _start(
    run: CommandRunner,
    phase: Phase,
    argv: Sequence[str],
    directory: str,
    env: Mapping[str, str] | None,
    timeout: float | None,
) -> ProcessResult:
    try:
        result = run(argv, cwd=directory, env=env, timeout=timeout)
    except (InvalidRun, OSError) as exc:
        raise StepStartError(phase, str(exc)) from exc
    if result.start_failure is not None:
        cause = OSError(result.start_error or result.start_failure.value)
        raise StepStartError(phase, str(cause), result) from cause
    return result


def _ended(
    phase: Phase,
    steps: list[StepResult],
    clock: _Deadline,
    *,
    timed_out: bool,
    passed: bool = False,
) -> VerificationResult:
    last = steps[-1].result if steps and steps[-1].phase is phase else None
    return VerificationResult(
        passed=passed,
        phase=phase,
        exit_code=last.exit_code if last else None,
        timed_out=timed_out,
        duration_s=clock.elapsed(),
        steps=tuple(steps),
    )


class _Deadline:
    """One deadline shared by consecutive steps."""

    def __init__(self, seconds: float) -> None:
        self._now = time.monotonic
        self._start = self._now()
        self._end = self._start + seconds if seconds else None

    def remaining(self) -> float | None:
        return None if self._end is None else self._end - self._now()

    def elapsed(self) -> float:
        return self._now() - self._start

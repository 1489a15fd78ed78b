"""A build-then-test `Verification` spec run under one deadline: `verify(spec, workdir, env)`.

A thin verifier over what `assay verify` uses: each step is a `Check`, run through the
fail-closed runner, its evidence read by the same parsers and `classify`, and the result
passes only when `aggregate` says VERIFIED -- so it can never pass what `verify` would not
(a test step that exits 0 without a test seen executing does not pass). A failed build
skips the tests.

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
from typing import Any

from assay.check_execution import default_runner
from assay.errors import AssayError
from assay.evidence import Check, Evidence
from assay.process import CommandRunner, InvalidRun, ProcessResult
from assay.verdict import Kind, Status


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
    evidence: tuple[Evidence, ...] = field(default_factory=tuple)
    """Each step's evidence, as `assay verify` would classify it."""
    status: Status = Status.UNVERIFIED
    """What `aggregate` made of the evidence; `passed` is exactly `status` VERIFIED."""

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
    evidence: list[Evidence] = []
    phases = [(Phase.BUILD, spec.build_cmd), (Phase.TEST, spec.test_cmd)]
    for phase, argv in phases:
        if argv is None:
            continue
        remaining = clock.remaining()
        if remaining is not None and remaining <= 0:
            # run_process reads a zero timeout as "no deadline": never start a step past it.
            return _ended(phase, steps, evidence, clock, timed_out=True)
        step, judged = _step(run, phase, tuple(argv), directory, env, remaining)
        evidence.append(judged)
        if step is None:  # the runner gave up on it (stuck past its deadline)
            return _ended(phase, steps, evidence, clock, timed_out=True)
        steps.append(step)
        if not judged.passed:
            return _ended(phase, steps, evidence, clock, timed_out=step.result.timed_out)
    return _ended(Phase.TEST, steps, evidence, clock, timed_out=False)


def _step(
    run: CommandRunner,
    phase: Phase,
    argv: tuple[str, ...],
    directory: str,
    env: Mapping[str, str] | None,
    timeout: float | None,
) -> tuple[StepResult | None, Evidence]:
    """Run one step as a check through the fail-closed runner; re-raises `StepStartError`."""
    from assay.check_verifiers import run_checks
    from assay.classify import classify
    from assay.parsers import parse_output

    check = Check(
        name=phase.value,
        kind=Kind(phase.value),
        argv=argv,
        timeout_s=timeout,
        source=f"Verification.{phase.value}_cmd",
    )
    seen: dict[str, Any] = {}

    def execute(check: Check) -> Evidence:
        try:
            result = _start(run, phase, argv, directory, env, timeout)
        except StepStartError as exc:
            seen["error"] = exc
            raise
        seen["result"] = result
        return classify(check, result, parse_output(check, result))

    (judged,) = run_checks([check], execute, workdir=directory)
    if "error" in seen:
        raise seen["error"]
    result = seen.get("result")
    return (StepResult(phase, result) if result is not None else None), judged


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
    evidence: list[Evidence],
    clock: _Deadline,
    *,
    timed_out: bool,
) -> VerificationResult:
    from assay.report import aggregate

    last = steps[-1].result if steps and steps[-1].phase is phase else None
    # A step the deadline kept from starting is evidence too: nothing says it would pass.
    ran_every_step = not timed_out or (last is not None and last.timed_out)
    status = aggregate(evidence).status if ran_every_step else Status.INDETERMINATE
    return VerificationResult(
        passed=status is Status.VERIFIED,
        phase=phase,
        exit_code=last.exit_code if last else None,
        timed_out=timed_out,
        duration_s=clock.elapsed(),
        steps=tuple(steps),
        evidence=tuple(evidence),
        status=status,
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

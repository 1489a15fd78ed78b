"""The harness: each attempt goes generate -> provision -> run -> verify -> score, behind
seams (a generator registry, a `Sandbox`, a `Runner`, a `Verifier`, a `Store`).

It owns sequencing and failure policy only (DESIGN.md):

- an infrastructure failure (no generator, a source or sandbox that cannot be provisioned,
  an agent that would not launch, a verification that could not run, a store write, a
  cleanup) is an error of that attempt, with its stage and cause; it is tried again up to
  `retries` times, never scored, never dropped;
- a completed-but-wrong outcome (the agent exited non-zero, the tests fail) is scored;
- cleanup always runs; a cleanup failure turns an otherwise good attempt into an error
  whose result stays recorded, and never masks an earlier error;
- one attempt's failure, even a bug of the harness's own, never affects another's.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.eval.failures import Stage, StageError
from assay.eval.generators import Registry
from assay.eval.record import ERROR, SCORED, AttemptError, AttemptRecord, StageTiming
from assay.eval.runners import AgentResult, Runner
from assay.eval.score import Score, score
from assay.eval.sources import ResolvedSource, resolve_source
from assay.eval.store import Store, StoreError
from assay.eval.task import TaskSpec
from assay.eval.verify_stage import Verification, Verifier
from assay.sandbox.base import Sandbox, SandboxError, Workspace
from assay.scratch import make_scratch, remove_scratch

if TYPE_CHECKING:
    from assay.eval.executors import Executor


@dataclass(frozen=True, slots=True)
class Planned:
    """One attempt to make: a task and its epoch (1-based)."""

    task: TaskSpec
    epoch: int


@dataclass(slots=True)
class _Try:
    """What one try of an attempt got to, stage by stage."""

    number: int
    stopping: threading.Event
    timings: list[StageTiming] = field(default_factory=list)
    stage: Stage = Stage.GENERATE
    generator: str | None = None
    workspace: Workspace | None = None
    agent: AgentResult | None = None
    verification: Verification | None = None
    score: Score | None = None
    error: AttemptError | None = None

    @contextlib.contextmanager
    def stage_of(self, stage: Stage) -> Iterator[None]:
        if self.stopping.is_set() and stage is not Stage.CLEANUP:
            raise StageError(stage, "interrupted", "the evaluation was interrupted")
        self.stage = stage
        started = time.monotonic()
        try:
            yield
        finally:
            self.timings.append(StageTiming(self.number, stage, time.monotonic() - started))

    def evidence(self) -> dict[str, Any]:
        ws = self.workspace
        return {
            "generator": self.generator,
            "run_id": ws.run_id if ws else None,
            "run_dir": str(ws.path) if ws else None,
            "base_commit": ws.base_commit if ws else None,
            "agent": self.agent.to_dict() if self.agent else None,
            "verification": self.verification.to_dict() if self.verification else None,
            "score": self.score.to_dict() if self.score else None,
            "error": self.error.to_dict() if self.error else None,
        }


class AttemptMaker:
    """Makes attempts through the stages (tries included) and hands each back whole; it
    writes nothing. The harness keeps what it makes; an executor may make them elsewhere
    (a Ray worker holds one of these, never the store)."""

    def __init__(
        self,
        registry: Registry,
        sandbox: Sandbox,
        runner: Runner,
        verifier: Verifier,
        *,
        retries: int = 0,
    ) -> None:
        _check_seams(registry=registry, sandbox=sandbox, runner=runner, verifier=verifier)
        if not isinstance(retries, int) or retries < 0:
            raise ValueError(f"retries must be an integer >= 0, got {retries!r}")
        self.registry = registry
        self.sandbox = sandbox
        self.runner = runner
        self.verifier = verifier
        self.retries = retries
        self._stopping = threading.Event()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def stop(self) -> None:
        """Attempts under way stop at their next stage (cleanup still runs)."""
        self._stopping.set()

    def perform(self, eval_id: str, item: Planned, *, first_try: int = 1) -> AttemptRecord:
        """One attempt, tried again after an infrastructure error up to try `retries + 1`
        (numbering from `first_try`: earlier tries were made elsewhere), not stored."""
        started = time.time()
        tries: list[_Try] = []
        for number in range(first_try, max(first_try, self.retries + 1) + 1):
            tried = self._try(item.task, number)
            tries.append(tried)
            if tried.error is None or self._stopping.is_set():
                break
        return _record(eval_id, item, tries, started)

    def _try(self, spec: TaskSpec, number: int) -> _Try:
        tried = _Try(number, self._stopping)
        scratch: Path | None = None
        try:
            with tried.stage_of(Stage.GENERATE):
                generator = self.registry.lookup(spec.language)
                tried.generator = generator.name
                task = generator.generate(spec)
            with tried.stage_of(Stage.PROVISION):
                # A task id may hold what a scratch name may not (`django__django-11099`).
                word = re.sub(r"[^a-z0-9]+", "-", task.id.lower()).strip("-") or "task"
                scratch = make_scratch(f"eval-{word}")
                source = resolve_source(task.source, scratch)
                tried.workspace = self._provision(source)
            with tried.stage_of(Stage.RUN):
                tried.agent = self._run_agent(task, tried.workspace)
            with tried.stage_of(Stage.VERIFY):
                tried.verification = self.verifier.verify(
                    task, source, tried.workspace.path, scratch
                )
            with tried.stage_of(Stage.SCORE):
                tried.score = score(tried.verification, tried.agent)
        except StageError as exc:
            tried.error = AttemptError(exc.stage, exc.cause, str(exc))
        except Exception as exc:  # fail closed: the harness's own bug errs this attempt only
            tried.error = AttemptError(
                tried.stage, "internal_error", f"{type(exc).__name__}: {exc}"
            )
        finally:  # an interrupt too: it propagates, after the workspace is gone
            self._clean_up(tried, scratch)
        return tried

    def _provision(self, source: ResolvedSource) -> Workspace:
        try:
            return self.sandbox.provision(source.repo, commit=source.commit)
        except SandboxError as exc:
            raise StageError(Stage.PROVISION, "provision_failed", str(exc)) from exc

    def _run_agent(self, task: TaskSpec, workspace: Workspace) -> AgentResult:
        try:
            return self.runner.run(task, self.sandbox, workspace)
        except SandboxError as exc:
            raise StageError(Stage.RUN, "sandbox_error", str(exc)) from exc

    def _clean_up(self, tried: _Try, scratch: Path | None) -> None:
        """Always runs. Its failure errs a good try, or is added to an earlier error."""
        problems: list[str] = []
        with tried.stage_of(Stage.CLEANUP):
            if tried.workspace is not None:
                try:
                    self.sandbox.cleanup(tried.workspace)
                except Exception as exc:  # every failure is reported, none escapes
                    problems.append(f"workspace {tried.workspace.run_id}: {exc}")
            if scratch is not None:
                try:
                    remove_scratch(scratch)
                except Exception as exc:
                    problems.append(f"scratch {scratch}: {exc}")
        if not problems:
            return
        message = "cleanup failed: " + "; ".join(problems)
        if tried.error is None:
            tried.error = AttemptError(Stage.CLEANUP, "cleanup_failed", message)
        else:
            tried.error = AttemptError(
                tried.error.stage, tried.error.cause, f"{tried.error.message} (and {message})"
            )


class Harness(AttemptMaker):
    """Runs attempts through the stages and records each in the store; its executor says
    where they run (this process's threads by default)."""

    def __init__(
        self,
        registry: Registry,
        sandbox: Sandbox,
        runner: Runner,
        verifier: Verifier,
        store: Store,
        *,
        retries: int = 0,
        concurrency: int = 1,
        executor: Executor | None = None,
    ) -> None:
        _check_seams(
            registry=registry, sandbox=sandbox, runner=runner, verifier=verifier, store=store
        )
        super().__init__(registry, sandbox, runner, verifier, retries=retries)
        if not isinstance(concurrency, int) or concurrency < 1:
            raise ValueError(f"concurrency must be an integer >= 1, got {concurrency!r}")
        self.store = store
        self.concurrency = concurrency
        if executor is None:
            from assay.eval.executors.local import LocalExecutor

            executor = LocalExecutor()
        self.executor = executor

    def run(
        self,
        eval_id: str,
        planned: Sequence[Planned],
        *,
        on_record: Callable[[AttemptRecord], None] | None = None,
    ) -> list[AttemptRecord]:
        """Run every planned attempt (`concurrency` at a time) on the executor; each is
        recorded in the store as it completes. Returns the records in plan order."""

        def recorded(record: AttemptRecord) -> None:
            if on_record is not None:
                with contextlib.suppress(Exception):  # a display never breaks a run
                    on_record(record)

        return self.executor.run(self, eval_id, planned, recorded)

    def attempt(self, eval_id: str, item: Planned) -> AttemptRecord:
        """One attempt, tried again after an infrastructure error, then stored."""
        record = self.perform(eval_id, item)
        if self._stopping.is_set():
            return record  # stopped part-way: not complete, so not recorded
        return self.keep(record)

    def keep(self, record: AttemptRecord) -> AttemptRecord:
        """Write a complete attempt to the store (the only writer: executors hand their
        attempts here). A write that fails makes it an error, returned, never dropped."""
        try:
            self.store.record_attempt(record)
        except StoreError as exc:
            # Not in the store, but never dropped: the caller gets it, with its cause.
            error = AttemptError(Stage.STORE, "store_write_failed", str(exc))
            return _as_error(record, error)
        return record


def _check_seams(**seams: object) -> None:
    missing = [name for name, seam in seams.items() if seam is None]
    if missing:
        raise ValueError(f"Harness needs every seam; missing: {', '.join(missing)}")


def _record(eval_id: str, item: Planned, tries: list[_Try], started: float) -> AttemptRecord:
    """The attempt as its last try left it; earlier tries' errors kept in its evidence."""
    last = tries[-1]
    evidence = last.evidence()
    evidence["task"] = item.task.to_dict()
    evidence["earlier_tries"] = [t.error.to_dict() for t in tries[:-1] if t.error]
    return AttemptRecord(
        eval_id=eval_id,
        task_id=item.task.id,
        epoch=item.epoch,
        outcome=SCORED if last.error is None else ERROR,
        started_at=started,
        finished_at=time.time(),
        tries=len(tries),
        status=last.verification.status if last.verification else None,
        error=last.error,
        # A try with an error is never scored, even one whose score was computed.
        score=last.score if last.error is None else None,
        timings=tuple(timing for t in tries for timing in t.timings),
        evidence=evidence,
        telemetry=last.agent.telemetry if last.agent else {},
    )


def _as_error(record: AttemptRecord, error: AttemptError) -> AttemptRecord:
    """`record`, which the store would not take: an error of the store stage, unless it
    already was an error (that one stays, the store's failure added to it)."""
    if record.error is not None:
        earlier = record.error
        error = AttemptError(
            earlier.stage, earlier.cause, f"{earlier.message} (and {error.message})"
        )
    return dataclasses.replace(record, outcome=ERROR, error=error, score=None)

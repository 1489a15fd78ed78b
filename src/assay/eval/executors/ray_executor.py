"""The Ray executor: each attempt is a Ray task on whichever node of a cluster has room.

On the node, the task unpacks the task's files (shipped as bytes through Ray's object
store: nodes share no filesystem with the driver), and provisions, runs the agent and
verifies there, in that node's sandbox, with the harness's own stages and retries. The
finished attempt comes back to the driver as soon as it is done (`ray.wait`), and only the
driver writes the store: an attempt is recorded whole when it returns, so a lost node or
a killed driver loses nothing already recorded, and `--resume` runs exactly the rest.

A worker that dies under an attempt (its process killed, its node lost, Ray's OOM killer)
takes that try's stages with it: the try is an infrastructure error of stage `worker`
(cause `worker_lost`; `worker_failed` for any other failure of Ray to run it), tried
again within `--retries` like any other, never scored. Ray's own retries are off, so each
try is counted and its cause kept.

Resources: each attempt asks for its task's `limits.cpus` (default 1) and
`limits.memory_mb` (default none), so Ray places no more on a node than it holds; an
attempt no node could ever hold is an error (`unschedulable`) instead of a wait forever.
At most `concurrency` attempts are in flight. The agent command and assay itself must be
installed alike on every node; the evaluator's files the agent command names are not
shipped.
"""

from __future__ import annotations

import dataclasses
import os
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import ray
import ray.exceptions

from assay.errors import AssayError
from assay.eval.executors.shipping import pack_task, unpack_task
from assay.eval.failures import StageError
from assay.eval.generators import Generator, Registry
from assay.eval.harness import AttemptMaker, Harness, Planned
from assay.eval.record import ERROR, AttemptError, AttemptRecord
from assay.eval.runners import Runner
from assay.eval.task import Source, TaskSpec
from assay.eval.verify_stage import Verifier
from assay.sandbox.base import Sandbox
from assay.scratch import make_scratch, remove_scratch

#: The stage of a try lost with its worker: which of its stages it was in went with it.
WORKER_STAGE = "worker"
#: Ray failures that mean the process or node running the attempt is gone.
LOST = (
    ray.exceptions.WorkerCrashedError,
    ray.exceptions.NodeDiedError,
    ray.exceptions.OutOfMemoryError,
    ray.exceptions.ObjectLostError,
)
MIB = 1024 * 1024
#: The most runs' seams a worker process keeps between its tasks.
_KEPT_SEAMS = 4


class _NotSubmitted(Exception):
    def __init__(self, error: AttemptError) -> None:
        super().__init__(error.message)
        self.error = error


class RayUnavailable(AssayError):
    """Ray could not be started or reached; the message says which address and why."""


@dataclass(frozen=True, slots=True)
class WorkerSeams:
    """What a node needs to make attempts: the harness's seams (not its store)."""

    registry: Registry
    sandbox: Sandbox
    runner: Runner
    verifier: Verifier
    retries: int


@dataclass(slots=True)
class _Attempt:
    """An attempt the driver is seeing through: its place in the plan, its lost tries."""

    index: int
    item: Planned
    started: float
    lost: list[AttemptError] = field(default_factory=list)


class RayExecutor:
    """Runs attempts as Ray tasks on the cluster at `address` (None: a Ray instance this
    process starts with `num_cpus` CPUs, or the one it is already connected to)."""

    name = "ray"

    def __init__(self, address: str | None = None, *, num_cpus: int | None = None) -> None:
        self.address = address
        self.num_cpus = num_cpus
        self._started = False

    def start(self) -> None:
        """Connect to Ray (or start it): before anything is planned, so an address that
        does not answer is a usage error, not an evaluation of errors."""
        if ray.is_initialized():
            return
        try:
            if self.address:
                ray.init(address=self.address, log_to_driver=False)
            else:
                ray.init(num_cpus=self.num_cpus, include_dashboard=False, log_to_driver=False)
        except Exception as exc:  # ConnectionError, RuntimeError, ValueError, ...
            where = self.address or "a local instance"
            raise RayUnavailable(f"Ray at {where}: {type(exc).__name__}: {exc}") from None
        self._started = True

    def close(self) -> None:
        """Disconnect, if this executor connected (a caller's own connection stays)."""
        if self._started:
            ray.shutdown()
            self._started = False

    def run(
        self,
        harness: Harness,
        eval_id: str,
        planned: Sequence[Planned],
        on_record: Callable[[AttemptRecord], None],
    ) -> list[AttemptRecord]:
        self.start()
        seams = ray.put(
            WorkerSeams(
                harness.registry, harness.sandbox, harness.runner, harness.verifier, harness.retries
            )
        )
        token = uuid.uuid4().hex  # a worker keeps one attempt maker per run
        capacity = _largest_node()
        payloads: dict[str, ray.ObjectRef[bytes]] = {}
        waiting = deque(_Attempt(i, item, time.time()) for i, item in enumerate(planned))
        flying: dict[ray.ObjectRef[AttemptRecord], _Attempt] = {}
        kept: list[AttemptRecord | None] = [None] * len(planned)

        def finish(attempt: _Attempt, record: AttemptRecord) -> None:
            record = harness.keep(record)
            kept[attempt.index] = record
            on_record(record)

        def lose(attempt: _Attempt, error: AttemptError) -> None:
            attempt.lost.append(error)
            if len(attempt.lost) <= harness.retries:
                waiting.appendleft(attempt)  # tried again before anything new starts
            else:
                finish(attempt, _lost_record(eval_id, attempt))

        try:
            while waiting or flying:
                while waiting and len(flying) < harness.concurrency:
                    attempt = waiting.popleft()
                    try:
                        ref = self._submit(attempt, eval_id, token, seams, payloads, capacity)
                    except StageError as exc:  # its source, found unusable on the driver
                        lose(attempt, AttemptError(exc.stage, exc.cause, str(exc)))
                        continue
                    except _NotSubmitted as exc:
                        lose(attempt, exc.error)
                        continue
                    flying[ref] = attempt
                if not flying:
                    continue
                done, _ = ray.wait(list(flying), num_returns=1)
                for ref in done:
                    attempt = flying.pop(ref)
                    try:
                        record = ray.get(ref)
                    except ray.exceptions.RayError as exc:
                        lose(attempt, _worker_error(exc))
                        continue
                    finish(attempt, _as_planned(record, attempt))
        except BaseException:
            # Interrupted: what is under way is cancelled and left unrecorded (it did not
            # complete), so `--resume` runs it again; none is scored for it.
            harness.stop()
            for ref in flying:
                ray.cancel(ref, force=True)
            raise
        return [record for record in kept if record is not None]

    def _submit(
        self,
        attempt: _Attempt,
        eval_id: str,
        token: str,
        seams: ray.ObjectRef[WorkerSeams],
        payloads: dict[str, ray.ObjectRef[bytes]],
        capacity: tuple[float, float],
    ) -> ray.ObjectRef[AttemptRecord]:
        """Start one try of `attempt` on the cluster. Raises `StageError` for a source
        that cannot be shipped, `_NotSubmitted` for an attempt no node can hold."""
        task = attempt.item.task
        cpus = float(task.limits.cpus or 1)
        memory = int(task.limits.memory_mb * MIB) if task.limits.memory_mb else 0
        if cpus > capacity[0] or memory > capacity[1]:
            message = (
                f"task {task.id} asks for {cpus:g} CPU(s) and {memory // MIB} MiB; the "
                f"largest node has {capacity[0]:g} CPU(s) and {int(capacity[1]) // MIB} MiB"
            )
            raise _NotSubmitted(AttemptError(WORKER_STAGE, "unschedulable", message))
        if task.id not in payloads:  # once per task, shared by its epochs and tries
            payloads[task.id] = ray.put(pack_task(task))
        options: dict[str, Any] = {
            "num_cpus": cpus,
            "name": f"assay {task.id}#{attempt.item.epoch}",
        }
        if memory:
            options["memory"] = memory
        return _make_attempt_remote.options(**options).remote(
            token, seams, eval_id, attempt.item, payloads[task.id], len(attempt.lost) + 1
        )


_SEAMS: dict[str, WorkerSeams] = {}


def make_attempt(
    token: str,
    seams: WorkerSeams,
    eval_id: str,
    item: Planned,
    payload: bytes,
    first_try: int,
) -> AttemptRecord:
    """On a node: the task's files unpacked into a scratch directory, one attempt made
    there (tries `first_try` onwards), the files removed. Returns the record unstored."""
    # The seams of a run are kept by the worker process between its tasks: the sandbox
    # probes its node once, not once an attempt.
    kept = _SEAMS.setdefault(token, seams)
    while len(_SEAMS) > _KEPT_SEAMS:
        _SEAMS.pop(next(iter(_SEAMS)))
    scratch = make_scratch("ray-task")
    try:
        task = unpack_task(item.task, payload, scratch)
        registry = kept.registry
        if item.task.source.repo is not None:
            registry = _with_source(registry, task.source)
        maker = AttemptMaker(
            registry, kept.sandbox, kept.runner, kept.verifier, retries=kept.retries
        )
        record = maker.perform(eval_id, Planned(task, item.epoch), first_try=first_try)
    finally:
        remove_scratch(scratch)
    where = {"name": "ray", "node": ray.get_runtime_context().get_node_id(), "pid": os.getpid()}
    return dataclasses.replace(record, evidence={**record.evidence, "executor": where})


class _ShippedSource:
    """A generator whose tasks' repository came as a bundle: the task reloaded from its
    folder names the repository where it is on the driver, the node has the bundle."""

    def __init__(self, inner: Generator, source: Source) -> None:
        self.inner = inner
        self.source = source
        self.name = inner.name

    def generate(self, spec: TaskSpec) -> TaskSpec:
        return dataclasses.replace(self.inner.generate(spec), source=self.source)


def _with_source(registry: Registry, source: Source) -> Registry:
    return Registry({lang: _ShippedSource(g, source) for lang, g in registry.generators.items()})


# Ray's retries are off: a lost try is counted, with its cause, by the driver.
_make_attempt_remote = ray.remote(max_retries=0)(make_attempt)


def _largest_node() -> tuple[float, float]:
    """The most CPUs and memory (bytes) any one live node has."""
    nodes = [n.get("Resources", {}) for n in ray.nodes() if n.get("Alive")]
    if not nodes:
        return (0.0, 0.0)
    return (
        max(float(n.get("CPU", 0)) for n in nodes),
        max(float(n.get("memory", 0)) for n in nodes),
    )


def _worker_error(exc: ray.exceptions.RayError) -> AttemptError:
    cause = "worker_lost" if isinstance(exc, LOST) else "worker_failed"
    first = (str(exc).strip().splitlines() or [""])[0]
    return AttemptError(WORKER_STAGE, cause, f"{type(exc).__name__}: {first}"[:2000])


def _as_planned(record: AttemptRecord, attempt: _Attempt) -> AttemptRecord:
    """The record as the driver keeps it: the task as it was planned (its folder here, not
    the node's scratch copy), the tries lost with their workers counted before its own."""
    evidence = {**record.evidence, "task": attempt.item.task.to_dict()}
    if not attempt.lost:
        return dataclasses.replace(record, evidence=evidence)
    earlier = [e.to_dict() for e in attempt.lost] + list(evidence.get("earlier_tries", []))
    return dataclasses.replace(
        record,
        tries=record.tries + len(attempt.lost),
        started_at=attempt.started,
        evidence={**evidence, "earlier_tries": earlier},
    )


def _lost_record(eval_id: str, attempt: _Attempt) -> AttemptRecord:
    """An attempt whose every try was lost: an error, never a score."""
    last = attempt.lost[-1]
    evidence: dict[str, Any] = dict.fromkeys(
        ("generator", "run_id", "run_dir", "base_commit", "agent", "verification", "score")
    )
    evidence |= {
        "error": last.to_dict(),
        "task": attempt.item.task.to_dict(),
        "earlier_tries": [e.to_dict() for e in attempt.lost[:-1]],
    }
    return AttemptRecord(
        eval_id=eval_id,
        task_id=attempt.item.task.id,
        epoch=attempt.item.epoch,
        outcome=ERROR,
        started_at=attempt.started,
        finished_at=time.time(),
        tries=len(attempt.lost),
        error=last,
        evidence=evidence,
    )

"""The fail-closed verifier runner: the only code path that calls `Verifier.verify`.

A verifier returns `Evidence` (its claim). `run_verifiers` turns each claim into
an `Outcome`, and turns every way a verifier can misbehave into a failing
outcome that records which way it was:

    raised an exception (SystemExit and KeyboardInterrupt included)  -> verifier_error
    its process died (segfault, os._exit)                            -> verifier_crash
    still running at the deadline (killed, with its process tree)     -> verifier_timeout
    returned something that is not Evidence                          -> verifier_bad_return
    returned, but left processes running                             -> verifier_leaked_process

`Outcome` cannot be built outside this module (its constructor demands a private
token), and the fault constructor only takes failing causes, so no code path
anywhere can turn an error into a pass. Verifiers of one call run as a
fan-out/join: one misbehaving verifier never cancels or changes its siblings.
"""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from assay._verifier_workers import Reply, ReplyKind, call_verify, describe_exception, run_in_worker
from assay.evidence import Check, Evidence
from assay.signal_waits import wait_for
from assay.verdict import VERIFIER_FAULTS, Cause, Kind


class Isolation(enum.StrEnum):
    """Where a verifier's code runs."""

    WORKER = "worker"
    """A separate process (the default): a crash is contained and a hang is killed."""
    IN_PROCESS = "in_process"
    """A thread of this process: cheap, for trusted verifiers that only start
    subprocesses through `run_process`. A hang is abandoned, not killed."""


@dataclass(frozen=True, slots=True)
class VerifierContext:
    """What a verifier is given to work on. Must be picklable (workers receive it)."""

    workdir: str
    timeout_s: float | None = None
    """The deadline the runner enforces, for verifiers that pass it on to processes."""
    env: Mapping[str, str] = field(default_factory=dict)
    data: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class Verifier(Protocol):
    """Anything with an `id` and a `verify(ctx)` returning `Evidence` (or awaitable of it).

    Optional attributes: `kind` (a `Kind`, for the evidence of a fault) and
    `isolation` (an `Isolation`, overriding the runner's default).
    """

    id: str

    def verify(self, ctx: VerifierContext) -> Any: ...


_RUNNER_TOKEN = object()

#: How each way a worker call can go wrong maps to the fault it records.
_REPLY_FAULT: dict[ReplyKind, Cause] = {
    ReplyKind.RAISED: Cause.VERIFIER_ERROR,
    ReplyKind.DIED: Cause.VERIFIER_CRASH,
    ReplyKind.TIMED_OUT: Cause.VERIFIER_TIMEOUT,
    ReplyKind.LEAKED: Cause.VERIFIER_LEAKED_PROCESS,
}


class Outcome:
    """A verifier's result as the runner established it. Built only by this module."""

    __slots__ = ("detail", "duration_s", "evidence", "fault", "isolation", "verifier_id")
    verifier_id: str
    evidence: Evidence
    fault: Cause | None
    detail: str
    duration_s: float
    isolation: Isolation

    def __init__(
        self,
        verifier_id: str,
        evidence: Evidence,
        fault: Cause | None,
        detail: str,
        duration_s: float,
        isolation: Isolation,
        *,
        _token: object = None,
    ) -> None:
        if _token is not _RUNNER_TOKEN:
            raise TypeError("Outcome is built only by assay.runner.run_verifiers")
        for name, value in (
            ("verifier_id", verifier_id),
            ("evidence", evidence),
            ("fault", fault),
            ("detail", detail),
            ("duration_s", duration_s),
            ("isolation", isolation),
        ):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        # Immutable: a fault recorded by the runner cannot be erased afterwards.
        raise AttributeError(f"Outcome is immutable; cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Outcome is immutable; cannot delete {name!r}")

    @property
    def passed(self) -> bool:
        return self.fault is None and self.evidence.verdict.passed

    def __repr__(self) -> str:
        state = self.fault.value if self.fault else self.evidence.verdict.value
        return f"Outcome({self.verifier_id!r}, {state})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "verifier": self.verifier_id,
            "passed": self.passed,
            "fault": self.fault.value if self.fault else None,
            "detail": self.detail,
            "duration_s": round(self.duration_s, 6),
            "isolation": self.isolation.value,
            "evidence": self.evidence.to_dict(),
        }


def _accepted(verifier: Any, claim: object, started: float, isolation: Isolation) -> Outcome:
    """The success path: the only place an Outcome can carry a passing verdict."""
    vid = _verifier_id(verifier)
    if not isinstance(claim, Evidence):
        return _faulted(
            verifier,
            Cause.VERIFIER_BAD_RETURN,
            f"returned {type(claim).__name__}, not Evidence: {_short_repr(claim)}",
            started,
            isolation,
        )
    return Outcome(
        vid, claim, None, "", time.monotonic() - started, isolation, _token=_RUNNER_TOKEN
    )


def _faulted(
    verifier: Any, fault: Cause, detail: str, started: float, isolation: Isolation
) -> Outcome:
    if fault not in VERIFIER_FAULTS:
        raise ValueError(f"{fault} is not a verifier fault")
    vid = _verifier_id(verifier)
    kind = getattr(verifier, "kind", Kind.TEST)
    check = Check(name=vid, kind=kind if isinstance(kind, Kind) else Kind.TEST, argv=())
    evidence = Evidence(
        check=check,
        verdict=fault.verdict,
        cause=fault,
        reason=detail,
        note=f"verifier {vid} misbehaved ({fault.value}): {detail.splitlines()[0] if detail else ''}",
    )
    return Outcome(
        vid, evidence, fault, detail, time.monotonic() - started, isolation, _token=_RUNNER_TOKEN
    )


def _verifier_id(verifier: Any) -> str:
    try:
        vid = verifier.id
    except Exception:
        return f"<{type(verifier).__name__}>"
    return vid if isinstance(vid, str) else repr(vid)


def _short_repr(value: object, limit: int = 200) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"<unrepresentable {type(value).__name__}>"
    return text if len(text) <= limit else text[:limit] + "..."


def run_verifiers(
    verifiers: Sequence[Any],
    ctx: VerifierContext,
    *,
    deadline: float | None = None,
    isolation: Isolation = Isolation.WORKER,
) -> list[Outcome]:
    """Run every verifier against `ctx`, concurrently, and return one Outcome each, in order.

    `deadline` is seconds from now for every verifier (None: no deadline).
    `isolation` is the default for verifiers that do not set their own;
    WORKER is the default because only a process boundary contains a segfault,
    an `os._exit` or a hang in C code. Never raises for anything a verifier does.
    """
    if deadline is not None and not deadline >= 0:
        raise ValueError(f"deadline must be >= 0 seconds or None, got {deadline!r}")
    expires = None if deadline is None else time.monotonic() + deadline
    slots: list[_Slot] = []
    for verifier in verifiers:
        slot = _Slot()
        mode = _isolation_of(verifier, isolation)
        thread = threading.Thread(
            target=_run_one,
            args=(verifier, ctx, expires, mode, slot),
            name=f"assay-verifier-{_verifier_id(verifier)}",
            daemon=True,  # an abandoned in-process hang must not keep assay alive
        )
        thread.start()
        slots.append(slot)
    outcomes = []
    for verifier, slot in zip(verifiers, slots, strict=True):
        outcomes.append(_join(verifier, slot, expires, isolation))
    return outcomes


def _isolation_of(verifier: Any, default: Isolation) -> Isolation:
    try:
        chosen = getattr(verifier, "isolation", default)
    except Exception:
        return default
    return chosen if isinstance(chosen, Isolation) else default


def _run_one(
    verifier: Any, ctx: VerifierContext, expires: float | None, mode: Isolation, slot: _Slot
) -> None:
    started = time.monotonic()
    try:
        if mode is Isolation.WORKER:
            outcome = _from_reply(verifier, run_in_worker(verifier, ctx, expires), started)
        else:
            outcome = _run_in_thread(verifier, ctx, started)
    except BaseException as exc:  # the runner itself must not let anything escape
        outcome = _faulted(verifier, Cause.VERIFIER_ERROR, describe_exception(exc), started, mode)
    slot.set(outcome)


def _run_in_thread(verifier: Any, ctx: VerifierContext, started: float) -> Outcome:
    try:
        claim = call_verify(verifier, ctx)
    except BaseException as exc:  # SystemExit and KeyboardInterrupt are verifier errors too
        return _faulted(
            verifier, Cause.VERIFIER_ERROR, describe_exception(exc), started, Isolation.IN_PROCESS
        )
    return _accepted(verifier, claim, started, Isolation.IN_PROCESS)


def _from_reply(verifier: Any, reply: Reply, started: float) -> Outcome:
    if reply.kind is ReplyKind.RETURNED:
        return _accepted(verifier, reply.value, started, Isolation.WORKER)
    return _faulted(verifier, _REPLY_FAULT[reply.kind], reply.detail, started, Isolation.WORKER)


class _Slot:
    """One verifier's outcome, handed from its thread to the joining caller."""

    __slots__ = ("_done", "_outcome")

    def __init__(self) -> None:
        self._done = threading.Event()
        self._outcome: Outcome | None = None

    def set(self, outcome: Outcome) -> None:
        self._outcome = outcome
        self._done.set()

    def result(self, timeout: float | None) -> Outcome:
        """The outcome; raises TimeoutError when none arrived within `timeout` seconds."""
        # In slices: a signal another thread took runs its handler only once this one wakes.
        if not wait_for(self._done, timeout) or self._outcome is None:
            raise TimeoutError
        return self._outcome


def _join(verifier: Any, slot: _Slot, expires: float | None, default: Isolation) -> Outcome:
    mode = _isolation_of(verifier, default)
    timeout = None if expires is None else max(expires - time.monotonic(), 0)
    if timeout is not None and mode is Isolation.WORKER:
        # A worker enforces the deadline itself, by killing: give the kill time to finish.
        timeout += _WORKER_KILL_SLACK_SECONDS
    started = time.monotonic()
    try:
        return slot.result(timeout=timeout)
    except TimeoutError:
        return _faulted(
            verifier,
            Cause.VERIFIER_TIMEOUT,
            "still running at the deadline; abandoned (in-process verifiers cannot be killed)",
            started,
            mode,
        )


#: How long past the deadline to wait for a worker's own kill sequence to report.
_WORKER_KILL_SLACK_SECONDS = 10.0

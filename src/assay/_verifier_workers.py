"""Worker processes for verifiers: contain crashes, kill hangs, reuse only the healthy.

Each worker is a process of its own session (so its whole tree can be killed)
that loops: receive (verifier, context, marker), call it, send back what came
of it. The parent never trusts a worker's word for more than "this is what
verify returned": the runner validates the value, and the parent itself
detects deaths, hangs and leftover processes.
"""

from __future__ import annotations

import enum
import os
import signal
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any

from assay import reaper

#: Idle workers kept for reuse.
MAX_IDLE_WORKERS = 4


class ReplyKind(enum.Enum):
    """How one call to a worker ended."""

    RETURNED = "returned"
    RAISED = "raised"
    DIED = "died"
    TIMED_OUT = "timed_out"
    LEAKED = "leaked"


@dataclass(frozen=True, slots=True)
class Reply:
    kind: ReplyKind
    value: object = None
    detail: str = ""


def call_verify(verifier: Any, ctx: Any) -> object:
    """Call `verify` and settle an awaitable result (both isolation modes use this)."""
    result = verifier.verify(ctx)
    if hasattr(result, "__await__"):
        import asyncio  # only async verifiers pay for importing it

        result = asyncio.run(_await(result))
    return result


async def _await(awaitable: Any) -> object:
    return await awaitable


def describe_exception(exc: BaseException) -> str:
    lines = traceback.format_exception_only(type(exc), exc)
    tb = "".join(traceback.format_tb(exc.__traceback__)[-3:])
    return "".join(lines).strip() + ("\n" + tb if tb else "")


def _worker_main(conn: Any) -> None:
    os.setsid()  # its own group: the parent kills the worker's whole tree at once
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        except BaseException as exc:  # an unpicklable or unimportable verifier
            conn.send(("raised", f"could not receive the verifier: {describe_exception(exc)}"))
            continue
        verifier, ctx, marker = job
        os.environ[reaper.MARKER_VAR] = marker  # inherited by anything the verifier starts
        try:
            message: tuple[str, object] = ("returned", call_verify(verifier, ctx))
        except BaseException as exc:  # SystemExit and KeyboardInterrupt included
            message = ("raised", describe_exception(exc))
        try:
            conn.send(message)
        except BaseException as exc:
            conn.send(("raised", f"its result could not be sent back: {exc!r}"))


class _Worker:
    def __init__(self) -> None:
        context = _mp_context()
        self.conn, child_conn = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child_conn,), daemon=True)
        self.process.start()
        child_conn.close()

    @property
    def pid(self) -> int:
        assert self.process.pid is not None
        return self.process.pid

    def destroy(self, marker: str | None = None) -> None:
        """TERM the worker's tree, allow the grace period, then KILL: nothing survives."""
        from assay.process import TERM_GRACE_SECONDS

        marker = marker or "-"
        reaper.signal_run(self.pid, marker, signal.SIGTERM)
        self.process.join(TERM_GRACE_SECONDS)
        reaper.kill_run(self.pid, marker)
        self.process.join(1.0)
        self.conn.close()


_pool_lock = threading.Lock()
_idle: list[_Worker] = []
_context: Any = None


def _mp_context() -> Any:
    global _context
    if _context is None:
        import multiprocessing

        # forkserver: fast starts, and never a fork of this (threaded) process.
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload(["assay.runner"])
    return _context


def _acquire() -> _Worker:
    with _pool_lock:
        while _idle:
            worker = _idle.pop()
            if worker.process.is_alive():
                return worker
            worker.conn.close()
    return _Worker()


def _release(worker: _Worker) -> None:
    with _pool_lock:
        if len(_idle) < MAX_IDLE_WORKERS:
            _idle.append(worker)
            return
    worker.destroy()


def shutdown_workers() -> None:
    """Stop every idle worker (at exit, or by tests that count processes)."""
    with _pool_lock:
        workers, _idle[:] = list(_idle), []
    for worker in workers:
        worker.destroy()


def run_in_worker(verifier: Any, ctx: Any, expires: float | None) -> Reply:
    """Run one verifier in a worker process and report how it went."""
    reaper.ensure_subreaper()  # orphans of a killed worker come back to us to be reaped
    marker = os.urandom(16).hex()
    worker = _acquire()
    try:
        worker.conn.send((verifier, ctx, marker))
    except BaseException as exc:  # pickling failed: the verifier never ran
        _release(worker)
        return Reply(ReplyKind.RAISED, detail=f"could not be sent to a worker process: {exc!r}")
    from multiprocessing.connection import wait

    timeout = None if expires is None else max(expires - time.monotonic(), 0.0)
    ready = wait([worker.conn, worker.process.sentinel], timeout)
    if not ready:
        worker.destroy(marker)
        return Reply(
            ReplyKind.TIMED_OUT,
            detail="still running at the deadline; killed with its process tree",
        )
    if worker.conn in ready:
        try:
            kind, value = worker.conn.recv()
        except (EOFError, OSError):
            return _died(worker, marker)
        except BaseException as exc:  # the value would not unpickle: garbage
            worker.destroy(marker)
            return Reply(ReplyKind.RAISED, detail=f"its result could not be read: {exc!r}")
        leftovers = [pid for pid in reaper.marked_pids(marker) if pid != worker.pid]
        if leftovers:
            worker.destroy(marker)
            return Reply(
                ReplyKind.LEAKED,
                detail=f"returned but left {len(leftovers)} process(es) running (pids {leftovers}); killed",
            )
        _release(worker)
        if kind == "returned":
            return Reply(ReplyKind.RETURNED, value=value)
        return Reply(ReplyKind.RAISED, detail=str(value))
    return _died(worker, marker)


def _died(worker: _Worker, marker: str) -> Reply:
    worker.process.join(1.0)
    code = worker.process.exitcode
    worker.destroy(marker)
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return Reply(ReplyKind.DIED, detail=f"its process was killed by {name}")
    return Reply(
        ReplyKind.DIED, detail=f"its process exited with status {code} without returning a result"
    )

"""Waits on the main thread that Ctrl-C and SIGTERM can still cut short.

The kernel gives a signal sent to the process to any thread that does not block it: often
the main thread, but sometimes a worker's (one probing a tool, copying files, running an
attempt). Python then only sets a flag, and runs the handler when the main thread next
runs bytecode; a main thread asleep in a wait without a timeout never does, and `assay`
would sit out a probe, a copy or a whole attempt before answering. Blocking the signals in
the workers instead is not an option: the processes they start would inherit the mask and
ignore the TERM their deadline sends. So every wait here sleeps at most `POLL_S` at a time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import Future

__all__ = ["POLL_S", "result_of", "results_of", "side_by_side", "wait_for"]

#: The longest a signal taken by another thread waits for its handler to run.
POLL_S = 0.1

T = TypeVar("T")


def wait_for(event: threading.Event, timeout: float | None = None) -> bool:
    """`event.wait(timeout)` (None: no limit), woken every `POLL_S` so a pending handler runs."""
    expires = None if timeout is None else time.monotonic() + timeout
    while True:
        left = POLL_S if expires is None else min(POLL_S, expires - time.monotonic())
        if left <= 0:
            return event.is_set()
        if event.wait(left):
            return True


def result_of(future: Future[T]) -> T:
    """`future.result()`, woken every `POLL_S`. A `TimeoutError` the call itself raised is
    re-raised as it is, never taken for the wait's own."""
    from concurrent.futures import wait  # loaded with the pool that made `future`

    while not future.done():
        wait((future,), timeout=POLL_S)
    return future.result()


def results_of(futures: Iterable[Future[T]]) -> list[T]:
    """Each future's result in order (`Executor.map`'s), the first error raised as it is."""
    return [result_of(future) for future in futures]


def side_by_side(calls: Sequence[Callable[[], T]], name: str) -> list[T]:
    """Each call's result in order, the calls run at once, each in a thread of its own
    named `name` (a pool would load `concurrent.futures` and `logging`, ~4 ms a verify);
    the first error raised as it is. A single call runs in this thread."""
    if len(calls) == 1:
        return [calls[0]()]
    results: list[T | None] = [None] * len(calls)
    errors: list[BaseException | None] = [None] * len(calls)
    ended = [threading.Event() for _ in calls]

    def run(index: int) -> None:
        try:
            results[index] = calls[index]()
        except BaseException as exc:  # handed to the waiting thread, which raises it
            errors[index] = exc
        finally:
            ended[index].set()

    for index in range(len(calls)):
        threading.Thread(target=run, args=(index,), name=f"{name}-{index}", daemon=True).start()
    for index, event in enumerate(ended):
        wait_for(event)
        if (error := errors[index]) is not None:
            raise error
    return results  # type: ignore[return-value]  # every slot was filled: no error came

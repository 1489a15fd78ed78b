"""One process at a time runs an evaluation's attempts.

Two `assay eval --resume ID` started together would each see the same attempts missing
and run them twice, breaking "every attempt exactly once". Whoever runs an evaluation
(its first run or a resume) holds an exclusive `flock` on a lock file beside the store,
named by the evaluation: the kernel drops it when the holder exits however it exits
(SIGKILL included), so a crashed run never leaves an evaluation locked, and a second
runner is refused with the holder's pid instead of waiting or duplicating work.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from assay.errors import AssayError


class EvalBusy(AssayError, RuntimeError):
    """Another process is running this evaluation's attempts."""


def lock_path(store: Path, eval_id: str) -> Path:
    """The lock file of evaluation `eval_id` of the store at `store`."""
    return store.with_name(f"{store.name}.{eval_id}.lock")


@contextlib.contextmanager
def holding(store: Path, eval_id: str) -> Iterator[None]:
    """Run the body as the only runner of `eval_id`; raise `EvalBusy` if another holds it."""
    path = lock_path(store, eval_id)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            raise EvalBusy(
                f"evaluation {eval_id} is being run by another process (pid {holder}); "
                f"wait for it to finish, or stop it and resume again"
            ) from None
        # The holder's pid, for the message above; the lock itself is what counts.
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock; the file stays (removing it would race a taker)

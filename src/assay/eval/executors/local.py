"""The local executor: attempts in this process's threads, `concurrency` at a time."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait

from assay.eval.harness import Harness, Planned
from assay.eval.record import AttemptRecord
from assay.process import kill_active_runs
from assay.sandbox.base import SandboxError
from assay.signal_waits import results_of

#: While an interrupted evaluation waits for its attempts to end, how often it kills
#: what they still run.
KILL_AGAIN_S = 0.5


class LocalExecutor:
    name = "local"

    def run(
        self,
        harness: Harness,
        eval_id: str,
        planned: Sequence[Planned],
        on_record: Callable[[AttemptRecord], None],
    ) -> list[AttemptRecord]:
        def one(item: Planned) -> AttemptRecord:
            record = harness.attempt(eval_id, item)
            on_record(record)
            return record

        # Probe once, before attempts run side by side (a failed probe is kept, and each
        # attempt then fails to provision with its message).
        with contextlib.suppress(SandboxError):
            harness.sandbox.ensure_available()
        if harness.concurrency == 1:
            return [one(item) for item in planned]
        pool = ThreadPoolExecutor(max_workers=harness.concurrency)
        futures = [pool.submit(one, item) for item in planned]
        try:
            return results_of(futures)
        except BaseException:
            # Interrupted: the attempts under way are stopped and left unrecorded (they
            # did not complete), so `--resume` runs them again; none is scored for it.
            harness.stop()
            for future in futures:
                future.cancel()
            # Killed again until each attempt under way has ended: a process its agent
            # forked as the first kill swept would hold the run's output open, and its
            # attempt would wait on it to the agent's wall time.
            while not all(future.done() for future in futures):
                kill_active_runs()
                wait(futures, timeout=KILL_AGAIN_S)
            raise
        finally:
            pool.shutdown(wait=True)

    def close(self) -> None:
        """Nothing to let go of: the threads end with each run."""

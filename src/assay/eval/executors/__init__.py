"""Where a harness's attempts run: the Executor seam.

- `local` (`LocalExecutor`): this process's threads, `concurrency` at a time;
- `ray` (`RayExecutor`, the `ray` extra): each attempt a Ray task on whichever node of a
  cluster has room for it.

Whatever runs an attempt, the harness alone writes the store (`Harness.keep`), as each
attempt completes; an attempt that did not complete is never recorded, so `--resume`
runs it again. Ray is imported only when the Ray executor runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from assay.eval.harness import Harness, Planned
    from assay.eval.record import AttemptRecord

#: The executors `assay eval --executor` knows.
EXECUTORS = ("local", "ray")


class Executor(Protocol):
    """Runs `planned` for `harness`: each attempt, once complete, goes through
    `harness.keep` (the store) and then to `on_record`. Returns the kept records in plan
    order. On an interrupt it stops what is under way, records none of it, and re-raises."""

    name: str

    def run(
        self,
        harness: Harness,
        eval_id: str,
        planned: Sequence[Planned],
        on_record: Callable[[AttemptRecord], None],
    ) -> list[AttemptRecord]: ...

    def close(self) -> None:
        """Let go of what it holds (a cluster connection it made)."""

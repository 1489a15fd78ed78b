"""An interrupted evaluation waits for its attempts to end, and kills what they run until
they have: an attempt that had not yet seen the interrupt may start its agent after the
first kill, and would otherwise run to the agent's wall time while the evaluation waits
on it (a fresh-clone CI run saw `assay eval --concurrency 2` outlive its SIGTERM)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from assay.eval.generators import default_registry
from assay.eval.harness import Harness, Planned
from assay.eval.runners import AgentResult
from assay.eval.store import Store
from assay.eval.task import TaskSpec, load_task
from assay.eval.verify_stage import AssayVerifier
from assay.process import run_process
from assay.sandbox import LocalSandbox, Sandbox, Workspace
from tests.eval.tasks import make_repo, write_task


class LateAgent:
    """Task 1's agent is interrupted (as Ctrl-C would, in its thread); task 2's starts a
    real process only once the evaluation is stopping, as one that passed its stage's
    check just before the interrupt does."""

    name = "late"

    def __init__(self) -> None:
        self.harness: Harness | None = None
        self.late: AgentResult | None = None
        self.took_s = 0.0

    def run(self, task: TaskSpec, sandbox: Sandbox, workspace: Workspace) -> AgentResult:
        assert self.harness is not None
        if task.id.endswith("-1"):
            time.sleep(0.2)  # the other attempt is under way
            raise KeyboardInterrupt
        while not self.harness.stopping:
            time.sleep(0.01)
        started = time.monotonic()
        done = run_process(["sleep", "300"], timeout=600)
        self.took_s = time.monotonic() - started
        self.late = AgentResult(runner=self.name, exit_code=done.exit_code, note="")
        return self.late


def test_an_agent_started_after_the_interrupt_is_killed_and_the_run_ends(tmp_path: Path) -> None:
    repo, bases = make_repo(tmp_path)
    specs = [
        load_task(write_task(tmp_path / f"task-{n}", n, repo=repo, commit=bases[n])) for n in (1, 3)
    ]
    store = Store(tmp_path / "s.sqlite")
    eval_id = store.create_eval("late", {"epochs": 1}, [s.to_dict() for s in specs])
    agent = LateAgent()
    harness = Harness(
        default_registry(), LocalSandbox(), agent, AssayVerifier("local"), store, concurrency=2
    )
    agent.harness = harness
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        harness.run(eval_id, [Planned(spec, 1) for spec in specs])
    assert time.monotonic() - started < 30
    assert agent.late is not None, "the late agent never started"
    assert agent.took_s < 5, agent.took_s  # killed, not left to its 300 s
    assert store.attempts(eval_id) == []  # stopped part-way: nothing recorded
    assert os.path.exists(tmp_path / "s.sqlite")

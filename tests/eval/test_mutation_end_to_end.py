"""End to end, for real: four mutation tasks generated from a small Python repository and
validated, then an agent that fixes exactly the odd-numbered ones (it applies their
`solution.patch`) run on all four through bubblewrap: the report says 50%, no errors.

Four, not more: each task's validation is four attempts of its own (the oracle three
times, nop once), and the suite's time is CI's."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from assay.eval import run_eval
from assay.eval.mutation.generate import generate_tasks
from assay.eval.store import Store
from tests.eval.mutation_repos import make_shop
from tests.eval.tasks import write_agent

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

#: Tasks generated: two the agent fixes, two it gives up on.
TASKS = 4

#: The agent: the patches it knows (task id -> patch), applied with `git apply` in its
#: workspace for odd-numbered tasks; it gives up on the others.
AGENT = textwrap.dedent(
    """
    import os, subprocess, sys
    PATCHES = {patches!r}
    sys.stdin.read()
    task = os.environ["ASSAY_TASK_ID"]
    if int(task.rsplit("-", 1)[1]) % 2 == 1:
        subprocess.run(["git", "apply", "-"], input=PATCHES[task], text=True, check=True)
        sys.exit(0)
    sys.exit(1)
    """
)


def test_generated_tasks_and_an_agent_that_fixes_the_odd_ones_scores_half(
    tmp_path: Path,
) -> None:
    repo = make_shop(tmp_path)
    store = Store(tmp_path / "store.sqlite")
    try:
        report = generate_tasks(
            repo, language="python", count=TASKS, out=tmp_path / "tasks", store=store, concurrency=2
        )
        assert [t.valid for t in report.tasks] == [True] * TASKS, report.to_dict()
        patches = {t.id: (t.folder / "solution.patch").read_text() for t in report.tasks}
        agent = write_agent(tmp_path, "odd", AGENT.format(patches=patches))

        result = run_eval([tmp_path / "tasks"], f"python3 {agent}", store=store, concurrency=2)
    finally:
        store.close()

    summary = result.summary
    assert summary["errors"] == 0
    assert summary["scored"] == TASKS
    assert summary["pass_rate"] == 0.5
    scores = {row["task_id"]: row["score"] for row in summary["attempts"]}
    assert scores == {f"shop-{n}": (1.0 if n % 2 else 0.0) for n in range(1, TASKS + 1)}

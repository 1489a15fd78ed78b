"""A workspace that cannot be removed (a real mount inside it) makes an otherwise good
attempt an error of the cleanup stage, with its verification and score still recorded."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from assay.eval.generators import default_registry
from assay.eval.harness import Harness, Planned
from assay.eval.runners import AgentResult, OracleRunner
from assay.eval.store import Store
from assay.eval.task import TaskSpec, load_task
from assay.eval.verify_stage import AssayVerifier
from assay.sandbox import BwrapSandbox, Sandbox, Workspace
from tests.eval.tasks import make_repo, write_task

pytestmark = [
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap"),
    pytest.mark.skipif(os.geteuid() != 0, reason="mounts need root"),
]


class OracleThatLeavesAMount:
    """The oracle, then a read-only mount of an empty directory inside the workspace: the
    workspace's removal then fails (the mount point is busy)."""

    name = "oracle"

    def __init__(self, empty: Path) -> None:
        self.empty = empty
        self.mounts: list[Path] = []

    def run(self, task: TaskSpec, sandbox: Sandbox, workspace: Workspace) -> AgentResult:
        result = OracleRunner().run(task, sandbox, workspace)
        point = workspace.path / "stuck"
        point.mkdir()
        subprocess.run(["mount", "--bind", "-o", "ro", str(self.empty), str(point)], check=True)
        self.mounts.append(point)
        return result


def test_a_cleanup_failure_errors_a_good_attempt_and_keeps_its_result(tmp_path: Path) -> None:
    repo, bases = make_repo(tmp_path)
    spec = load_task(write_task(tmp_path / "task-1", 1, repo=repo, commit=bases[1]))
    (tmp_path / "empty").mkdir()
    runner = OracleThatLeavesAMount(tmp_path / "empty")
    store = Store(tmp_path / "s.sqlite")
    eval_id = store.create_eval("oracle", {"epochs": 1}, [spec.to_dict()])
    harness = Harness(default_registry(), BwrapSandbox(), runner, AssayVerifier(), store)
    try:
        (record,) = harness.run(eval_id, [Planned(spec, 1)])
    finally:
        for point in runner.mounts:
            subprocess.run(["umount", str(point)], check=False)
            shutil.rmtree(point.parent, ignore_errors=True)

    assert runner.mounts, "the runner never ran"
    assert record.outcome == "error"
    assert record.error is not None
    assert (record.error.stage, record.error.cause) == ("cleanup", "cleanup_failed")
    assert record.score is None  # never scored...
    assert record.status == "VERIFIED"  # ...but what it found is all there
    assert record.evidence["score"]["value"] == 1.0
    assert record.evidence["verification"]["status"] == "VERIFIED"
    (stored,) = store.attempts(eval_id)
    assert stored["outcome"] == "error" and stored["error_stage"] == "cleanup"
    assert stored["evidence"]["verification"]["status"] == "VERIFIED"

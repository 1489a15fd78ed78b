"""The runners, for real in bubblewrap: an agent that hangs is killed at its wall time with
every process it started; the instruction reaches it on stdin or as a file; telemetry is
read field by field; a recorded patch is applied per task id."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.eval.runners import (
    AgentSpecError,
    CommandRunner,
    NopRunner,
    OracleRunner,
    PatchRunner,
    runner_for,
)
from assay.eval.task import TaskSpec, load_task
from assay.sandbox import BwrapOptions, BwrapSandbox, Workspace
from tests.eval.tasks import HANGER, make_repo, write_agent, write_task

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> TaskSpec:
    root = tmp_path_factory.mktemp("runner-task")
    repo, bases = make_repo(root)
    folder = write_task(
        root / "task-1", 1, repo=repo, commit=bases[1], extra="\n[limits]\nwall_s = 2\n"
    )
    return load_task(folder)


def _sandbox_for(runner: object) -> BwrapSandbox:
    shown = runner.host_paths() if isinstance(runner, CommandRunner) else ()
    return BwrapSandbox(BwrapOptions(toolchain_paths=shown))


@pytest.fixture
def provisioned(task: TaskSpec) -> Iterator[tuple[BwrapSandbox, Workspace]]:
    sandbox = BwrapSandbox()
    assert task.source.repo is not None
    workspace = sandbox.provision(task.source.repo, commit=task.source.commit)
    try:
        yield sandbox, workspace
    finally:
        sandbox.cleanup(workspace)


def _processes_naming(marker: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(pid))
    return found


def test_a_hanging_agent_is_killed_at_its_wall_time_with_its_whole_tree(
    task: TaskSpec, tmp_path: Path
) -> None:
    marker = f"assay-hang-{os.getpid()}-{time.monotonic_ns()}"
    agent = write_agent(tmp_path, "hang", HANGER)
    runner = CommandRunner(f"python3 {agent} {marker}")
    sandbox = _sandbox_for(runner)
    assert task.source.repo is not None
    workspace = sandbox.provision(task.source.repo, commit=task.source.commit)
    try:
        started = time.monotonic()
        result = runner.run(task, sandbox, workspace)
        elapsed = time.monotonic() - started
    finally:
        sandbox.cleanup(workspace)

    assert result.timed_out
    assert result.exit_code is None
    assert "wall time" in result.note
    assert 2 <= elapsed < 20
    # The child that ignores SIGTERM is gone too: nothing naming the marker is left.
    assert _processes_naming(marker) == []


def test_the_instruction_is_given_on_stdin_or_as_a_file_and_telemetry_is_checked(
    task: TaskSpec, tmp_path: Path
) -> None:
    script = (
        "import json, os, sys\n"
        "text = open(sys.argv[1]).read() if len(sys.argv) > 1 else sys.stdin.read()\n"
        "open('got.txt', 'w').write(text)\n"
        "json.dump({'turns': 2, 'tokens_in': 'many', 'cost_usd': -1, 'model': 'm'},"
        " open(os.environ['ASSAY_TELEMETRY'], 'w'))\n"
        "sys.exit(7)\n"
    )
    agent = write_agent(tmp_path, "echo", script)
    for command in (f"python3 {agent}", f"python3 {agent} {{instruction_file}}"):
        runner = CommandRunner(command)
        sandbox = _sandbox_for(runner)
        assert task.source.repo is not None
        workspace = sandbox.provision(task.source.repo, commit=task.source.commit)
        try:
            result = runner.run(task, sandbox, workspace)
            got = sandbox.read_file(workspace, "got.txt")
        finally:
            sandbox.cleanup(workspace)
        assert got.decode() == task.instruction
        assert result.exit_code == 7  # recorded as it is
        assert result.telemetry == {"turns": 2, "model": "m"}
        assert "tokens_in" in result.note and "cost_usd" in result.note


def test_an_agent_that_cannot_start_is_an_infrastructure_error(
    provisioned: tuple[BwrapSandbox, Workspace], task: TaskSpec
) -> None:
    from assay.eval.failures import StageError

    sandbox, workspace = provisioned
    with pytest.raises(StageError) as caught:
        CommandRunner("/no/such/agent --go").run(task, sandbox, workspace)
    assert caught.value.stage == "run"


def test_oracle_and_recorded_patches_are_applied_in_the_sandbox(
    provisioned: tuple[BwrapSandbox, Workspace], task: TaskSpec, tmp_path: Path
) -> None:
    sandbox, workspace = provisioned
    assert task.solution is not None
    result = OracleRunner().run(task, sandbox, workspace)
    assert result.exit_code == 0, result.stderr
    assert b"return a + b" in sandbox.read_file(workspace, "calc.py")

    predictions = tmp_path / "preds.jsonl"
    predictions.write_text(
        json.dumps({"instance_id": task.id, "model_patch": task.solution.read_text()}) + "\n"
    )
    again = PatchRunner(predictions).run(task, sandbox, workspace)
    # Already applied: taken as applied, as SWE-bench's harness takes it (its last try is
    # `git apply --check --reverse`), and nothing is changed twice.
    assert again.exit_code == 0, again.stderr
    assert sandbox.read_file(workspace, "calc.py").count(b"return a + b") == 1
    predictions.write_text(
        json.dumps(
            {
                "instance_id": task.id,
                "model_patch": "--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-absent\n+present\n",
            }
        )
        + "\n"
    )
    refused = PatchRunner(predictions).run(task, sandbox, workspace)
    assert refused.exit_code != 0  # applies by no method: the patch's own failure, recorded
    missing = PatchRunner(predictions)
    missing.patches.clear()
    assert "no patch" in missing.run(task, sandbox, workspace).note
    assert NopRunner().run(task, sandbox, workspace).exit_code == 0


def test_agent_values_that_name_no_runner_are_clear_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "a", "patch": "x"}\nnot json\n')
    with pytest.raises(AgentSpecError, match=r"bad.jsonl:2: not JSON"):
        runner_for(f"patch:{bad}")
    with pytest.raises(AgentSpecError, match="could not be read"):
        runner_for(f"patch:{tmp_path / 'missing.jsonl'}")
    with pytest.raises(AgentSpecError, match="empty"):
        runner_for("   ")
    with pytest.raises(AgentSpecError):
        runner_for("agent 'unclosed")

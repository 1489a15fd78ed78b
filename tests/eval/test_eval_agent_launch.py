"""Launching an agent, for real in bubblewrap: an agent that could not be started is an
infrastructure error of the run stage (retried, never scored), and an agent that started
and only prints what a launch failure would print is the agent's own result."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.eval import run_eval
from assay.eval.failures import StageError
from assay.eval.runners import AgentResult, CommandRunner
from assay.eval.task import TaskSpec, load_task
from assay.sandbox import BwrapOptions, BwrapSandbox
from tests.eval.tasks import make_repo, write_agent, write_task

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> TaskSpec:
    root = tmp_path_factory.mktemp("launch-task")
    repo, bases = make_repo(root)
    folder = write_task(
        root / "task-1", 1, repo=repo, commit=bases[1], extra="\n[limits]\nwall_s = 20\n"
    )
    return load_task(folder)


@pytest.fixture
def private_dir() -> Iterator[Path]:
    """A 0700 directory of the host's user, as `mktemp -d` makes: the sandbox's user
    cannot read what is in it."""
    path = Path(tempfile.mkdtemp(prefix="assay-private-agent-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _run(command: str, task: TaskSpec) -> AgentResult:
    runner = CommandRunner(command)
    sandbox = BwrapSandbox(BwrapOptions(toolchain_paths=runner.host_paths()))
    assert task.source.repo is not None
    workspace = sandbox.provision(task.source.repo, commit=task.source.commit)
    try:
        return runner.run(task, sandbox, workspace)
    finally:
        sandbox.cleanup(workspace)


def test_a_script_the_sandbox_cannot_read_is_a_launch_failure(
    task: TaskSpec, private_dir: Path
) -> None:
    agent = private_dir / "agent.py"
    agent.write_text("import sys\nsys.exit(0)\n")
    with pytest.raises(StageError) as caught:
        _run(f"python3 {agent}", task)
    assert (caught.value.stage, caught.value.cause) == ("run", "agent_launch_failed")
    assert str(agent) in str(caught.value)


def test_a_program_that_is_not_executable_is_a_launch_failure_in_either_instruction_mode(
    task: TaskSpec, tmp_path: Path
) -> None:
    agent = tmp_path / "agents" / "agent.sh"
    agent.parent.mkdir()
    agent.write_text("#!/bin/sh\nexit 0\n")
    agent.chmod(0o644)
    for command in (str(agent), f"{agent} {{instruction_file}}"):
        with pytest.raises(StageError) as caught:
            _run(command, task)
        assert caught.value.cause == "agent_launch_failed"
        assert "ermission denied" in str(caught.value)


def test_a_missing_program_is_a_launch_failure(task: TaskSpec) -> None:
    with pytest.raises(StageError) as caught:
        _run("/no/such/agent --go", task)
    assert caught.value.cause == "agent_launch_failed"
    assert "/no/such/agent" in str(caught.value)


@pytest.mark.parametrize(
    ("stderr", "code"),
    [
        ("sh: 1: exec: /no/such/agent: not found", 127),
        ("sh: 1: exec: /bin/agent: Permission denied", 126),
        ("bwrap: Can't mount proc on /newroot/proc: Operation not permitted", 1),
    ],
)
def test_an_agent_that_prints_a_launch_failure_has_started_and_its_result_is_recorded(
    task: TaskSpec, tmp_path: Path, stderr: str, code: int
) -> None:
    # Were this taken for a launch failure, a failing agent could turn its attempt into an
    # error, which no pass rate counts.
    source = f"import sys\nsys.stderr.write({stderr + chr(10)!r})\nsys.exit({code})\n"
    agent = write_agent(tmp_path, "liar", source)
    for command in (f"python3 {agent}", f"python3 {agent} {{instruction_file}}"):
        result = _run(command, task)
        assert stderr in result.stderr
        assert result.exit_code in (code, None)


def test_a_launch_failure_is_retried_and_never_scored(
    task: TaskSpec, private_dir: Path, tmp_path: Path
) -> None:
    agent = private_dir / "agent.py"
    agent.write_text("import sys\nsys.exit(0)\n")

    result = run_eval([task.folder], f"python3 {agent}", retries=1, store=tmp_path / "evals.sqlite")

    summary = result.summary
    assert (summary["scored"], summary["errors"], summary["pass_rate"]) == (0, 1, None)
    assert summary["errors_by_stage"] == {"run:agent_launch_failed": 1}
    (row,) = summary["attempts"]
    assert row["tries"] == 2
    assert row["score"] is None
    assert str(agent) in row["error"]["message"]

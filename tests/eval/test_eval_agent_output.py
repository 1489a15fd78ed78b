"""An agent's usage read from its own output (Claude Code's `-p --output-format json` and
`stream-json`, Codex's `exec --json`), recorded per attempt, and a task's token and cost
limits enforced on it: for real, fake agents printing the documented formats in bubblewrap."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from assay.eval import run_eval
from assay.eval.agent_output import OutputReader
from assay.eval.runners import AgentResult, CommandRunner
from assay.eval.task import TaskSpec, load_task
from assay.sandbox import BwrapOptions, BwrapSandbox
from tests.eval.tasks import GOOD, make_repo, write_agent, write_task

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

#: `claude -p --output-format json`: one result object, as documented.
CLAUDE_RESULT = {
    "type": "result",
    "subtype": "success",
    "is_error": False,
    "duration_ms": 5123,
    "duration_api_ms": 4100,
    "num_turns": 3,
    "result": "Fixed `add`.",
    "session_id": "0b8c6f6e-5b1c-4c55-a3f5-1f2a3b4c5d6e",
    "total_cost_usd": 0.0421,
    "usage": {
        "input_tokens": 12,
        "cache_creation_input_tokens": 300,
        "cache_read_input_tokens": 4000,
        "output_tokens": 250,
        "server_tool_use": {"web_search_requests": 0},
        "service_tier": "standard",
    },
}

#: `codex exec --json`: JSONL events, usage on each completed turn.
CODEX_EVENTS: list[dict[str, Any]] = [
    {"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"},
    {"type": "turn.started"},
    {
        "type": "item.started",
        "item": {"id": "item_1", "type": "command_execution", "command": "bash -lc ls"},
    },
    {"type": "item.completed", "item": {"id": "item_3", "type": "agent_message", "text": "ok"}},
    {
        "type": "turn.completed",
        "usage": {"input_tokens": 24763, "cached_input_tokens": 24448, "output_tokens": 122},
    },
    {"type": "turn.started"},
    {
        "type": "turn.completed",
        "usage": {"input_tokens": 100, "cached_input_tokens": 0, "output_tokens": 10},
    },
]


def _assistant(message_id: str, tokens_in: int, tokens_out: int) -> dict[str, Any]:
    return {
        "type": "assistant",
        "message": {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "working"}],
            "usage": {
                "input_tokens": tokens_in,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": tokens_out,
            },
        },
        "parent_tool_use_id": None,
        "session_id": "s",
    }


def _lines(events: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(e).encode() + b"\n" for e in events)


# -- the reader, on the documented formats --------------------------------------------------


def test_claude_codes_result_object_gives_the_authoritative_totals() -> None:
    reader = OutputReader()
    data = json.dumps(CLAUDE_RESULT).encode()
    for i in range(0, len(data), 7):  # however the pipe splits it
        reader.feed(data[i : i + 7])
    reader.finish()
    assert reader.format == "claude-code"
    assert reader.usage.telemetry("claude-code") == {
        "output_format": "claude-code",
        "tokens_in": 4312,  # input + cache creation + cache read
        "tokens_out": 250,
        "cache_read_tokens": 4000,
        "cache_write_tokens": 300,
        "cost_usd": 0.0421,
        "turns": 3,
        "is_error": False,
    }


def test_claude_code_stream_counts_a_step_once_and_the_result_replaces_the_running_sum() -> None:
    reader = OutputReader()
    init = {"type": "system", "subtype": "init", "model": "claude-sonnet-4-5", "tools": []}
    reader.feed(_lines([init, _assistant("msg_1", 1000, 100)]))
    # Parallel tool uses: the same message id again, with the same usage.
    reader.feed(_lines([_assistant("msg_1", 1000, 100), _assistant("msg_2", 2000, 50)]))
    assert (reader.usage.tokens_in, reader.usage.tokens_out) == (3000, 150)
    reader.feed(b"not json at all\n" + b'{"type": "assistant", "message": "x"}\n')
    reader.feed(_lines([CLAUDE_RESULT]))
    assert reader.usage.tokens == 4312 + 250
    assert reader.usage.model == "claude-sonnet-4-5"
    reader.feed(_lines([_assistant("msg_3", 9999, 9999)]))  # nothing counts after the result
    assert reader.usage.tokens == 4312 + 250


def test_codex_turns_are_summed_and_a_failed_turn_is_an_error() -> None:
    reader = OutputReader()
    reader.feed(_lines(CODEX_EVENTS))
    assert reader.format == "codex"
    assert (reader.usage.tokens_in, reader.usage.tokens_out) == (24863, 132)
    assert reader.usage.cache_read_tokens == 24448
    assert (reader.usage.turns, reader.usage.cost_usd, reader.usage.is_error) == (2, None, None)
    reader.feed(_lines([{"type": "turn.failed", "error": {"message": "quota"}}]))
    assert reader.usage.is_error is True


def test_counts_of_the_wrong_shape_are_ignored() -> None:
    reader = OutputReader()
    bad = dict(CLAUDE_RESULT, total_cost_usd=-3, num_turns="many")
    bad["usage"] = {"input_tokens": True, "output_tokens": -5, "cache_read_input_tokens": "1"}
    reader.feed(_lines([bad]))
    assert reader.usage.telemetry(reader.format or "") == {
        "output_format": "claude-code",
        "tokens_in": 0,
        "tokens_out": 0,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "is_error": False,
    }


# -- for real: recorded per attempt, limits enforced -------------------------------------


def _task(root: Path, limits: str) -> TaskSpec:
    repo, bases = make_repo(root)
    extra = f"\n[limits]\nwall_s = 30\n{limits}"
    return load_task(write_task(root / "task-1", 1, repo=repo, commit=bases[1], extra=extra))


def _run(command: str, task: TaskSpec) -> AgentResult:
    runner = CommandRunner(command)
    sandbox = BwrapSandbox(BwrapOptions(toolchain_paths=runner.host_paths()))
    assert task.source.repo is not None
    workspace = sandbox.provision(task.source.repo, commit=task.source.commit)
    try:
        return runner.run(task, sandbox, workspace)
    finally:
        sandbox.cleanup(workspace)


def _processes_naming(marker: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(int(pid))
            except OSError:
                continue
    return found


def test_a_claude_code_json_result_is_recorded_as_the_attempts_telemetry(
    tmp_path: Path,
) -> None:
    task = _task(tmp_path, "")
    source = f"import json\nprint(json.dumps({CLAUDE_RESULT!r}))\n"
    result = _run(f"python3 {write_agent(tmp_path, 'claude', source)}", task)
    assert result.exit_code == 0
    assert result.telemetry["tokens_in"] == 4312
    assert result.telemetry["cost_usd"] == 0.0421
    assert result.telemetry["turns"] == 3
    assert '"type": "result"' in result.stdout  # the output is still kept as evidence
    assert result.limit_exceeded == ""


def test_codex_jsonl_is_recorded_and_a_cost_limit_it_cannot_check_is_said(
    tmp_path: Path,
) -> None:
    task = _task(tmp_path, "cost_usd = 1.0\n")
    events = "\n".join(json.dumps(e) for e in CODEX_EVENTS)
    source = f"import sys\nsys.stdout.write({events!r} + '\\n')\n"
    result = _run(f"python3 {write_agent(tmp_path, 'codex', source)}", task)
    assert result.telemetry["output_format"] == "codex"
    assert (result.telemetry["tokens_in"], result.telemetry["tokens_out"]) == (24863, 132)
    assert "cost limit not checked" in result.note
    assert result.limit_exceeded == ""


def test_an_agent_over_its_token_limit_is_killed_with_its_whole_tree(tmp_path: Path) -> None:
    task = _task(tmp_path, "tokens = 3000\n")
    marker = f"assay-spender-{os.getpid()}-{time.monotonic_ns()}"
    source = textwrap.dedent(
        f"""
        import json, signal, subprocess, sys, time
        subprocess.Popen([sys.executable, "-c",
            "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "time.sleep(3600)", {marker!r}])
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print(json.dumps({{"type": "system", "subtype": "init", "model": "m"}}), flush=True)
        for step in range(1, 1000):
            print(json.dumps({_assistant("msg_STEP", 1000, 200)!r}).replace(
                "msg_STEP", f"msg_{{step}}"), flush=True)
            time.sleep(0.3)
        """
    )
    started = time.monotonic()
    result = _run(f"python3 {write_agent(tmp_path, 'spender', source)}", task)
    elapsed = time.monotonic() - started

    assert result.limit_exceeded == "tokens 3600 > 3000"
    assert "killed over its limit" in result.note
    assert not result.timed_out
    assert elapsed < 15  # not its wall time (30 s)
    assert result.telemetry["tokens_in"] == 3000
    assert _processes_naming(marker) == []


def test_an_attempt_over_its_cost_limit_scores_zero_with_the_reason_even_when_verified(
    tmp_path: Path,
) -> None:
    task = _task(tmp_path, "cost_usd = 1.0\n")
    over = dict(CLAUDE_RESULT, total_cost_usd=2.5)
    source = f"import json\nopen('calc.py', 'w').write({GOOD!r})\nprint(json.dumps({over!r}))\n"
    agent = write_agent(tmp_path, "fixer", source)

    result = run_eval([task.folder], f"python3 {agent}", store=tmp_path / "evals.sqlite")

    summary = result.summary
    assert (summary["scored"], summary["errors"], summary["passed"]) == (1, 0, 0)
    (row,) = summary["attempts"]
    assert row["status"] == "VERIFIED"
    assert row["score"] == 0.0
    assert row["limit_exceeded"] == "cost $2.5000 > $1.0000"
    assert row["telemetry"]["cost_usd"] == 2.5
    assert summary["usage"] == {
        "attempts_reporting": 1,
        "tokens_in": 4312,
        "tokens_out": 250,
        "cost_usd": 2.5,
    }
    (record,) = result.records
    assert record.score is not None
    assert record.score.to_dict()["reason"] == "limit_exceeded: cost $2.5000 > $1.0000"

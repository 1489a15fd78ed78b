"""`assay mcp` through the MCP SDK's own client, against the real server process.

The client (`mcp.client.stdio`) starts `assay mcp` as an MCP host does, lists its tools
and calls them on real tiny repositories verified in the real sandbox: a passing one
(VERIFIED, with progress notifications while its checks run), a failing one (FAILED, the
failing test named), and a slow one whose verification is cancelled: no process of it
may survive the cancellation.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from tests.cli import ASSAY, assay_env
from tests.repos import git_repo

PASSING = {
    "pyproject.toml": '[project]\nname = "tiny"\nversion = "0"\n',
    "test_math.py": "def add(a, b):\n    return a + b\n\n\ndef test_add():\n    assert add(2, 2) == 4\n",
}
FAILING = {
    **PASSING,
    "test_math.py": "def add(a, b):\n    return a - b\n\n\ndef test_add_sums():\n    assert add(2, 2) == 4\n",
}

#: Fails the first time it runs in a workspace, passes from then on.
FLAKY = {
    **PASSING,
    "test_math.py": (
        "from pathlib import Path\n\n"
        "SEEN = Path(__file__).with_name('.seen-flaky')\n\n\n"
        "def test_flaky():\n"
        "    first = not SEEN.exists()\n"
        "    SEEN.write_text('ran once')\n"
        "    assert not first, 'fails the first time it runs in this workspace'\n"
    ),
}


def slow_repo_files(marker: str) -> dict[str, str]:
    """A test that sleeps 60 s in a child process whose command line carries `marker`."""
    test = (
        "import subprocess\n\n\n"
        "def test_slow():\n"
        f"    subprocess.run(['sleep', '{marker}'], check=True)\n"
    )
    return {**PASSING, "test_math.py": test}


Session = Callable[[ClientSession], Awaitable[Any]]


def with_server(tmp_path: Path, use: Session, *args: str, **env: str) -> Any:
    """Start `assay mcp ARGS` under the SDK's stdio client, initialise, and run `use` on it."""
    params = StdioServerParameters(
        command=ASSAY,
        args=["mcp", *args],
        env=assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"), **env),
    )

    async def main() -> Any:
        with (tmp_path / "server.log").open("w") as log:
            async with (
                stdio_client(params, errlog=log) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                return await use(session)

    return anyio.run(main)


def test_the_server_lists_verify_plan_and_probe(tmp_path: Path) -> None:
    async def use(session: ClientSession) -> Any:
        return (await session.list_tools()).tools

    tools = {tool.name: tool for tool in with_server(tmp_path, use)}
    assert set(tools) == {"verify", "plan", "probe"}
    schema = tools["verify"].input_schema
    assert schema["required"] == ["path"]
    assert {"kinds", "timeout_s", "base", "protect"} <= set(schema["properties"])
    assert "VERIFIED" in (tools["verify"].description or "")


def call_verify(
    tmp_path: Path, repo: Path, **arguments: Any
) -> tuple[Any, list[tuple[float, str | None]]]:
    updates: list[tuple[float, str | None]] = []

    # The SDK's callback protocol names its parameters: `progress`, `total`, `message`.
    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, message))

    async def use(session: ClientSession) -> Any:
        return await session.call_tool(
            "verify", {"path": str(repo), **arguments}, progress_callback=on_progress
        )

    return with_server(tmp_path, use), updates


def test_verify_a_passing_repository_is_verified_with_progress(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo", PASSING)
    result, progress = call_verify(tmp_path, repo)
    assert not result.is_error
    structured = result.structured_content
    assert list(structured)[:2] == ["status", "passed"]  # the gate's keys first
    assert structured["status"] == "VERIFIED" and structured["passed"] is True
    assert any(c["kind"] == "test" and c["verdict"] == "pass" for c in structured["checks"])
    assert "VERIFIED" in result.content[0].text
    messages = [message or "" for _, message in progress]
    assert "running pytest" in messages, messages
    finished = [m for m in messages if m.startswith("pass") and "pytest" in m]
    assert finished, messages
    assert [done for done, _ in progress] == sorted(done for done, _ in progress)


def test_verify_a_failing_repository_names_the_failing_test(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo", FAILING)
    result, progress = call_verify(tmp_path, repo)
    assert not result.is_error  # a FAILED verdict is an answer, not a tool error
    structured = result.structured_content
    assert structured["status"] == "FAILED" and structured["passed"] is False
    assert structured["exit_code"] == 1
    text = result.content[0].text
    assert "test_add_sums" in text and "FAILED" in text
    assert any((m or "").startswith("fail") for _, m in progress)


def test_verify_with_reruns_names_a_flaky_test_and_does_not_pass(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo", FLAKY)
    result, _ = call_verify(tmp_path, repo, rerun_failures=2)
    assert not result.is_error
    structured = result.structured_content
    assert structured["status"] == "INDETERMINATE" and structured["passed"] is False
    (check,) = [c for c in structured["checks"] if c["kind"] == "test"]
    assert check["cause"] == "flaky_tests"
    assert "test_math::test_flaky" in check["note"]


def test_reruns_past_the_bound_are_a_tool_error_not_a_call_without_end(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo", FAILING)

    async def use(session: ClientSession) -> Any:
        with anyio.fail_after(60):  # a failing test run again 10**30 times never answers
            return await session.call_tool(
                "verify", {"path": str(repo), "rerun_failures": 10**30, "all_tests": True}
            )

    result = with_server(tmp_path, use)
    assert result.is_error
    assert "rerun_failures must be a whole number from 0 to 10" in result.content[0].text


@pytest.mark.parametrize("sandbox", ["none", "local"])
def test_a_client_cannot_ask_for_less_confinement_than_the_operator_allows(
    tmp_path: Path, sandbox: str
) -> None:
    escaped = tmp_path / "escaped"
    test = f"def test_out():\n    open({str(escaped)!r}, 'w').write('host')\n"
    repo = git_repo(tmp_path / "repo", {**PASSING, "test_math.py": test})

    async def use(session: ClientSession) -> Any:
        return await session.call_tool("verify", {"path": str(repo), "sandbox": sandbox})

    refused = with_server(tmp_path, use)
    assert refused.is_error
    assert f"assay mcp --allow-sandbox {sandbox}" in refused.content[0].text
    assert not escaped.exists()
    allowed = with_server(tmp_path, use, "--allow-sandbox", "none")
    assert not allowed.is_error
    assert escaped.exists()  # what the refusal kept off the host: both reach it


def test_verify_of_no_directory_is_a_tool_error_not_a_pass(tmp_path: Path) -> None:
    async def use(session: ClientSession) -> Any:
        return await session.call_tool("verify", {"path": str(tmp_path / "missing")})

    result = with_server(tmp_path, use)
    assert result.is_error
    assert "is not a directory" in result.content[0].text
    assert "Traceback" not in result.content[0].text


def test_plan_and_probe_answer_with_structured_results(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo", PASSING)

    async def use(session: ClientSession) -> Any:
        plan = await session.call_tool("plan", {"path": str(repo)})
        probe = await session.call_tool("probe", {})
        return plan, probe

    plan, probe = with_server(tmp_path, use)
    assert not plan.is_error and not probe.is_error
    assert any("pytest" in " ".join(c["argv"]) for c in plan.structured_content["checks"])
    assert probe.structured_content["tools"]["python"]["found"] is True


def processes_with(needle: bytes, where: str) -> list[int]:
    """Pids whose /proc/PID/`where` (cmdline or environ) contains `needle`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            data = Path("/proc", entry, where).read_bytes()
        except OSError:
            continue
        if needle in data:
            found.append(int(entry))
    return found


async def wait_for(alive: Callable[[], list[int]], seconds: float = 15) -> list[int]:
    """Wait up to `seconds` for `alive()` to be empty; what is still alive then."""
    end = time.monotonic() + seconds
    while (left := alive()) and time.monotonic() < end:
        await anyio.sleep(0.05)
    return left


def test_cancelling_a_verify_kills_every_process_it_started(tmp_path: Path) -> None:
    # A unique duration: the sleeping test's child is found by its command line.
    marker = f"60.{uuid.uuid4().int % 10**9:09d}"
    repo = git_repo(tmp_path / "repo", slow_repo_files(marker))
    tag = f"ASSAY_MCP_TEST={uuid.uuid4().hex}"
    seen: dict[str, Any] = {}

    def workers() -> list[int]:
        """The server's workers: they inherit the tag from the server's environment."""
        return [
            pid
            for pid in processes_with(tag.encode(), "environ")
            if b"assay.mcp.worker" in Path(f"/proc/{pid}/cmdline").read_bytes()
        ]

    async def use(session: ClientSession) -> Any:
        with anyio.move_on_after(120) as scope:
            async with anyio.create_task_group() as group:

                async def call() -> None:
                    await session.call_tool("verify", {"path": str(repo), "use_cache": False})
                    seen["finished"] = True  # it must not: the test sleeps for a minute

                group.start_soon(call)
                while not processes_with(marker.encode(), "cmdline"):
                    await anyio.sleep(0.1)
                seen["sleepers"] = processes_with(marker.encode(), "cmdline")
                seen["workers"] = workers()
                group.cancel_scope.cancel()  # the client sends notifications/cancelled
        assert not scope.cancelled_caught, "the slow test never started"
        # While the server still runs: the cancellation, not its exit, must stop them.
        seen["sleepers_left"] = await wait_for(lambda: processes_with(marker.encode(), "cmdline"))
        seen["workers_left"] = await wait_for(workers)
        # The server outlives the cancelled call and still answers.
        return await session.call_tool("plan", {"path": str(repo)})

    key, value = tag.split("=")
    after = with_server(tmp_path, use, **{key: value})
    assert "finished" not in seen
    assert seen["sleepers"] and seen["workers"]
    assert not seen["sleepers_left"], "the sleeping test outlived its cancelled verification"
    assert not seen["workers_left"], "the cancelled call's worker outlived it"
    assert not after.is_error


def test_a_server_killed_outright_takes_its_running_verification_with_it(tmp_path: Path) -> None:
    # SIGKILL gives the server no chance to cancel anything: the worker learns of its
    # death from the kernel (parent-death signal) and kills what it started.
    marker = f"60.{uuid.uuid4().int % 10**9:09d}"
    repo = git_repo(tmp_path / "repo", slow_repo_files(marker))
    server = subprocess.Popen(
        [ASSAY, "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state")),
    )
    assert server.stdin is not None
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": LATEST_HANDSHAKE_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "verify", "arguments": {"path": str(repo), "use_cache": False}},
        },
    ]
    try:
        for message in messages:
            server.stdin.write(json.dumps(message).encode() + b"\n")
            server.stdin.flush()
        end = time.monotonic() + 120
        while not processes_with(marker.encode(), "cmdline") and time.monotonic() < end:
            time.sleep(0.1)
        assert processes_with(marker.encode(), "cmdline"), "the slow test never started"
    finally:
        server.kill()
        server.wait()
    left = anyio.run(wait_for, lambda: processes_with(marker.encode(), "cmdline"))
    assert not left, "the sleeping test outlived the server that started it"

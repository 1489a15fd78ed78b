"""The MCP server: `verify`, `plan` and `probe` as tools, over stdio, on the official SDK.

Each call runs in its own worker process (`assay.mcp.worker`), read line by line: a
check that starts or ends becomes a progress notification, the last line is the
result. A cancelled call (the client's `notifications/cancelled`, or the client gone)
stops its worker with SIGTERM, which kills every process tree the worker started, and
SIGKILL after a grace period if it does not go.

Results are structured (`structuredContent`): the verify tool's begins with the gate's
keys, `status` and `passed`, then the report as `assay verify --json` prints it. A
FAILED verification is a result, not a tool error; a tool error means nothing ran
(unusable arguments), and its text says why.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any, Literal

import anyio
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations

from assay._version import __version__
from assay.errors import AssayError
from assay.mcp.early import INSTRUCTIONS, NAME

#: Seconds a cancelled worker has to kill its process trees before it is killed itself.
CANCEL_GRACE_S = 10.0
#: The longest line a worker may send (a report with every check's kept output).
MAX_EVENT_BYTES = 256 * 1024 * 1024

KindName = Literal["build", "typecheck", "lint", "test"]
SandboxName = Literal["auto", "bwrap", "local", "none"]


class WorkerFailed(AssayError):
    """The worker ended without an answer, or refused the arguments (nothing ran)."""


async def run_worker(
    tool: str, arguments: dict[str, Any], on_event: Any = None
) -> tuple[dict[str, Any], str]:
    """Run `tool` in a worker process: its structured result and the text for the reader
    (the result as JSON when the worker wrote none). `on_event(event)` is awaited for each
    progress line. Cancelling this coroutine stops the worker and what it runs."""
    request = json.dumps({"tool": tool, "arguments": arguments}).encode()
    process = await anyio.open_process(
        [sys.executable, "-m", "assay.mcp.worker"],
        stderr=None,  # the server's stderr: the client's log
        env={**os.environ, "ASSAY_MCP_SERVER_PID": str(os.getpid())},
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        async with process.stdin:
            await process.stdin.send(request)
        lines = BufferedByteReceiveStream(process.stdout)
        while True:
            try:
                line = await lines.receive_until(b"\n", MAX_EVENT_BYTES)
            except (anyio.EndOfStream, anyio.IncompleteRead):
                break
            try:
                event = json.loads(line)
            except ValueError:
                raise WorkerFailed(f"assay's worker sent an unreadable line: {line[:200]!r}")
            kind = event.get("event")
            if kind == "result":
                await process.wait()
                result = dict(event["result"])
                return result, event.get("text") or json.dumps(result, indent=2)
            if kind == "usage_error":
                raise WorkerFailed(str(event.get("message")))
            if on_event is not None:
                await on_event(event)
        status = await process.wait()
        raise WorkerFailed(f"assay's worker ended without an answer (exit status {status})")
    finally:
        with anyio.CancelScope(shield=True):
            await _stop(process)


async def _stop(process: anyio.abc.Process) -> None:
    """SIGTERM, so that the worker kills its runs' process trees; SIGKILL if it lingers."""
    if process.returncode is not None:
        return
    try:
        process.send_signal(signal.SIGTERM)
    except ProcessLookupError:
        return
    with anyio.move_on_after(CANCEL_GRACE_S):
        await process.wait()
        return
    process.kill()
    await process.wait()


class _Progress:
    """Turns the worker's check events into MCP progress notifications."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx
        self._finished = 0

    async def __call__(self, event: dict[str, Any]) -> None:
        if event.get("event") == "started":
            message = f"running {event.get('check')}"
        elif event.get("event") == "finished":
            self._finished += 1
            message = str(event.get("line"))
        else:
            return
        await self._ctx.report_progress(self._finished, None, message)


def _result(structured: dict[str, Any], text: str) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=structured
    )


def _refused(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


#: How much of its confinement each sandbox gives up, against `auto`'s.
_WEAKNESS = {"auto": 0, "bwrap": 0, "local": 1, "none": 2}


def sandbox_refusal(asked: str, allowed: str) -> str | None:
    """Why a client may not have sandbox `asked` when the operator allowed down to
    `allowed` (None: it may). The repository is hostile: a client, which may be the very
    agent whose work is verified, does not get to run it unconfined on its own say."""
    if _WEAKNESS.get(asked, 0) <= _WEAKNESS.get(allowed, 0):
        return None
    return (
        f"sandbox {asked!r} is refused: it runs the repository's own code with less "
        f"confinement than {'bubblewrap' if allowed == 'auto' else repr(allowed)}, and "
        f"only whoever starts this server can allow that (`assay mcp --allow-sandbox {asked}`)"
    )


def build_server(allow_sandbox: str = "auto") -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer(
        name=NAME, version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, open_world_hint=False))
    async def verify(
        path: str,
        ctx: Context,
        kinds: list[KindName] | None = None,
        timeout_s: float | None = None,
        deadline_s: float | None = None,
        sandbox: SandboxName = "auto",
        use_cache: bool = True,
        base: str | None = None,
        protect: bool = False,
        all_tests: bool = False,
        rerun_failures: int = 0,
    ) -> CallToolResult:
        """Discover how the repository at `path` checks itself (build, type-check, lint,
        tests), run those checks in a sandbox, and return the verdict with its evidence.

        `status` is VERIFIED only when every check passed and tests ran; FAILED, INDETERMINATE
        and UNVERIFIED are not done. `output` has one line per check, `checks` the evidence
        (argv, exit code, diagnostics with file:line, kept output). `base` (a git ref) with
        `protect` verifies an untrusted change with tests restored from the base.
        `rerun_failures` runs failing tests again in fresh processes, up to that many times:
        a check whose every failure passes on a rerun is INDETERMINATE, its flaky tests named.
        """
        if (refusal := sandbox_refusal(sandbox, allow_sandbox)) is not None:
            return _refused(refusal)
        arguments = {
            "path": path,
            "kinds": kinds,
            "timeout_s": timeout_s,
            "deadline_s": deadline_s,
            "sandbox": sandbox,
            "use_cache": use_cache,
            "base": base,
            "protect": protect,
            "all_tests": all_tests,
            "rerun_failures": rerun_failures,
        }
        try:
            return _result(*await run_worker("verify", arguments, _Progress(ctx)))
        except WorkerFailed as exc:
            return _refused(str(exc))

    @server.tool(annotations=read_only)
    async def plan(path: str) -> CallToolResult:
        """What `verify` would run for the repository at `path`, and why each command was
        chosen (its source, file:line), without running anything."""
        try:
            return _result(*await run_worker("plan", {"path": path}))
        except WorkerFailed as exc:
            return _refused(str(exc))

    @server.tool(annotations=read_only)
    async def probe() -> CallToolResult:
        """Every toolchain assay knows (compilers, type-checkers, linters, test runners):
        found or not, with its probed version and path, or how to install it."""
        try:
            return _result(*await run_worker("probe", {}))
        except WorkerFailed as exc:
            return _refused(str(exc))

    return server


def serve(allow_sandbox: str = "auto") -> None:
    """Serve over stdio until the client goes away; clients may ask for sandboxes down
    to `allow_sandbox` (`local`, `none`), none weaker."""
    build_server(allow_sandbox).run("stdio")

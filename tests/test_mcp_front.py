"""`assay mcp` answers `initialize` before the MCP SDK has loaded, with the SDK's answer.

The early answer (`assay.mcp.early`) is compared with the answer the SDK itself gives
for the same request line, on this server, through the SDK's own stdio transport. The
real process is then started: it must answer `initialize` with the SDK not yet imported,
never answer it twice, relay everything else both ways, and leave any first line it
does not answer early to the SDK.
"""

from __future__ import annotations

import io
import json
import os
import select
import subprocess
import time
from typing import Any, get_args, get_origin

import pytest

pytest.importorskip("mcp")

import anyio
from mcp.server.stdio import stdio_server
from mcp_types import ClientCapabilities
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, KNOWN_PROTOCOL_VERSIONS
from pydantic import BaseModel

from assay.mcp import early
from assay.mcp.front import DEBUG_ENV
from assay.mcp.server import build_server
from tests.cli import ASSAY, assay_env

SDK_CLIENT_CAPABILITIES = {
    "sampling": {"context": {}, "tools": {}},
    "elicitation": {"form": {}, "url": {}},
    "roots": {"listChanged": True},
    "experimental": {"x-feature": {"level": 2, "names": ["a"]}},
    "extensions": {"io.example/thing": {}},
    "tasks": {"list": {}, "cancel": {}, "requests": {"sampling": {"createMessage": {}}}},
}


def initialize(
    version: str = HANDSHAKE_PROTOCOL_VERSIONS[-1],
    request_id: object = 1,
    capabilities: object = None,
    client_info: object = None,
) -> str:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": {} if capabilities is None else capabilities,
                "clientInfo": client_info or {"name": "test", "version": "0"},
            },
        }
    )


def sdk_answers(*lines: str) -> list[str]:
    """What the SDK writes for `lines` on this server, through its stdio transport."""
    written = io.StringIO()

    async def serve() -> None:
        server = build_server()
        lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async serves
        given = io.StringIO("".join(line + "\n" for line in lines))
        async with stdio_server(anyio.wrap_file(given), anyio.wrap_file(written)) as (read, write):
            await lowlevel.run(read, write, lowlevel.create_initialization_options())

    anyio.run(serve)
    return written.getvalue().splitlines(keepends=True)


ANSWERED = {
    **{f"version {v}": initialize(v) for v in KNOWN_PROTOCOL_VERSIONS},
    "an unknown version": initialize("1999-01-01"),
    "a string id": initialize(request_id="init-1"),
    "the capabilities clients send": initialize(capabilities=SDK_CLIENT_CAPABILITIES),
    "a titled client": initialize(
        client_info={"name": "c", "version": "1", "title": "Client", "websiteUrl": "https://x"}
    ),
    "an unknown capability": initialize(capabilities={"future": {"on": True}}),
    "an unknown member of a capability": initialize(
        capabilities={"roots": {"listChanged": False, "depth": 5}, "sampling": {"x": None}}
    ),
}


@pytest.mark.parametrize("line", ANSWERED.values(), ids=ANSWERED.keys())
def test_the_early_answer_is_the_sdks_own(line: str) -> None:
    answer = early.early_answer(line.encode())
    assert answer is not None
    (sdk_line,) = sdk_answers(line)
    assert answer == json.loads(sdk_line)
    assert early.encode(answer) == sdk_line.encode()  # byte for byte


LEFT_TO_THE_SDK = {
    "not initialize": '{"jsonrpc": "2.0", "id": 1, "method": "ping"}',
    "a boolean id": initialize(request_id=True),
    "a float id": initialize(request_id=1.0),
    "a version that is no string": initialize(version=20251125),  # type: ignore[arg-type]
    "a capability that is no object": initialize(capabilities={"roots": True}),
    "a flag that is an object": initialize(capabilities={"roots": {"listChanged": {}}}),
    "a flag that is a string": initialize(capabilities={"roots": {"listChanged": "yes"}}),
    "a capability that is null": initialize(capabilities={"sampling": None}),
    "a nested capability that is a flag": initialize(capabilities={"sampling": {"tools": True}}),
    "an experimental entry that is no object": initialize(capabilities={"experimental": {"x": 1}}),
    "a client with icons": initialize(
        client_info={"name": "c", "version": "1", "icons": [{"src": "https://x/i.png"}]}
    ),
    "a client without a version": initialize(client_info={"name": "c"}),
    "a carriage return": initialize().replace(", ", ",\r"),
    "NaN": initialize().replace('"id": 1', '"id": NaN'),
    "_meta": initialize().replace('"params": {', '"params": {"_meta": {}, '),
    "an extra member": initialize()[:-1] + ', "extra": 1}',
    "not JSON": "initialize",
}


@pytest.mark.parametrize("line", LEFT_TO_THE_SDK.values(), ids=LEFT_TO_THE_SDK.keys())
def test_anything_else_is_left_to_the_sdk(line: str) -> None:
    assert early.early_answer(line.encode()) is None


def test_the_early_answer_is_checked_against_the_installed_sdk_release() -> None:
    from importlib.metadata import version

    assert version("mcp") == version("mcp_types") == early.SDK_VERSION
    assert early.checked_sdk_installed()
    assert early.HANDSHAKE_PROTOCOL_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS


def capability_shape(model: type[BaseModel]) -> dict[str, Any]:
    """`model`'s members as `early.CLIENT_CAPABILITIES` writes them."""
    assert model.model_config.get("extra") in (None, "ignore")  # unnamed members ignored
    shape: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        (kind,) = [a for a in get_args(field.annotation) if a is not type(None)]
        if kind is bool:
            shape[field.alias or name] = True
        elif get_origin(kind) is dict:
            assert get_args(kind)[1] == dict[str, Any]
            shape[field.alias or name] = None
        else:
            assert issubclass(kind, BaseModel), kind
            shape[field.alias or name] = capability_shape(kind)
    return shape


def test_the_client_capabilities_checked_are_the_sdks() -> None:
    assert early.CLIENT_CAPABILITIES == capability_shape(ClientCapabilities)


class Server:
    """`assay mcp` as a host starts it, spoken to line by line."""

    def __init__(self, **env: str) -> None:
        self.process = subprocess.Popen(
            [ASSAY, "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=assay_env(**env),
        )
        self.pending = b""

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()

    def receive(self, timeout: float = 60) -> dict[str, Any]:
        """The next line the server writes. Read from the pipe unbuffered: two answers that
        arrive together must not leave the second in a buffer `select` cannot see."""
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self.pending:
            remaining = deadline - time.monotonic()
            ready, _, _ = select.select([self.process.stdout], [], [], max(remaining, 0))
            assert ready, "no answer"
            chunk = os.read(self.process.stdout.fileno(), 65536)
            assert chunk, "the server closed its output"
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return dict(json.loads(line))

    def close(self) -> tuple[bytes, bytes, int]:
        """Close stdin (the end of the session): what was left unread, and the exit status."""
        out, err = self.process.communicate(timeout=60)
        return self.pending + out, err, self.process.returncode


def test_initialize_is_answered_before_the_sdk_is_imported_and_only_once() -> None:
    server = Server(**{DEBUG_ENV: "1"})
    started = time.monotonic()
    server.send(initialize())
    answer = server.receive()
    answered_in = time.monotonic() - started
    assert answer == json.loads(sdk_answers(initialize())[0])
    server.send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    server.send('{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}')
    tools = server.receive()  # the SDK's, relayed: its duplicate initialize answer dropped
    assert tools["id"] == 2
    assert {tool["name"] for tool in tools["result"]["tools"]} == {"verify", "plan", "probe"}
    out, err, status = server.close()
    assert status == 0, err
    assert out == b""
    assert b"initialize answered early (SDK imported: False)" in err, err
    assert answered_in < 1.5  # the SDK alone takes longer to import on this machine


def test_a_first_line_not_answered_early_is_the_sdks_to_answer() -> None:
    server = Server(**{DEBUG_ENV: "1"})
    server.send('{"jsonrpc": "2.0", "id": 7, "method": "ping"}')
    server.send(initialize(request_id=8))
    assert server.receive() == {"jsonrpc": "2.0", "id": 7, "result": {}}
    assert server.receive() == json.loads(sdk_answers(initialize(request_id=8))[0])
    out, err, status = server.close()
    assert status == 0 and out == b""
    assert b"answered early" not in err

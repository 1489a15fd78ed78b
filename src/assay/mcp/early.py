"""The answer to `initialize`, given before the MCP SDK has loaded (it takes ~2 s).

Only the standard library here. The answer is the one the SDK gives for this server
(`tests/test_mcp_front.py` checks it against the SDK's own, request by request), so it
is given only when the installed SDK is the release it was checked against, and only
for a request whose shape the SDK is sure to accept; anything else is the SDK's to
answer. The SDK answers the same request again once loaded; `assay.mcp.front` compares.
"""

from __future__ import annotations

import json
import os
from importlib.util import find_spec

TYPE_CHECKING = False  # not `typing`: the host waits for this module
if TYPE_CHECKING:
    from typing import Any

from assay._version import __version__

#: The `mcp` and `mcp_types` release this answer was checked against.
SDK_VERSION = "2.3.0"
#: `mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS`: the revisions `initialize` negotiates.
HANDSHAKE_PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

NAME = "assay"
INSTRUCTIONS = (
    "assay runs a repository's own build, type-check, lint and test commands in a sandbox "
    "and says whether the code is VERIFIED. Call `verify` before claiming work is done: only "
    "status VERIFIED (passed: true) means it builds and its tests ran and passed. `plan` "
    "shows what verify would run without running it; `probe` lists the toolchains found."
)
#: What the SDK's `MCPServer` declares for a server with tools (and its empty prompt and
#: resource lists).
CAPABILITIES = {
    "prompts": {"listChanged": False},
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}

_CLIENT_INFO_TEXT = frozenset({"name", "version", "title", "description", "websiteUrl"})
#: The SDK's `ClientCapabilities` (by their wire names): an object is a capability made of
#: the members it names, `True` a flag (a boolean), `None` an open map of objects. The
#: SDK ignores members it does not name, whatever their value.
CLIENT_CAPABILITIES: dict[str, Any] = {
    "experimental": None,
    "sampling": {"context": {}, "tools": {}},
    "elicitation": {"form": {}, "url": {}},
    "roots": {"listChanged": True},
    "extensions": None,
    "tasks": {
        "list": {},
        "cancel": {},
        "requests": {"elicitation": {"create": {}}, "sampling": {"createMessage": {}}},
    },
}


def checked_sdk_installed() -> bool:
    """Whether the installed `mcp` and `mcp_types` are `SDK_VERSION` (found, not imported)."""
    for package in ("mcp", "mcp_types"):
        try:
            spec = find_spec(package)
        except (ImportError, ValueError):
            return False
        if spec is None or not spec.submodule_search_locations:
            return False
        site = os.path.dirname(next(iter(spec.submodule_search_locations)))
        if not os.path.isdir(os.path.join(site, f"{package}-{SDK_VERSION}.dist-info")):
            return False
    return True


def initialize_result(requested: str) -> dict[str, Any]:
    """The SDK's result: the client's version when it is one the handshake speaks, else
    the newest that it does (the client then decides whether to go on)."""
    negotiated = (
        requested if requested in HANDSHAKE_PROTOCOL_VERSIONS else HANDSHAKE_PROTOCOL_VERSIONS[-1]
    )
    return {
        "capabilities": CAPABILITIES,
        "instructions": INSTRUCTIONS,
        "protocolVersion": negotiated,
        "serverInfo": {"name": NAME, "version": __version__},
    }


def early_answer(line: bytes) -> dict[str, Any] | None:
    """The response to `line` when it is an `initialize` request the SDK is sure to accept
    as it stands; None when the SDK must answer it."""
    if b"\r" in line:  # the SDK's text reader would split the line there
        return None
    try:
        message = json.loads(line.decode("utf-8"), parse_constant=_refuse)
    except ValueError:
        return None
    if not isinstance(message, dict) or set(message) != {"jsonrpc", "id", "method", "params"}:
        return None
    request_id, params = message["id"], message["params"]
    if message["jsonrpc"] != "2.0" or message["method"] != "initialize":
        return None
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        return None
    if not (
        isinstance(params, dict)
        and set(params) == {"protocolVersion", "capabilities", "clientInfo"}
    ):
        return None
    requested = params["protocolVersion"]
    if not (isinstance(requested, str) and _plain_client_info(params["clientInfo"])):
        return None
    if not _fits(params["capabilities"], CLIENT_CAPABILITIES):
        return None
    return {"jsonrpc": "2.0", "id": request_id, "result": initialize_result(requested)}


def encode(message: dict[str, Any]) -> bytes:
    """One line, as the SDK writes it (compact, UTF-8)."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _refuse(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


def _plain_client_info(info: object) -> bool:
    return (
        isinstance(info, dict)
        and {"name", "version"} <= set(info) <= _CLIENT_INFO_TEXT
        and all(isinstance(value, str) for value in info.values())
    )


def _fits(value: object, shape: dict[str, Any] | bool | None) -> bool:
    """Whether the SDK takes `value` for a member of `shape` (see `CLIENT_CAPABILITIES`)."""
    if shape is True:
        return isinstance(value, bool)
    if not isinstance(value, dict):
        return False
    if shape is None:
        return all(isinstance(entry, dict) for entry in value.values())
    assert isinstance(shape, dict)
    return all(name not in shape or _fits(v, shape[name]) for name, v in value.items())

"""The Claude Code Stop hook's contract: the event on stdin, the decision on stdout.

Input: one JSON object (`session_id`, `transcript_path`, `cwd`, `hook_event_name`,
`stop_hook_active`, ...). Output, with exit status 0: `{"decision": "block", "reason":
...}` keeps the work going, the reason handed to the model; no output lets the stop
through; `{"systemMessage": ...}` lets it through and shows the user a message.
Input that cannot be read blocks too (within the cap): a hook that cannot tell what
it was asked must not say the work is done.
"""

from __future__ import annotations

import json

from assay.errors import AssayError

# Not `typing`, nor a dataclass or a Path: this module is loaded at every stop, before
# anything is verified, and each of those costs more start-up than all the rest.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from assay.hooks.decide import Decision

__all__ = ["MAX_INPUT_BYTES", "HookInput", "InputError", "output_for", "parse_input"]

#: The events whose stop a block holds; any other is let through untouched.
STOP_EVENTS = ("Stop", "SubagentStop")
#: Bound on the event read from stdin (Claude Code's is a few hundred bytes).
MAX_INPUT_BYTES = 1 << 20
#: The key the cap counts under when the input did not say whose stop it is.
UNREADABLE_KEY = "claude-code:unreadable-input"


class InputError(AssayError, ValueError):
    """The hook input is not the documented event."""


class HookInput:
    """The event, as far as the hook reads it."""

    __slots__ = ("cwd", "event", "session_id", "stop_hook_active")

    def __init__(self, session_id: str, cwd: str, stop_hook_active: bool, event: str) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.stop_hook_active = stop_hook_active
        self.event = event

    @property
    def key(self) -> str:
        return f"claude-code:{self.session_id}"

    @property
    def is_stop(self) -> bool:
        return self.event in STOP_EVENTS


def parse_input(raw: bytes, default_cwd: str) -> HookInput:
    """The event in `raw` (stdin's bytes); `default_cwd` when it names no directory."""
    if len(raw) > MAX_INPUT_BYTES:
        raise InputError(f"the hook input is larger than {MAX_INPUT_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("the hook input is not UTF-8 text") from None
    if not text.strip():
        raise InputError("no input on stdin: the hook input is the event as one JSON object")
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise InputError(f"the hook input is not JSON ({exc})") from None
    if not isinstance(document, dict):
        raise InputError(f"the hook input is not a JSON object (got {type(document).__name__})")
    session = _field(document, "session_id", str, "")
    event = _field(document, "hook_event_name", str, "Stop")
    active = _field(document, "stop_hook_active", bool, False)
    cwd = _field(document, "cwd", str, "")
    return HookInput(
        session_id=session or "unnamed",
        cwd=cwd or default_cwd,
        stop_hook_active=active,
        event=event,
    )


def _field(document: dict[str, Any], name: str, kind: type, default: Any) -> Any:
    value = document.get(name, default)
    if value is None:
        return default
    if not isinstance(value, kind):
        raise InputError(
            f"the hook input's {name!r} is {type(value).__name__}, not {kind.__name__}"
        )
    return value


def input_problem(exc: InputError) -> str:
    return (
        f"assay could not read the hook input: {exc}. Nothing was verified. "
        "The hook expects the Stop event's JSON object on stdin."
    )


def output_for(decision: Decision) -> str:
    """What the hook prints for `decision` (empty: nothing, the stop goes through)."""
    if decision.block:
        return json.dumps({"decision": "block", "reason": decision.reason})
    if decision.notice:
        return json.dumps({"systemMessage": decision.notice})
    return ""

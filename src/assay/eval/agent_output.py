"""Usage read from an agent's own standard output, line by line as it arrives.

Two documented formats are recognised by their events (no flag names them):

Claude Code, `claude -p --output-format json` (one result object) or `stream-json`
(one JSON object a line, the same result object last)::

    {"type": "system", "subtype": "init", "model": "...", ...}
    {"type": "assistant", "message": {"id": "msg_1", "usage": {"input_tokens": ...,
        "output_tokens": ..., "cache_creation_input_tokens": ..., "cache_read_input_tokens": ...}}}
    {"type": "result", "subtype": "success", "is_error": false, "num_turns": 3,
        "total_cost_usd": 0.04, "usage": {...same keys...}, ...}

  Assistant messages of one step share their `id` and its usage (count it once); the
  result's usage and `total_cost_usd` are the authoritative totals. Its `input_tokens`
  leave out the cache, so tokens in = input + cache creation + cache read.

Codex CLI, `codex exec --json` (JSONL)::

    {"type": "thread.started", "thread_id": "..."}
    {"type": "turn.completed", "usage": {"input_tokens": ..., "cached_input_tokens": ...,
        "output_tokens": ...}}
    {"type": "turn.failed", "error": {"message": "..."}}   {"type": "error", "message": "..."}

  Usage is per turn and summed; `input_tokens` already include the cached ones. Codex
  reports no cost.

Everything here is the agent's own account, read as untrusted text: a line that is not
JSON, too long, or of the wrong shape is skipped, a count that is not a non-negative
integer is ignored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

CLAUDE_CODE = "claude-code"
CODEX = "codex"
#: A longer line is skipped (a stream-json line holds one message, tool output included).
MAX_LINE_BYTES = 8 * 1024 * 1024
#: The most a count or amount the agent reports is taken at (JSON's exact integers): a
#: larger one, or NaN or infinity, is no usage and broke the float maths of limits and plots.
MAX_REPORTED = 2**53


@dataclass(slots=True)
class Usage:
    """What the agent said it spent so far."""

    tokens_in: int = 0
    tokens_out: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None
    turns: int | None = None
    is_error: bool | None = None
    model: str | None = None

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out

    def telemetry(self, output_format: str) -> dict[str, Any]:
        """As telemetry keys (those `$ASSAY_TELEMETRY` documents, and a few more)."""
        found: dict[str, Any] = {
            "output_format": output_format,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
        }
        for key in ("cost_usd", "turns", "is_error", "model"):
            value = getattr(self, key)
            if value is not None:
                found[key] = value
        return found


@dataclass(slots=True)
class OutputReader:
    """Feed it the agent's stdout in chunks of any size; `usage` is the running total."""

    format: str | None = None
    """`claude-code` or `codex` once an event of either was seen."""
    usage: Usage = field(default_factory=Usage)
    skipped_long_lines: int = 0
    _pending: bytearray = field(default_factory=bytearray)
    _skipping: bool = False
    _steps: dict[str, Usage] = field(default_factory=dict)
    _final: bool = False

    def feed(self, chunk: bytes) -> bool:
        """Read `chunk`; returns whether the usage changed."""
        changed = False
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            changed |= self._line(chunk[start:end])
            start = end + 1
        self._keep(chunk[start:])
        return changed

    def finish(self) -> bool:
        """The last line, when the output did not end with a newline."""
        return self._line(b"")

    def _keep(self, rest: bytes) -> None:
        if self._skipping:
            return
        self._pending += rest
        if len(self._pending) > MAX_LINE_BYTES:
            self._pending.clear()
            self._skipping = True
            self.skipped_long_lines += 1

    def _line(self, tail: bytes) -> bool:
        if self._skipping:
            self._skipping = False
            return False
        line = bytes(self._pending) + tail if self._pending else tail
        self._pending.clear()
        if len(line) > MAX_LINE_BYTES:
            self.skipped_long_lines += 1
            return False
        line = line.strip()
        if not line.startswith(b"{"):
            return False
        try:
            event = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            return False
        return isinstance(event, dict) and self._event(event)

    def _event(self, event: dict[str, Any]) -> bool:
        kind = event.get("type")
        if kind in ("assistant", "result", "system") and self.format != CODEX:
            return self._claude(kind, event)
        if isinstance(kind, str) and self.format != CLAUDE_CODE:
            return self._codex(kind, event)
        return False

    # -- Claude Code ---------------------------------------------------------------------

    def _claude(self, kind: str, event: dict[str, Any]) -> bool:
        if kind == "system":
            if event.get("subtype") == "init" and isinstance(event.get("model"), str):
                self.format = CLAUDE_CODE
                self.usage.model = event["model"][:200]
            return False
        if self._final:
            return False
        if kind == "assistant":
            message = event.get("message")
            if not isinstance(message, dict) or not isinstance(message.get("id"), str):
                return False
            step = _claude_usage(message.get("usage"))
            if step is None:
                return False
            self.format = CLAUDE_CODE
            self._steps[message["id"]] = step  # the same step again: counted once
            self._sum_steps()
            return True
        total = _claude_usage(event.get("usage"))
        cost = reported_amount(event.get("total_cost_usd"))
        if total is None and cost is None and not isinstance(event.get("is_error"), bool):
            return False
        self.format = CLAUDE_CODE
        self._final = True  # the authoritative totals
        if total is not None:
            total.model = self.usage.model
            total.turns = self.usage.turns
            self.usage = total
        self.usage.cost_usd = cost
        self.usage.turns = reported_count(event.get("num_turns"))
        if isinstance(event.get("is_error"), bool):
            self.usage.is_error = event["is_error"]
        return True

    def _sum_steps(self) -> None:
        steps = self._steps.values()
        self.usage.tokens_in = sum(s.tokens_in for s in steps)
        self.usage.tokens_out = sum(s.tokens_out for s in steps)
        self.usage.cache_read_tokens = sum(s.cache_read_tokens for s in steps)
        self.usage.cache_write_tokens = sum(s.cache_write_tokens for s in steps)

    # -- Codex ---------------------------------------------------------------------------

    def _codex(self, kind: str, event: dict[str, Any]) -> bool:
        if kind == "thread.started":
            self.format = CODEX
            return False
        if kind in ("turn.failed", "error"):
            if self.format == CODEX:
                self.usage.is_error = True
            return False
        if kind != "turn.completed":
            return False
        usage = event.get("usage")
        if not isinstance(usage, dict):
            return False
        read = [reported_count(usage.get(k)) for k in ("input_tokens", "cached_input_tokens")]
        written = reported_count(usage.get("output_tokens"))
        if read[0] is None and written is None:
            return False
        self.format = CODEX
        self.usage.tokens_in += read[0] or 0
        self.usage.cache_read_tokens += read[1] or 0
        self.usage.tokens_out += written or 0
        self.usage.turns = (self.usage.turns or 0) + 1
        return True


def _claude_usage(value: object) -> Usage | None:
    if not isinstance(value, dict):
        return None
    counts = {
        key: reported_count(value.get(key))
        for key in (
            "input_tokens",
            "output_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        )
    }
    if counts["input_tokens"] is None and counts["output_tokens"] is None:
        return None
    fresh = counts["input_tokens"] or 0
    written = counts["cache_creation_input_tokens"] or 0
    read = counts["cache_read_input_tokens"] or 0
    return Usage(
        tokens_in=fresh + written + read,
        tokens_out=counts["output_tokens"] or 0,
        cache_read_tokens=read,
        cache_write_tokens=written,
    )


def reported_count(value: object) -> int | None:
    """`value` as a count of the agent's account, None when it is no such count."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_REPORTED:
        return None
    return value


def reported_amount(value: object) -> float | None:
    """`value` as an amount (dollars) of the agent's account, None when it is no such
    amount (NaN and infinity compare false here)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0 <= value <= MAX_REPORTED else None

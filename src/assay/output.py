"""Bounded capture of a process's output stream: head, tail, byte count, truncation flag."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: Bytes kept from the start of each stream (compiler diagnostics: the first error is the cause).
HEAD_BYTES = 256 * 1024
#: Bytes kept from the end of each stream (test runners: the summary is at the end).
TAIL_BYTES = 256 * 1024
#: Put between head and tail when bytes in the middle were dropped.
TRUNCATION_MARKER = "\n[... assay: {dropped} bytes omitted ...]\n"


@dataclass(frozen=True, slots=True)
class CapturedOutput:
    """What was kept of one output stream."""

    head: str
    """Decoded first bytes of the stream (replacement characters for bad bytes)."""
    tail: str
    """Decoded last bytes, when the stream was longer than the head; else empty."""
    bytes: int
    """Total bytes the process wrote to the stream, kept or not."""
    truncated: bool
    """True when bytes in the middle were dropped: never silent."""
    omitted: int = 0
    """How many bytes were dropped between head and tail."""

    @property
    def text(self) -> str:
        """Head and tail joined, with a marker where bytes were dropped."""
        if not self.omitted:  # also a stream read back from JSON: its marker is in head
            return self.head + self.tail
        return self.head + TRUNCATION_MARKER.format(dropped=self.omitted) + self.tail

    def to_dict(self) -> dict[str, object]:
        return {"text": self.text, "truncated": self.truncated, "bytes": self.bytes}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CapturedOutput:
        text = str(data.get("text", ""))
        return cls(
            head=text,
            tail="",
            bytes=int(data.get("bytes", len(text))),
            truncated=bool(data.get("truncated", False)),
        )

    @classmethod
    def empty(cls) -> CapturedOutput:
        return cls(head="", tail="", bytes=0, truncated=False)


class BoundedBuffer:
    """Accumulates a byte stream in fixed memory: the first `head_limit` bytes and
    the last `tail_limit` bytes, plus the total count."""

    __slots__ = ("_head", "_tail", "_total", "head_limit", "tail_limit")

    def __init__(self, head_limit: int = HEAD_BYTES, tail_limit: int = TAIL_BYTES) -> None:
        if head_limit < 0 or tail_limit < 0:
            raise ValueError("buffer limits must be >= 0")
        self.head_limit = head_limit
        self.tail_limit = tail_limit
        self._head = bytearray()
        self._tail = bytearray()
        self._total = 0

    @property
    def total(self) -> int:
        return self._total

    def feed(self, chunk: bytes) -> None:
        self._total += len(chunk)
        room = self.head_limit - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if not chunk or self.tail_limit == 0:
            return
        self._tail += chunk
        # Trim lazily (at twice the limit) so trimming costs amortized O(1) per byte.
        if len(self._tail) > 2 * self.tail_limit:
            del self._tail[: len(self._tail) - self.tail_limit]

    def result(self) -> CapturedOutput:
        tail = bytes(self._tail[-self.tail_limit :]) if self.tail_limit else b""
        kept = len(self._head) + len(tail)
        return CapturedOutput(
            head=self._head.decode("utf-8", errors="replace"),
            tail=tail.decode("utf-8", errors="replace"),
            bytes=self._total,
            truncated=kept < self._total,
            omitted=self._total - kept,
        )

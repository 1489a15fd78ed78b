"""Bounded capture of a process's output stream: head, tail, byte count, truncation flag,
and the result lines of the dropped middle."""

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
#: ... and what follows it when result lines of that middle were kept.
KEPT_MARKER = "[... assay: of those, the {lines} lines that report a result ...]\n"
#: The most bytes of result lines kept from the dropped middle of one stream.
MIDDLE_BYTES = 512 * 1024
#: The longest partial line carried from one dropped piece to the next.
_LONGEST_LINE = 64 * 1024
#: Lines of the dropped middle kept for the parsers: `go test -json`'s test and package
#: results and the `--- FAIL` it prints. go prints every event of a long run as it goes
#: (go-cmp: 700 KB), so without these a failing test in the middle went unnamed and the
#: counts came out short. Found with `bytes.find`, many times faster than a pattern over
#: a stream whose every line has an `"Action":` (go's encoding/json writes no spaces).
_GO_EVENT = b'"Action":"'
_RESULT_MARKS = (b'"Action":"pass"', b'"Action":"fail"', b'"Action":"skip"', b'"Output":"--- FAIL')


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
    middle: str = ""
    """The result lines (`_RESULT_LINE`) of the dropped bytes, in order, whole lines each."""

    @property
    def text(self) -> str:
        """Head and tail joined, with a marker where bytes were dropped and the result
        lines kept from them."""
        if not self.omitted:  # also a stream read back from JSON: its marker is in head
            return self.head + self.tail
        marker = TRUNCATION_MARKER.format(dropped=self.omitted)
        if self.middle:
            marker += KEPT_MARKER.format(lines=self.middle.count("\n")) + self.middle
        return self.head + marker + self.tail

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

    __slots__ = (
        *("_dropping", "_head", "_middle", "_partial", "_reading", "_tail", "_total"),
        *("head_limit", "tail_limit"),
    )

    def __init__(self, head_limit: int = HEAD_BYTES, tail_limit: int = TAIL_BYTES) -> None:
        if head_limit < 0 or tail_limit < 0:
            raise ValueError("buffer limits must be >= 0")
        self.head_limit = head_limit
        self.tail_limit = tail_limit
        self._head = bytearray()
        self._tail = bytearray()
        self._total = 0
        self._middle = bytearray()
        self._dropping = False
        self._reading = False
        # The line the dropped bytes end inside of, from its start; None: its start is gone.
        self._partial: bytearray | None = None

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
            cut = len(self._tail) - self.tail_limit
            self._drop(cut)
            del self._tail[:cut]

    def _drop(self, size: int) -> None:
        """Keep the result lines of the tail's first `size` bytes, the next bytes of the
        omitted middle; the line they end inside of is carried to the next piece."""
        if not self._dropping:
            self._dropping = True
            # Only a stream of go's events is read for results: every other flood of lines
            # passes at its old speed (a 1 GiB flood would take 1.9 s instead of 0.4 s).
            self._reading = _GO_EVENT in self._head
            # The first dropped byte may continue the head's last line, whose start was
            # kept there: such a fragment is no line of its own.
            at_line_start = not self._head or self._head.endswith(b"\n")
            self._partial = bytearray() if at_line_start else None
        if not self._reading:
            return
        dropped = self._tail[:size]
        if self._partial is None:  # inside a line whose start is gone: skip to the next
            newline = dropped.find(b"\n")
            text = bytes(dropped[newline + 1 :]) if newline >= 0 else b""
        else:
            text = bytes(self._partial) + dropped
        end = text.rfind(b"\n") + 1
        if end and len(self._middle) < MIDDLE_BYTES:
            self._keep_results(text, end)
        rest = text[end:]
        self._partial = bytearray(rest) if len(rest) <= _LONGEST_LINE else None

    def _keep_results(self, text: bytes, end: int) -> None:
        """Append the whole lines of `text[:end]` that report a result, up to the cap."""
        lines: set[int] = set()
        for mark in _RESULT_MARKS:
            at = text.find(mark, 0, end)
            while at >= 0:
                lines.add(text.rfind(b"\n", 0, at) + 1)
                at = text.find(mark, at + len(mark), end)
        for begin in sorted(lines):
            stop = text.find(b"\n", begin, end) + 1
            if len(self._middle) + stop - begin > MIDDLE_BYTES:
                return
            self._middle += text[begin:stop]

    def result(self) -> CapturedOutput:
        tail = bytes(self._tail[-self.tail_limit :]) if self.tail_limit else b""
        kept = len(self._head) + len(tail)
        unread = len(self._tail) - len(tail)
        if unread > 0:  # dropped from the tail but not yet read for results
            self._drop(unread)
            del self._tail[:unread]
        return CapturedOutput(
            head=self._head.decode("utf-8", errors="replace"),
            tail=tail.decode("utf-8", errors="replace"),
            bytes=self._total,
            truncated=kept < self._total,
            omitted=self._total - kept,
            middle=self._middle.decode("utf-8", errors="replace"),
        )

"""The result lines of a stream's dropped middle: kept whole, in order, up to a cap.

A reference answer is computed from the whole stream (which lines lie wholly in the part
neither head nor tail kept), and the buffer, fed in pieces of every size, must give it."""

from __future__ import annotations

import json
import random
import sys

import pytest

from assay.output import MIDDLE_BYTES, BoundedBuffer
from assay.process import run_process

HEAD = TAIL = 1000


def _event(action: str, test: str, output: str | None = None) -> bytes:
    event = {"Action": action, "Package": "p", "Test": test}
    if output is not None:
        event["Output"] = output
    return json.dumps(event, separators=(",", ":")).encode() + b"\n"


def _stream(seed: int, lines: int) -> bytes:
    rng = random.Random(seed)
    out = []
    for n in range(lines):
        roll = rng.random()
        if roll < 0.2:
            out.append(_event(rng.choice(["pass", "fail", "skip"]), f"Test{n}"))
        elif roll < 0.25:
            out.append(_event("output", f"Test{n}", f"--- FAIL: Test{n} (0.00s)\n"))
        elif roll < 0.3:
            out.append(b"x" * rng.randrange(0, 3000) + b"\n")  # longer than the head
        else:
            out.append(_event("output", f"Test{n}", "    log line\n"))
    return b"".join(out)


def _expected_middle(stream: bytes, head: int, tail: int) -> bytes:
    """The result lines wholly inside `stream[head:len - tail]`, each starting at a line."""
    start, end = head, len(stream) - tail
    kept = []
    offset = 0
    for line in stream.splitlines(keepends=True):
        begin, offset = offset, offset + len(line)
        at_a_line_start = begin == 0 or stream[begin - 1 : begin] == b"\n"
        inside = begin >= start and offset <= end and at_a_line_start
        if inside and (
            b'"Action":"pass"' in line
            or b'"Action":"fail"' in line
            or b'"Action":"skip"' in line
            or b'"Output":"--- FAIL' in line
        ):
            kept.append(line)
    return b"".join(kept)


@pytest.mark.parametrize("seed", range(12))
def test_the_dropped_middle_keeps_exactly_its_whole_result_lines(seed: int) -> None:
    stream = _stream(seed, 400)
    rng = random.Random(seed)
    buffer = BoundedBuffer(HEAD, TAIL)
    at = 0
    while at < len(stream):
        size = rng.choice([1, 7, 100, 1500, 5000])
        buffer.feed(stream[at : at + size])
        at += size
    captured = buffer.result()
    assert captured.truncated
    assert captured.head.encode() == stream[:HEAD]
    assert captured.tail.encode() == stream[-TAIL:]
    assert captured.middle.encode() == _expected_middle(stream, HEAD, TAIL)
    assert captured.middle, "the stream had result lines in its middle"
    assert "lines that report a result" in captured.text
    assert captured.text.index(captured.middle) < captured.text.index(captured.tail)


def test_a_stream_kept_whole_has_no_middle() -> None:
    buffer = BoundedBuffer(HEAD, TAIL)
    buffer.feed(_event("pass", "TestA") * 10)
    captured = buffer.result()
    assert not captured.truncated and captured.middle == ""


def test_the_middle_is_capped_and_a_flood_of_results_costs_no_more() -> None:
    buffer = BoundedBuffer(HEAD, TAIL)
    line = _event("pass", "TestA")
    for _ in range(3 * MIDDLE_BYTES // len(line)):
        buffer.feed(line)
    captured = buffer.result()
    assert MIDDLE_BYTES - len(line) < len(captured.middle) <= MIDDLE_BYTES
    assert captured.middle.endswith("\n")


def test_a_real_process_keeps_the_results_printed_in_its_middle() -> None:
    """A failing test's events between 600 KB of logs: head and tail hold only logs."""
    code = (
        "import json, sys\n"
        "dump = lambda event: json.dumps(event, separators=(',', ':'))\n"
        "log = dump({'Action': 'output', 'Test': 'TestLog', 'Output': 'x' * 100})\n"
        "fail = dump({'Action': 'fail', 'Package': 'p', 'Test': 'TestWrong'})\n"
        "for i in range(6000):\n"
        "    print(fail if i == 3000 else log)\n"
    )
    result = run_process([sys.executable, "-c", code], timeout=60)
    assert result.stdout.truncated
    assert "TestWrong" not in result.stdout.head + result.stdout.tail
    assert result.stdout.middle.count("\n") == 1
    assert '"Test":"TestWrong"' in result.stdout.text


def test_only_a_stream_of_go_events_is_read_for_results() -> None:
    """A log that merely mentions an event later on is no event stream: its head has none."""
    buffer = BoundedBuffer(HEAD, TAIL)
    buffer.feed(b"plain log line\n" * 200)
    buffer.feed(_event("fail", "TestX") * 200)
    buffer.feed(b"plain log line\n" * 200)
    captured = buffer.result()
    assert captured.truncated and captured.middle == ""

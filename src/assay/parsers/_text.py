"""Small helpers every parser shares: combined output, ANSI stripping, paths, JSON, counts."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from typing import Any

from assay.evidence import TestCase, TestCounts
from assay.process import ProcessResult

#: Colour and cursor codes, character set designations (`ESC ( B`, which curses' sgr0 sends
#: before `ESC [ m`: mypy's colours under a CI's FORCE_COLOR), and operating system commands
#: (Biome's hyperlinks to its rules: `ESC ] 8 ; ; URL ESC \`), each ended by BEL or ST.
_ANSI = re.compile(
    r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()*+][0-9A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
)


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


#: Select Graphic Rendition only: colour and weight, nothing a terminal does beyond them.
_COLOURS = re.compile(r"\x1b\[[0-9;]*m")


def strip_colours(text: str) -> str:
    """`text` without its colour codes; any other control sequence (a title, the clipboard)
    is kept, to be shown escaped as the evidence it is."""
    return _COLOURS.sub("", text)


def combined(result: ProcessResult) -> str:
    """stdout then stderr, colour codes removed: where a text parser looks."""
    return strip_ansi(result.stdout.text + "\n" + result.stderr.text)


def relative(file: str | None, cwd: str) -> str | None:
    """`file` relative to the directory the tool ran in when it lies inside it, else as given.

    Tools disagree (ruff and eslint print absolute paths, mypy relative ones); one form
    lets a reader match a diagnostic to a file.
    """
    if not file:
        return None
    if os.path.isabs(file) and cwd:
        try:
            rel = os.path.relpath(file, cwd)
        except ValueError:
            return file
        if not rel.startswith(".."):
            return rel
        return file
    return file.removeprefix("./")


def json_lines(text: str) -> Iterator[dict[str, Any]]:
    """Every line of `text` that is a JSON object; other lines are skipped."""
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            yield value


def json_document(text: str) -> Any:
    """The JSON value that makes up `text` (leading noise before the first bracket ignored), or None."""
    for opener in ("[", "{"):
        start = text.find(opener)
        if start < 0:
            continue
        try:
            return json.loads(text[start:])
        except (ValueError, RecursionError):
            continue
    return None


def json_array_items(text: str) -> Iterator[Any]:
    """The items of the JSON array `text` holds (noise before its `[` ignored), one by one:
    of an array cut short (output past the capture's bound), the items before the cut."""
    start = text.find("[")
    if start < 0:
        return
    decoder = json.JSONDecoder()
    at = _skip_space(text, start + 1)
    while at < len(text) and text[at] != "]":
        try:
            item, at = decoder.raw_decode(text, at)
        except ValueError:
            return
        yield item
        at = _skip_space(text, at)
        if text[at : at + 1] == ",":
            at = _skip_space(text, at + 1)


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def to_int(value: object) -> int | None:
    """`value` as an int when it is one (or a string of one); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    # isdecimal, not isdigit: "²" is a digit to str.isdigit() but int() refuses it.
    if isinstance(value, str) and value.strip().isdecimal():
        return int(value)
    return None


_COUNT_KEYS = {
    "passed": "passed",
    "failed": "failed",
    "error": "errors",
    "skipped": "skipped",
    "xfailed": "skipped",  # ran and failed as marked: neither a pass nor a failure
}


def count_cases(cases: Iterable[TestCase], source: str, *, errors: int = 0) -> TestCounts:
    """Counts by outcome of per-test results, each test counted once; `errors` adds
    failures no test case stands for (a test file that would not load)."""
    counts = {"passed": 0, "failed": 0, "errors": errors, "skipped": 0}
    for case in cases:
        counts[_COUNT_KEYS[case.outcome]] += 1
    return TestCounts(**counts, source=source)

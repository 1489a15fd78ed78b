"""Small helpers every parser shares: combined output, ANSI stripping, paths, JSON lines."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from typing import Any

from assay.process import ProcessResult

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


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
        except ValueError:
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
        except ValueError:
            continue
    return None


def to_int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None

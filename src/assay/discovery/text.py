"""Small pure helpers for finding things in config text: line numbers, JSON with comments."""

from __future__ import annotations

import json
import re
from typing import Any


def line_at(text: str, offset: int) -> int:
    """The 1-based line of a character offset."""
    return text.count("\n", 0, max(offset, 0)) + 1


def line_of(text: str, pattern: str, *, after: int = 0) -> int | None:
    """The 1-based line of the first regex match at or after character `after`, or None."""
    match = re.compile(pattern, re.MULTILINE).search(text, after)
    return line_at(text, match.start()) if match else None


def json_error(source: str, exc: Exception) -> str:
    """A one-line message for a JSON parse failure, naming the file and position."""
    if isinstance(exc, json.JSONDecodeError):
        return f"{source}: not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
    if isinstance(exc, RecursionError):
        return f"{source}: not valid JSON: nested too deeply"
    return f"{source}: not valid JSON: {exc}"


def load_json(text: str) -> Any:
    """Parse JSON; ValueError or RecursionError for malformed input."""
    return json.loads(text)


_JSONC_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def load_jsonc(text: str) -> Any:
    """Parse JSON with comments and trailing commas (tsconfig.json, pyrightconfig.json)."""
    stripped = _JSONC_TOKEN.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)
    return json.loads(_TRAILING_COMMA.sub(r"\1", stripped))

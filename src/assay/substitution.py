"""Placeholders filled in within a bound: a project's configuration names its own values
(a Makefile's `$(V)`, tox's `{[vars]a}`), and a value that names another many times over
grows as a power of the passes that fill it in. Pure."""

from __future__ import annotations

import re
from collections.abc import Callable

#: The most characters a filled-in value may have: far more than any command or list of
#: targets, far less than the gigabytes a 4 KiB Makefile of `V = $(V)$(V)...` fills in to.
MAX_FILLED_CHARS = 1 << 16


def bounded_sub(
    pattern: re.Pattern[str],
    fill: Callable[[re.Match[str]], str],
    text: str,
    limit: int = MAX_FILLED_CHARS,
) -> str | None:
    """`pattern.sub(fill, text)`, or None once it would pass `limit` characters: what is
    filled is counted as it is made, so no pass makes more than the bound."""
    pieces: list[str] = []
    size = at = 0
    for match in pattern.finditer(text):
        value = fill(match)
        size += match.start() - at + len(value)
        if size > limit:
            return None
        pieces += (text[at : match.start()], value)
        at = match.end()
    if size + len(text) - at > limit:
        return None
    pieces.append(text[at:])
    return "".join(pieces)


__all__ = ["MAX_FILLED_CHARS", "bounded_sub"]

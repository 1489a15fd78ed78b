"""The lines of a Go main package's `func main` body: where a command ends itself.

A `package main` with tests is built into a test binary whose `main` is the testing
package's: the package's own `main` never runs there, so an `os.Exit` in it ends no test
run. Everything else the package holds does run before its tests (an `init`, a
package-level `var _ = f()`, a helper either of them calls), and an exit there ends the
binary 0 before any test reports. So a `package main` is told apart by its package clause
as the compiler reads it (not a line of a raw string that says `package main`), and only
its `func main`'s lines are left to it, found by the braces Go counts (none inside a
string, a rune or a comment).
"""

from __future__ import annotations

import re

_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
#: `func main() {` as gofmt writes it; a main spelled otherwise is simply not left alone.
_MAIN = re.compile(r"func\s+main\s*\(\s*\)\s*\{")
_LINE_REST = re.compile(r"[ \t]*(?://[^\n]*)?(?:\n|\Z)")


def main_body_lines(text: str) -> frozenset[int]:
    """The 1-based lines (counted in `\\n`s) wholly inside a `func main` of `text`, its
    opening and closing lines included where nothing else of the code shares them; none
    when `text`'s package is not `main`."""
    package: str | None = None
    expect_name = False
    depth = 0
    opened: list[tuple[int, int]] = []  # (depth, where `func` is) of each open `func main`
    bodies: list[tuple[int, int]] = []
    at, end = 0, len(text)
    while at < end:
        char = text[at]
        if text.startswith("//", at):
            at = _after(text, "\n", at + 2)
        elif text.startswith("/*", at):
            at = _after(text, "*/", at + 2)
        elif char in "\"'":
            at = _after_quoted(text, char, at + 1)
        elif char == "`":
            at = _after(text, "`", at + 1)
        elif char == "{":
            depth += 1
            at += 1
        elif char == "}":
            if opened and depth == opened[-1][0]:
                bodies.append((opened.pop()[1], at))
            depth -= 1
            at += 1
        elif match := _IDENTIFIER.match(text, at):
            word = match.group()
            if package is None:
                if expect_name:
                    package = word
                    if package != "main":
                        return frozenset()
                elif word != "package":
                    return frozenset()  # no package clause first: not Go the compiler reads
                expect_name = True
            elif word == "func" and depth == 0 and (main := _MAIN.match(text, at)):
                depth += 1
                opened.append((depth, at))
                at = main.end()
                continue
            at = match.end()
        else:
            at += 1
    return frozenset(line for start, close in bodies for line in _whole_lines(text, start, close))


def _after(text: str, closing: str, at: int) -> int:
    found = text.find(closing, at)
    return len(text) if found < 0 else found + len(closing)


def _after_quoted(text: str, quote: str, at: int) -> int:
    """Past a string or rune literal: a backslash escapes the next character, and a line
    end ends it (the compiler refuses the file then, which runs nothing)."""
    while at < len(text):
        char = text[at]
        if char == "\\":
            at += 2
            continue
        at += 1
        if char == quote or char == "\n":
            break
    return at


def _whole_lines(text: str, start: int, close: int) -> range:
    """The lines from `func main` at `start` to its closing brace at `close`, less the first
    when code precedes `func` on it and the last when code follows `}` on it."""
    first = text.count("\n", 0, start) + 1
    last = text.count("\n", 0, close) + 1
    line_start = text.rfind("\n", 0, start) + 1
    if text[line_start:start].strip(" \t"):
        first += 1
    if not _LINE_REST.match(text, close + 1):
        last -= 1
    return range(first, last + 1)

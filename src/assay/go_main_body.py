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
from dataclasses import dataclass

_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
#: A top-level function's name: declared (a method's after its receiver), or a variable
#: given a function literal (`var leave = func(code int) { ... }`).
_DECLARED = re.compile(r"func\s*(\([^()]*\)\s*)?([A-Za-z_]\w*)|var\s+([A-Za-z_]\w*)\s*=\s*func\b")
_LINE_REST = re.compile(r"[ \t]*(?://[^\n]*)?(?:\n|\Z)")


@dataclass(frozen=True, slots=True)
class Function:
    """A top-level function of a Go file: its name and the lines it spans."""

    name: str
    method: bool
    first: int
    last: int
    """Its lines, 1-based, from its `func` to its body's closing brace."""
    whole: range
    """Those of its lines that nothing else of the code shares (`_whole_lines`)."""


def package_clause(text: str) -> str | None:
    """The package `text` declares, as the compiler reads it: the first words past the
    comments (not a line of a raw string that says `package main`)."""
    return _read(text)[0]


def functions(text: str) -> list[Function]:
    """The top-level functions of `text`, found by the braces Go counts."""
    return _read(text)[1]


def main_body_lines(text: str) -> frozenset[int]:
    """The 1-based lines (counted in `\\n`s) wholly inside a `func main` of `text`, its
    opening and closing lines included where nothing else of the code shares them; none
    when `text`'s package is not `main`."""
    package, found = _read(text)
    if package != "main":
        return frozenset()
    return frozenset(line for f in found if f.name == "main" and not f.method for line in f.whole)


def _read(text: str) -> tuple[str | None, list[Function]]:
    package: str | None = None
    expect_name = False
    depth = parens = 0
    pending: tuple[str, bool, int] | None = None  # a function whose body is yet to open
    opened: list[tuple[int, str, bool, int]] = []  # (depth, name, method, start)
    found: list[Function] = []
    at, end = 0, len(text)
    while at < end:
        char = text[at]
        if text.startswith("//", at):
            at = _after(text, "\n", at + 2)
            continue
        if text.startswith("/*", at):
            at = _after(text, "*/", at + 2)
            continue
        at += 1
        if char in "\"'":
            at = _after_quoted(text, char, at)
        elif char == "`":
            at = _after(text, "`", at)
        elif char in "([":
            parens += 1
        elif char in ")]":
            parens -= 1
        elif char == "{":
            depth += 1
            if pending is not None and depth == 1 and parens == 0:
                opened.append((depth, *pending))
                pending = None
        elif char == "}":
            if opened and depth == opened[-1][0]:
                _, name, method, start = opened.pop()
                first, last = (text.count("\n", 0, p) + 1 for p in (start, at - 1))
                whole = _whole_lines(text, start, at - 1)
                found.append(Function(name, method, first, last, whole))
            depth -= 1
        elif match := _IDENTIFIER.match(text, at - 1):
            word = match.group()
            at = match.end()
            if package is None:
                if expect_name:
                    package = word
                elif word != "package":
                    return None, []  # no package clause first: not Go the compiler reads
                expect_name = True
            elif depth == 0 and parens == 0 and word in ("func", "var", "type", "const"):
                declared = _DECLARED.match(text, match.start())
                pending = None  # a declaration without a body (`func f()`) ends here
                if declared is not None:
                    name = declared.group(2) or declared.group(3)
                    pending = (name, declared.group(1) is not None, match.start())
                    at = declared.end()
    return package, found


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

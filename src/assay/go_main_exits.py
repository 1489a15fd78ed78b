"""Exits a Go main package's tests can reach through the package's own functions.

A main package's test binary runs its inits and initialisers, never its `func main`
(`assay.go_main_body`). A command may keep an exit in a helper `main` calls
(`func leave(code int) { os.Exit(code) }`): the project's own, which its tests never
reach. A change that adds `func init() { if forge() { leave(0) } }` spells no exit, yet
ends the binary 0 before any test runs. So in a main package with tests, the functions
that end the process outside `main` are found, with the functions that call them, across
the package's files, and a line the change adds outside `main` that calls one is a signal.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections import Counter
from pathlib import Path

from assay.code_signals import (
    FILE_MAX_BYTES,
    GO,
    GO_EXIT,
    Budget,
    Reach,
    comment_pattern,
    excerpt,
    line_pieces,
)
from assay.go_main_body import Function, functions, main_body_lines, package_clause
from assay.untrusted_files import read_untrusted

#: The most files of one package read for the functions that end the process.
PACKAGE_FILES_MAX = 64
#: Code before a name that declares it rather than calls it.
_DECLARES = re.compile(r"(?:\bfunc\s*(?:\([^()]*\)\s*)?|\bvar\s+)\Z")


def reached_exits(change: Path, rel: str, old: str, new: str, budget: Budget) -> list[Reach]:
    """A line `new` adds to `old` (the base's `rel`) outside `func main` that calls a
    function of its main package that ends the process outside `main`, quoted."""
    if package_clause(new) != "main" or not rel.endswith(".go") or rel.endswith("_test.go"):
        return []
    sources = _package_sources(change, rel, new, budget)
    if sources is None:
        return []
    ending = _ending_functions(sources)
    if not ending:
        return []
    names = re.compile(r"\b(" + "|".join(map(re.escape, sorted(ending))) + r")\b")
    inside_main = main_body_lines(new)
    before = Counter(piece for _, piece in line_pieces(old))
    found: list[Reach] = []
    for number, piece in line_pieces(new):
        if before[piece] > 0:
            before[piece] -= 1
            continue
        if number in inside_main or comment_pattern(GO).match(piece):
            continue
        call = next((m for m in names.finditer(piece) if not _declares(piece, m.start())), None)
        if call is None:
            continue
        where = ending[call.group(1)]
        what = f"calls {call.group(1)}, which ends the process outside a command's main ({where})"
        if found:
            found[0] = Reach(
                found[0].path, found[0].line, found[0].excerpt, found[0].what, found[0].more + 1
            )
        else:
            found.append(Reach(rel, number, excerpt(piece, names), what))
    return found


def _declares(piece: str, at: int) -> bool:
    return _DECLARES.search(piece[:at]) is not None


def _package_sources(change: Path, rel: str, new: str, budget: Budget) -> dict[str, str] | None:
    """The main package's non-test files beside `rel` (`rel` as `new`), by path; None
    when it has no test file, so no test binary runs its code."""
    directory = posixpath.dirname(rel)
    try:
        with os.scandir(change / directory if directory else change) as entries:
            names = sorted(
                e.name
                for e in entries
                if e.name.endswith(".go") and e.is_file(follow_symlinks=False)
            )
    except OSError:
        return None
    if not any(name.endswith("_test.go") for name in names):
        return None
    sources = {rel: new}
    for name in [n for n in names if not n.endswith("_test.go")][:PACKAGE_FILES_MAX]:
        path = posixpath.join(directory, name)
        if path == rel or budget.left <= 0:
            continue
        data = read_untrusted(change, path, limit=min(FILE_MAX_BYTES, budget.left))
        if isinstance(data, bytes):
            budget.left -= len(data)
            text = data.decode("utf-8", errors="replace")
            if package_clause(text) == "main":
                sources[path] = text
    return sources


def _ending_functions(sources: dict[str, str]) -> dict[str, str]:
    """Name -> `path:line` of the exit it reaches, for each top-level function of the
    package that ends the process outside `main`, or calls one that does."""
    exit_line = re.compile(GO_EXIT.pattern)
    comment = comment_pattern(GO)
    bodies: list[tuple[Function, str]] = []
    ending: dict[str, str] = {}
    for path, text in sources.items():
        lines = text.split("\n")
        for function in functions(text):
            body = "\n".join(lines[function.first - 1 : function.last])
            bodies.append((function, body))
            if function.name == "main" and not function.method:
                continue  # its exits are the command's own; a call of main is matched apart
            for offset, line in enumerate(body.split("\n")):
                stripped = line.strip()
                if exit_line.search(stripped) and not comment.match(stripped):
                    ending.setdefault(function.name, f"{path}:{function.first + offset}")
                    break
    grown = bool(ending)
    while grown:
        grown = False
        names = re.compile(r"\b(" + "|".join(map(re.escape, sorted(ending))) + r")\b")
        for function, body in bodies:
            if function.name in ending or function.name in ("init", "main"):
                continue
            call = next((m for m in names.finditer(body) if not _declares(body, m.start())), None)
            if call is not None:
                ending[function.name] = ending[call.group(1)]
                grown = True
    return ending

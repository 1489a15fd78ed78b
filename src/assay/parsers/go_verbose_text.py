"""The test a `go test -v` run printed as text (behind make, `GOFLAGS=-v`) was running when
assay's deadline stopped it: started (`=== RUN   TestX`), never ended (`--- PASS: TestX`),
with the line of the project's code the goroutine dump go prints on SIGQUIT shows it on.
pkg/errors' `make test` with a loop in Error() was stopped as "a hang" and named nothing."""

from __future__ import annotations

import re

from assay.evidence import TestCase
from assay.parsers.go_stacks import stuck_in

_STARTED = re.compile(r"^=== RUN\s+(\S+)\s*$", re.MULTILINE)
_ENDED = re.compile(r"^\s*--- (?:PASS|FAIL|SKIP): (\S+)", re.MULTILINE)
#: A frame of the goroutine dump naming a test function: its package is before the name.
_FRAME = r"^(\S+)\.{test}\("


def running_tests(text: str, cwd: str, import_path: str | None = None) -> tuple[str, ...]:
    """The tests started and not ended, each with where the dump shows it stuck (`TestX
    (stuck at errors.go:127 in github.com/pkg/errors.(*fundamental).Error)`); a parent
    waiting on a running subtest is left out. `import_path`: where a GOPATH link put the
    tree, whose files the dump names below it."""
    started = list(dict.fromkeys(_STARTED.findall(text)))
    ended = set(_ENDED.findall(text))
    unended = [t for t in started if t not in ended]
    running = [t for t in unended if not any(o.startswith(t + "/") for o in unended)]
    if import_path:
        text = re.sub(rf"\S*/src/{re.escape(import_path)}/", (cwd or ".") + "/", text)
    named = []
    for test in running:
        frame = re.search(_FRAME.format(test=re.escape(test.split("/", 1)[0])), text, re.MULTILINE)
        place = stuck_in(text, frame[1], test, cwd) if frame else None
        named.append(f"{test} (stuck at {place})" if place else test)
    return tuple(named)


_FAILED = re.compile(r"^(?P<indent>\s*)--- FAIL: (?P<name>\S+)", re.MULTILINE)
#: A package's closing line, after its tests' lines: `FAIL\texample.com/calc\t0.01s`.
_PACKAGE_END = re.compile(r"^(?:FAIL|ok  )\t(\S+)", re.MULTILINE)
_MESSAGE_CHARS = 500


def failed_tests(text: str) -> tuple[TestCase, ...]:
    """The tests a `go test` run printed as text (behind make) marked `--- FAIL`, each named
    as go test -json's are (`package.TestX`) with what it logged: goldmark's `make test`
    with a changed tag was "2 of 689 tests failed" naming neither."""
    cases = []
    for failed in _FAILED.finditer(text):
        name = failed["name"]
        package = _PACKAGE_END.search(text, failed.end())
        cases.append(
            TestCase(
                name=f"{package[1]}.{name}" if package else name,
                outcome="failed",
                message=_logged(text, name, failed.start(), failed.end(), failed["indent"]),
            )
        )
    return tuple(cases)


def _logged(text: str, name: str, start: int, end: int, indent: str) -> str | None:
    """What test `name` logged: with -v, between its `=== RUN` and its `--- FAIL` line;
    without, the lines indented below that line."""
    run = text.rfind(f"=== RUN   {name}\n", 0, start)
    if run != -1:
        body = text[text.index("\n", run) + 1 : start]
    else:
        below = re.match(rf"(?:{re.escape(indent)}\s+(?!--- )[^\n]*\n|\n)*", text[end + 1 :])
        body = below[0] if below else ""
    lines = [
        line for line in body.splitlines() if line.strip() and not line.lstrip().startswith("=== ")
    ]
    logged = "\n".join(lines)[-_MESSAGE_CHARS:]
    return logged or None

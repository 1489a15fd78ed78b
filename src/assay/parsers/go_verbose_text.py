"""The test a `go test -v` run printed as text (behind make, `GOFLAGS=-v`) was running when
assay's deadline stopped it: started (`=== RUN   TestX`), never ended (`--- PASS: TestX`),
with the line of the project's code the goroutine dump go prints on SIGQUIT shows it on.
pkg/errors' `make test` with a loop in Error() was stopped as "a hang" and named nothing."""

from __future__ import annotations

import re

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

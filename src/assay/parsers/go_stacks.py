"""Where a hung Go test was stuck: the innermost frame of the project's code in the
goroutine that ran it, from the goroutine dump of go test's own `-timeout` panic, or of
the SIGQUIT assay sends the test binary at its own deadline (`assay.stack_dumps`).

A test often waits on goroutines it started (a worker pool, as BurntSushi/toml's toml-test
runner is): the one of those still running or runnable is the loop that hung, and is
named before the test's own goroutine, which only waits for it. A test of an external
test package (`package calc_test`) runs as `example.com/calc_test.TestX`.

The dump is output of the test binary, the code under test's to shape: it is read line by
line within a bound, and gives only a place to name beside the hung test.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

#: "goroutine 7 [sleep]:" begins a goroutine's stack.
_GOROUTINE = re.compile(r"^goroutine (?P<id>\d+) \[(?P<state>[^\]]*)\]:$")
#: A frame's function line, "example.com/calc.TestSlow(0x0?)" or a method's,
#: "example.com/calc.(*Lexer).Next(0xc000012345)", and its place below it,
#: "\t/w/calc/calc_test.go:14 +0x25"; no control characters.
_FUNCTION = re.compile(
    r"^(?P<func>[^\s()\x00-\x1f]{1,300}?"
    r"(?:\(\*?[^\s()\x00-\x1f]{1,200}\)\.[^\s()\x00-\x1f]{1,200})?)"
    r"\(.*\)$"
)
#: "created by example.com/calc.Run" (Go 1.21 adds " in goroutine 7"): who started it.
_CREATED_BY = re.compile(
    r"^created by (?P<func>[^\s\x00-\x1f]{1,500})(?: in goroutine (?P<parent>\d+))?$"
)
#: A SIGQUIT's dump adds each frame's registers: " fp=0xc000036770 sp=0xc000036768 pc=0x4f4fc2".
_PLACE = re.compile(
    r"^\t(?P<file>/[^\x00-\x1f]{1,1024}?\.go):(?P<line>\d{1,7})(?: \+0x[0-9a-f]+)?"
    r"(?: fp=0x[0-9a-f]+ sp=0x[0-9a-f]+ pc=0x[0-9a-f]+)?$"
)
#: Lines of a dump looked at.
DUMP_LINES_MAX = 5_000
#: A goroutine in these states is executing, not waiting: a loop that never ends.
_BUSY = ("running", "runnable")


@dataclass
class _Goroutine:
    id: str
    state: str
    frames: list[tuple[str, str, str]] = field(default_factory=list)
    creator: str | None = None
    parent: str | None = None


def stuck_in(dump: str, package: str, test: str, cwd: str) -> str | None:
    """`calc_test.go:14 in example.com/calc.TestSlow`: in the goroutine running `test` of
    `package` (a subtest's `/…` left off), or a busy one it started, its innermost frame
    in a file under `cwd`; None when the dump shows no such goroutine or frame."""
    name = test.split("/", 1)[0]
    functions = (f"{package}.{name}", f"{package}_test.{name}")
    goroutines = _goroutines(dump)
    own = [g for g in goroutines if any(_is_of(f, functions) for f, _, _ in g.frames)]
    family = _with_descendants(own, goroutines)
    busy = [g for g in family if g.state.split(",", 1)[0] in _BUSY]
    for goroutine in [*busy, *own]:
        place = _innermost_project_frame(goroutine, cwd)
        if place is not None:
            return place
    return None


def _goroutines(dump: str) -> list[_Goroutine]:
    goroutines: list[_Goroutine] = []
    current: str | None = None
    for line in dump.splitlines()[:DUMP_LINES_MAX]:
        if started := _GOROUTINE.match(line):
            goroutines.append(_Goroutine(started["id"], started["state"]))
            current = None
        elif goroutines and (created := _CREATED_BY.match(line)):
            goroutines[-1].creator, goroutines[-1].parent = created["func"], created["parent"]
            current = None
        elif goroutines and (called := _FUNCTION.match(line)):
            current = called["func"]
        elif goroutines and current and (place := _PLACE.match(line)):
            goroutines[-1].frames.append((current, place["file"], place["line"]))
            current = None
    return goroutines


def _is_of(function: str, tests: tuple[str, ...]) -> bool:
    return any(function == t or function.startswith(t + ".") for t in tests)


def _with_descendants(own: list[_Goroutine], goroutines: list[_Goroutine]) -> list[_Goroutine]:
    """`own` and the goroutines they started, and those started in turn: by the parent's
    id where the dump gives it, else by a frame of a member being the creator."""
    family = list(own)
    grew = True
    while grew:
        grew = False
        ids = {g.id for g in family}
        functions = {f for g in family for f, _, _ in g.frames}
        for g in goroutines:
            if g.id in ids or g.creator is None:  # by id: a dataclass's == compares frames
                continue
            if (g.parent in ids) if g.parent is not None else (g.creator in functions):
                family.append(g)
                grew = True
    return family


def _innermost_project_frame(goroutine: _Goroutine, cwd: str) -> str | None:
    for func, file, line in goroutine.frames:
        rel = os.path.relpath(os.path.normpath(file), cwd) if cwd else ".."
        if not rel.startswith(".."):
            return f"{rel}:{line} in {func}"
    return None

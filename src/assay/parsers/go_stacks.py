"""Where a hung Go test was stuck: the innermost frame of the project's code in the
goroutine that ran it, from the goroutine dump of go test's own `-timeout` panic, or of
the SIGQUIT assay sends the test binary at its own deadline (`assay.stack_dumps`).

The dump is output of the test binary, the code under test's to shape: it is read line by
line within a bound, and gives only a place to name beside the hung test.
"""

from __future__ import annotations

import os
import re

#: "goroutine 7 [sleep]:" begins a goroutine's stack.
_GOROUTINE = re.compile(r"^goroutine \d+ \[[^\]]*\]:$")
#: A frame's function line, "example.com/calc.TestSlow(0x0?)" or a method's,
#: "example.com/calc.(*Lexer).Next(0xc000012345)", and its place below it,
#: "\t/w/calc/calc_test.go:14 +0x25"; no control characters.
_FUNCTION = re.compile(
    r"^(?:created by )?(?P<func>[^\s()\x00-\x1f]{1,300}?"
    r"(?:\(\*?[^\s()\x00-\x1f]{1,200}\)\.[^\s()\x00-\x1f]{1,200})?)"
    r"\(.*\)(?: in goroutine \d+)?$"
)
#: A SIGQUIT's dump adds each frame's registers: " fp=0xc000036770 sp=0xc000036768 pc=0x4f4fc2".
_PLACE = re.compile(
    r"^\t(?P<file>/[^\x00-\x1f]{1,1024}?\.go):(?P<line>\d{1,7})(?: \+0x[0-9a-f]+)?"
    r"(?: fp=0x[0-9a-f]+ sp=0x[0-9a-f]+ pc=0x[0-9a-f]+)?$"
)
#: Lines of a dump looked at.
DUMP_LINES_MAX = 5_000


def stuck_in(dump: str, package: str, test: str, cwd: str) -> str | None:
    """`calc_test.go:14 in example.com/calc.TestSlow`: in the goroutine running `test` of
    `package` (a subtest's `/…` left off), its innermost frame in a file under `cwd`;
    None when the dump shows no such goroutine or frame."""
    function = f"{package}.{test.split('/', 1)[0]}"
    blocks: list[list[tuple[str, str, str]]] = []
    current: str | None = None
    for line in dump.splitlines()[:DUMP_LINES_MAX]:
        if _GOROUTINE.match(line):
            blocks.append([])
            current = None
        elif blocks and (called := _FUNCTION.match(line)):
            current = called["func"]
        elif blocks and current and (place := _PLACE.match(line)):
            blocks[-1].append((current, place["file"], place["line"]))
            current = None
    for block in blocks:
        if not any(f == function or f.startswith(function + ".") for f, _, _ in block):
            continue
        for func, file, line in block:
            rel = os.path.relpath(os.path.normpath(file), cwd) if cwd else ".."
            if not rel.startswith(".."):
                return f"{rel}:{line} in {func}"
    return None

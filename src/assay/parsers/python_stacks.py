"""Where a Python run stopped at assay's deadline was stuck: the innermost frame of the
project's own code in the stacks faulthandler dumped as the deadline's SIGTERM reached it
(`assay.tools.python.STACKS_SUFFIX`).

The dump is written inside the sandbox: its text is the code under test's to shape (a
code object's file name is whatever it says). It is read within the report bounds, only
as a place to name beside the hung test, never as an outcome or a count.
"""

from __future__ import annotations

import os
import re

#: A thread's header in faulthandler's dump: "Current thread 0x00007f... (most recent
#: call first):" or "Thread 0x...", at the end of a line: a dump to a stream the run was
#: writing to starts where the run left off (`test_add (t.T.test_add) ... Current thread`).
_THREAD = re.compile(
    r"(?:^|\s)(?:Current thread|Thread) 0x[0-9a-fA-F]+ \(most recent call first\):$"
)
#: One of its frames: '  File "/w/pkg/mod.py", line 3 in spin'; no control characters.
_FRAME = re.compile(
    r'^ {2}File "(?P<file>[^"\x00-\x1f\x7f]{1,1024})", line (?P<line>\d{1,7}) in (?P<func>[\w<>.]{1,200})$'
)
#: Lines of a dump looked at.
DUMP_LINES_MAX = 5_000
#: A frame in one of these folders is installed code, not the project's.
_INSTALLED = frozenset({"site-packages", "dist-packages", ".venv", "venv", ".tox", ".nox"})


def stuck_at(dump: str, cwd: str) -> str | None:
    """`pkg/mod.py:3 in spin`: the innermost frame under `cwd`, outside installed code, of
    the thread that ran pytest (the one whose stack holds pytest's own frames; else the
    first thread with such a frame), or None."""
    threads: list[list[tuple[str, str, str]]] = []
    for line in dump.splitlines()[:DUMP_LINES_MAX]:
        if _THREAD.search(line):
            threads.append([])
        elif threads and (frame := _FRAME.match(line)):
            threads[-1].append((frame["file"], frame["line"], frame["func"]))
    runner = [t for t in threads if any("/_pytest/" in file for file, _, _ in t)]
    for thread in runner + threads:
        for file, line, func in thread:
            rel = _inside(file, cwd)
            if rel is not None:
                return f"{rel}:{line} in {func}"
    return None


def _inside(file: str, cwd: str) -> str | None:
    if not cwd or not os.path.isabs(file):
        return None
    rel = os.path.relpath(os.path.normpath(file), cwd)
    parts = rel.split("/")
    if rel.startswith("..") or _INSTALLED.intersection(parts) or "__pycache__" in parts:
        return None
    return rel

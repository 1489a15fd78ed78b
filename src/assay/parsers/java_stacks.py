"""Where a hung Java test was: the thread dump its JVM printed when asked (`assay.stack_dumps`
sends Surefire's forked JVM SIGQUIT at the deadline), as Surefire kept it.

The forked JVM speaks to Maven through its stdout, so the dump's lines, which are not of
that protocol, land in the reports' `*-jvmRun<N>.dumpstream`, each as an entry of its own:
`Corrupted STDOUT by directly writing to native stream in forked JVM 1. Stream '<line>'.`
Maven runs quiet (`-q`): without the dump, a hung test class is named nowhere (jOOR, a
loop in `Reflect.property`: "printed nothing for 60 s", nothing named).

The "main" thread runs the tests: its innermost frame in one of the project's sources is
where it was stuck, and its innermost frame in the test sources is the test. The text is
the hung code's own output: it only names a place beside a verdict that is a hang already.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from assay.parsers.java_frames import JAVA_FRAME

#: One line of what the forked JVM wrote outside Surefire's protocol.
_STREAM_LINE = re.compile(
    r"^Corrupted STDOUT by directly writing to native stream in forked JVM \d+\. "
    r"Stream '(?P<line>.*)'\.$"
)
#: The header of a thread in a dump: `"main" #1 prio=5 ...`.
_THREAD = re.compile(r'^"(?P<name>[^"]*)"')
#: Frames of the main thread looked at (a deep recursion prints thousands).
FRAMES_MAX = 400


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame of a Java stack."""

    cls: str
    """The class, with its package (`tiny.Add`; a nested one `tiny.Add$Inner`)."""
    method: str
    file: str
    """The source file's name (`Add.java`), in the class's package directory."""
    line: int

    @property
    def package_dir(self) -> str:
        """The class's package as a directory (`tiny/sub`); `""` for the default package."""
        return self.cls.rpartition(".")[0].replace(".", "/")

    @property
    def source(self) -> str:
        """Its source file by package directory (`tiny/Add.java`): how `hung_test` is told
        where each is in the project."""
        return f"{self.package_dir}/{self.file}"


def dumped_lines(text: str) -> Iterator[str]:
    """The lines the forked JVM wrote outside Surefire's protocol, in order."""
    for line in text.splitlines():
        if found := _STREAM_LINE.match(line):
            yield found["line"]


def main_thread_frames(lines: Iterable[str]) -> list[Frame]:
    """The frames of the last dump's "main" thread, innermost first."""
    frames: list[Frame] = []
    in_main = False
    for line in lines:
        if thread := _THREAD.match(line):
            in_main = thread["name"] == "main"
            if in_main:
                frames = []  # a later dump's
            continue
        if in_main and len(frames) < FRAMES_MAX and (frame := JAVA_FRAME.match(line)):
            cls, method, file = frame["cls"], frame["method"], frame["file"]
            frames.append(Frame(cls, method, file, int(frame["line"])))
    return frames


def hung_test(frames: list[Frame], source_of: dict[str, str]) -> str | None:
    """`tiny.AddTest.adds (stuck at src/main/java/tiny/Add.java:5 in tiny.Add.add)`: the
    innermost frame of a test source and the innermost of any of the project's, each with
    the path `source_of` gives its `Frame.source` (those under the test
    sources start with `src/test/`); None without a test among them."""
    located = [(f, source_of[f.source]) for f in frames if f.source in source_of]
    tests = [f for f, path in located if path.startswith("src/test/")]
    if not tests:
        return None
    test = tests[0]
    stuck, path = located[0]
    return f"{test.cls}.{test.method} (stuck at {path}:{stuck.line} in {stuck.cls}.{stuck.method})"

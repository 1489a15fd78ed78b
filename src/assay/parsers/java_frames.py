"""Where a failed JUnit test failed: the innermost stack frame of the test's own package,
read from the `<failure>` or `<error>` text of a Surefire report.

The report is written inside the sandbox, so its text is the code under test's claim:
it is read within bounds, and what it gives is only a place to show with the failure
(a diagnostic), never a count or an outcome.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assay.parsers.pytest import junit_root

#: A frame as Java prints it: "\tat tiny.AddTest.wrong(AddTest.java:17)", the module's
#: prefix (`java.base@17/`) allowed.
JAVA_FRAME = re.compile(
    r"^\s*at (?:[\w.$/@-]+/)?(?P<cls>[\w$]+(?:\.[\w$]+)*)\.(?P<method>[\w$<>]+)"
    r"\((?P<file>[\w$]+\.java):(?P<line>\d{1,7})\)$"
)
#: Lines of a failure's text looked at, and failures looked at in one report.
FRAME_LINES_MAX = 200
FAILURES_MAX = 100
#: Characters of a failure's message kept.
MESSAGE_MAX = 300


@dataclass(frozen=True, slots=True)
class FailurePlace:
    """Where one failed test stopped, as its report's stack trace says."""

    test: str
    """`Class.method`, the class without its package."""
    package_dir: str
    """The frame's package as a directory (`tiny/sub`), `""` for the default package."""
    file: str
    line: int
    message: str


def failure_places(data: bytes, suffix: str | None) -> list[FailurePlace]:
    """For each failed or erring test case of the JUnit XML `data`, the innermost frame
    of a class in its test class's package (the assertion's line in the test, or the
    line of the code under test that threw); `suffix`: what Surefire appended to class
    names (`assay.tools.java.report_suffix`)."""
    root = junit_root(data)
    if root is None:
        return []
    found: list[FailurePlace] = []
    for case in root.iter("testcase"):
        if len(found) >= FAILURES_MAX:
            break
        failure = next((c for c in case if c.tag in ("failure", "error")), None)
        if failure is None:
            continue
        classname = case.get("classname") or ""
        if suffix:
            classname = classname.replace(f"({suffix})", "")
        place = _innermost(failure.text or "", classname.rpartition(".")[0])
        if place is None:
            continue
        package_dir, file, line = place
        message = (failure.get("message") or failure.get("type") or "failed").strip()
        test = f"{classname.rpartition('.')[2]}.{case.get('name') or '?'}"
        found.append(FailurePlace(test, package_dir, file, line, message[:MESSAGE_MAX]))
    return found


def _innermost(text: str, package: str) -> tuple[str, str, int] | None:
    for raw in text.splitlines()[:FRAME_LINES_MAX]:
        match = JAVA_FRAME.match(raw[:1000])
        if match is None:
            continue
        frame_package = match["cls"].rpartition(".")[0]
        if frame_package == package:
            return package.replace(".", "/"), match["file"], int(match["line"])
    return None

"""What a blocked stop says: written for the one who must fix the code (pure).

The status and its note, then each check that did not pass with what it showed (the
diagnostics or failing tests, file:line where the output names one), the command the
check ran, and the `assay verify` command that reproduces the whole verdict.
"""

from __future__ import annotations

import re
import shlex

from assay.evidence import Evidence
from assay.formats.failures import fail_fast_line, failure_lines, relative
from assay.report import Report, summary_line

__all__ = ["MAX_REASON_CHARS", "reproduce_command", "unverified_reason"]

#: Bound on the text handed back: enough to act on, not a log to wade through.
MAX_REASON_CHARS = 6000
#: Places a failure points at: `path/to/file.ext:LINE` at the start of an output line.
_LOCATION = re.compile(r"^\s*([\w./\\-]+\.\w+):(\d+)\b")
_MAX_LOCATIONS = 5


def reproduce_command(root: str, base: str | None = None) -> str:
    against = "" if base is None else f" --base {base} --protect"
    return f"assay verify {shlex.quote(root)}{against}"


def unverified_reason(report: Report, root: str, *, base: str | None = None) -> str:
    """Why `report` (not VERIFIED) for the project at `root` (against commit `base`,
    with `--protect`) holds the stop, and how to see it again."""
    lines = [f"assay: the project is {report.status.value}, not VERIFIED, so the work is not done."]
    if report.note:
        lines.append(report.note)
    failing = [e for e in report.checks if not e.passed]
    if failing:
        lines.append("")
        lines.append("Checks that did not pass:")
        shown: set[str] = set()
        for evidence in failing:
            lines += _check_lines(evidence, shown)
    lines.append("")
    if base is not None:
        lines.append(
            f"The tests and the plan are those of the tree when the prompt was given ({base})."
        )
    lines.append(f"Reproduce: {reproduce_command(root, base)}")
    text = "\n".join(lines)
    if len(text) > MAX_REASON_CHARS:
        text = text[: MAX_REASON_CHARS - 40].rstrip() + "\n... (cut; run the command above)"
    return text


def _check_lines(evidence: Evidence, shown: set[str]) -> list[str]:
    lines = [summary_line(evidence).strip()]
    lines += failure_lines(evidence, shown=shown)
    locations = _locations(evidence)
    if locations:
        lines.append(f"  at: {', '.join(locations)}")
    if (stopped := fail_fast_line(evidence)) is not None:
        lines.append(stopped)
    where = "" if evidence.check.cwd in ("", ".") else f" (in {evidence.check.cwd})"
    lines.append(f"  ran: {shlex.join(evidence.check.argv)}{where}")
    return lines


def _locations(evidence: Evidence) -> list[str]:
    """file:line places the output names, in order, without repeats (diagnostics
    already carry theirs)."""
    if evidence.diagnostics:
        return []
    found: list[str] = []
    for line in relative(evidence, evidence.reason).splitlines():
        match = _LOCATION.match(line)
        if match is None or match.group(1).startswith("/"):
            continue
        place = f"{match.group(1)}:{match.group(2)}"
        if place not in found:
            found.append(place)
        if len(found) == _MAX_LOCATIONS:
            break
    return found

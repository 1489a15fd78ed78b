"""No single channel is believed: a passing test run must be told the same by every channel.

A test runner speaks through several channels that are written apart: its exit code, the
summary it prints at the end ("2 passed in 0.1s", "Ran 2 tests ... OK"), the structured
report it writes (JUnit XML, `go test -json` events, jest's JSON) and, for some, a line per
test. Code under test can write any channel it can see, but forging one rarely makes the
others agree. So a run that would pass must have had every channel its runner always
writes, each telling the same count of tests run and none telling a failure.

Pure: the parsers read the channels (`ParsedOutput.readings`); `classify` asks here
whether a run that would pass may.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from assay.parsed_output import Reading
from assay.verdict import Cause

__all__ = ["Disagreement", "disagreement"]


@dataclass(frozen=True, slots=True)
class Disagreement:
    """Why a run that exited 0 is not a pass: the cause it gets instead, and a note."""

    cause: Cause
    note: str


def disagreement(name: str, readings: Sequence[Reading]) -> Disagreement | None:
    """What keeps the test check `name`, which exited 0 with passing tests, from passing;
    None when its channels agree.

    - a channel its runner always writes never appeared: the run did not end the way its
      runner ends one, and what the other channels say was not written by a finished run
      (`report_tampered`: inconclusive, whatever the rest says);
    - a channel tells of failing tests, or two channels count different numbers of tests
      run (`report_mismatch`: exit 0 with failures is a runner hiding them).
    """
    missing = [r.channel for r in readings if not r.appeared]
    if missing:
        return Disagreement(
            Cause.REPORT_TAMPERED,
            f"{name} exited 0 but {_and(missing)} never appeared: the run did not finish "
            "the way its runner finishes one, so its passing report is not believed.",
        )
    failing = [r for r in readings if r.failed]
    if failing:
        first = failing[0]
        return Disagreement(
            Cause.REPORT_MISMATCH,
            f"{name} exited 0 but {first.channel} reports {first.failed} failing test(s).",
        )
    counted = [r for r in readings if r.ran is not None]
    for reading in counted[1:]:
        if reading.ran != counted[0].ran:
            return Disagreement(
                Cause.REPORT_MISMATCH,
                f"{name}'s channels disagree: {counted[0].channel} counts {counted[0].ran} "
                f"test(s) run, {reading.channel} {reading.ran}; one of them was not written "
                "by the runner.",
            )
    return None


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]

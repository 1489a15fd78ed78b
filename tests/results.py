"""`ProcessResult`s built by hand, for tests of what reads one (classify, parsers, formats)."""

from __future__ import annotations

from collections.abc import Sequence

from assay.output import CapturedOutput
from assay.process import ProcessResult, StartFailure


def captured(text: str = "") -> CapturedOutput:
    """Output kept whole: all of it in the head, nothing truncated."""
    return CapturedOutput(head=text, tail="", bytes=len(text), truncated=False)


def process_result(
    argv: Sequence[str] = ("tool",),
    *,
    cwd: str = ".",
    exit_code: int | None = 0,
    signal: int | None = None,
    timed_out: bool = False,
    start_failure: StartFailure | None = None,
    start_error: str | None = None,
    duration_s: float = 0.1,
    stdout: str = "",
    stderr: str = "",
) -> ProcessResult:
    return ProcessResult(
        argv=tuple(argv),
        cwd=cwd,
        exit_code=exit_code,
        signal=signal,
        timed_out=timed_out,
        start_failure=start_failure,
        start_error=start_error,
        duration_s=duration_s,
        stdout=captured(stdout),
        stderr=captured(stderr),
    )

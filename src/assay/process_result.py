"""What one command's run came to (`ProcessResult`), apart from the machinery that runs it
(`assay.process`): evidence carries one, and reading a stored report (a cache hit) should
not load what starts, watches and kills processes."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from assay.output import CapturedOutput


class StartFailure(enum.StrEnum):
    """Why a process did not start."""

    NOT_FOUND = "not_found"
    PERMISSION_DENIED = "permission_denied"
    OS_ERROR = "os_error"


@dataclass(frozen=True, slots=True)
class ProcessResult:
    """What happened when one command ran."""

    argv: tuple[str, ...]
    """The exact argv that was executed."""
    cwd: str
    """The directory it ran in."""
    exit_code: int | None
    """Exit status when it exited on its own; None when a signal ended it or it never started."""
    signal: int | None
    """The signal that ended the main process, if one did (ours at the deadline included)."""
    timed_out: bool
    """True when our deadline expired, or the run went quiet too long, and we killed the
    process tree."""
    start_failure: StartFailure | None
    """Set when the process could not be started; exit_code is then None, not 127."""
    start_error: str | None
    """The OS's message for a start failure."""
    duration_s: float
    """Wall time from start to the end of collection."""
    stdout: CapturedOutput
    stderr: CapturedOutput
    cpu_s: float | None = None
    """User + system CPU time of the main process and the children it waited for, and of
    the run's orphans this process reaped (a sandbox's init, with the command below it)."""
    peak_rss_bytes: int | None = None
    """Peak resident set size of the largest process among them, as the kernel reports it
    (Linux counts a child's size before exec too, so this is at least the size of the
    process that started it: an upper bound, not an exact figure)."""
    output_complete: bool = True
    """False when some process kept the pipes open past the drain period."""
    silent_s: float | None = None
    """Set when the kill came from the no-output limit: how long nothing had been printed."""
    stopped_for: str | None = None
    """Set when the run was killed for what it did, not for its time: why (it was filling
    the disk its workspace is on)."""
    address_space_bytes: int | None = None
    """The address-space limit (RLIMIT_AS) the main process ran under; None for none. A
    sanitizer's "failed to allocate" says something of the sandbox only where one was set."""
    running_at_deadline: tuple[tuple[str, ...], ...] = ()
    """When a deadline stopped the run: the argv of each of its processes that had no child
    of its own then (`reaper.leaf_commands`), what it was still running."""
    threads_at_deadline: tuple[tuple[str, ...], ...] = ()
    """Beside each of `running_at_deadline`: the names of its threads but the first (a Rust
    test binary's are its running tests)."""
    said_by_deadline: tuple[CapturedOutput, CapturedOutput] | None = field(
        default=None, compare=False
    )
    """When a deadline stopped the run: its stdout and stderr as they stood then, before
    the signals that ended it. A runner reports a test process the deadline's TERM killed
    as a failed test (`node --test`), and only what it said before is the code's doing.
    Not stored: read while the run is judged."""

    @property
    def started(self) -> bool:
        return self.start_failure is None

    def to_dict(self) -> dict[str, object]:
        return {
            "argv": list(self.argv),
            "cwd": self.cwd,
            "exit_code": self.exit_code,
            "signal": self.signal,
            "timed_out": self.timed_out,
            "start_failure": self.start_failure.value if self.start_failure else None,
            "start_error": self.start_error,
            "duration_s": round(self.duration_s, 6),
            "cpu_s": None if self.cpu_s is None else round(self.cpu_s, 6),
            "peak_rss_bytes": self.peak_rss_bytes,
            "output_complete": self.output_complete,
            "silent_s": self.silent_s,
            "stopped_for": self.stopped_for,
            "address_space_bytes": self.address_space_bytes,
            "running_at_deadline": [list(argv) for argv in self.running_at_deadline],
            "threads_at_deadline": [list(names) for names in self.threads_at_deadline],
            "stdout": self.stdout.to_dict(),
            "stderr": self.stderr.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProcessResult:
        failure = data.get("start_failure")
        return cls(
            argv=tuple(data["argv"]),
            cwd=str(data["cwd"]),
            exit_code=data.get("exit_code"),
            signal=data.get("signal"),
            timed_out=bool(data.get("timed_out")),
            start_failure=StartFailure(failure) if failure else None,
            start_error=data.get("start_error"),
            duration_s=float(data.get("duration_s", 0.0)),
            cpu_s=data.get("cpu_s"),
            peak_rss_bytes=data.get("peak_rss_bytes"),
            output_complete=bool(data.get("output_complete", True)),
            silent_s=data.get("silent_s"),
            stopped_for=data.get("stopped_for"),
            address_space_bytes=data.get("address_space_bytes"),
            running_at_deadline=_words_each(data.get("running_at_deadline")),
            threads_at_deadline=_words_each(data.get("threads_at_deadline")),
            stdout=CapturedOutput.from_dict(data.get("stdout", {})),
            stderr=CapturedOutput.from_dict(data.get("stderr", {})),
        )


def _words_each(lists: object) -> tuple[tuple[str, ...], ...]:
    """A stored list of lists of words, as tuples; what is not a list is dropped."""
    if not isinstance(lists, list):
        return ()
    return tuple(tuple(str(word) for word in words) for words in lists if isinstance(words, list))

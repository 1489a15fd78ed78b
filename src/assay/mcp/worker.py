"""One MCP tool call, run in a process of its own: `python -m assay.mcp.worker`.

The request (one JSON object) comes on stdin; what happens goes to stdout as JSON lines:

    {"event": "started", "check": NAME}                       a check is about to run
    {"event": "finished", "check": NAME, "line": SUMMARY}     a check ended
    {"event": "result", "result": {...}, "text": ...}         the tool's answer, last
    {"event": "usage_error", "message": TEXT}                 nothing ran: bad arguments

Why a process per call: cancelling one call must stop exactly its own process trees
(SIGTERM here takes the command line's way out of an interrupt: every run this process
started is killed), and calls running side by side must not share that fate. Anything
else the library might print goes to stderr, so stdout carries only these lines.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import IO, Any

from assay.evidence import Check, Evidence

#: Exit status of a worker stopped by SIGTERM (128 + SIGINT, as the command line reports).
INTERRUPTED_EXIT = 130
#: prctl(2): the signal this process gets when the server that started it dies.
_PR_SET_PDEATHSIG = 1


class _Events:
    """The JSON-lines channel; checks end in their own threads, so writes are serialised."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def send(self, event: dict[str, Any]) -> None:
        line = json.dumps(event, ensure_ascii=False)
        with self._lock:
            self._stream.write(line + "\n")
            self._stream.flush()

    # The `assay.progress.Progress` protocol.
    def started(self, check: Check) -> None:
        self.send({"event": "started", "check": check.name})

    def finished(self, evidence: Evidence) -> None:
        from assay.report import summary_line

        self.send(
            {"event": "finished", "check": evidence.check.name, "line": summary_line(evidence)}
        )


def verify_result(report: Any) -> dict[str, Any]:
    """The verify tool's structured result: the gate keys first (`status`, `passed`), then
    the report as `assay verify --json` prints it."""
    document = report.to_dict()
    return {"status": document.pop("status"), "passed": report.verified, **document}


def verify_text(report: Any) -> str:
    """What the model reads first: each check's line, what failed and where (file:line,
    test names), the status and the note; the structured result has the rest."""
    from assay.formats.failures import failure_lines

    lines = [report.output()]
    shown: set[str] = set()
    for evidence in report.checks:
        if not evidence.passed:
            lines += failure_lines(evidence, shown=shown)
    lines.append(report.status.value)
    if report.note:
        lines.append(f"note: {report.note}")
    return "\n".join(line for line in lines if line)


def probe_result() -> dict[str, Any]:
    """Every toolchain assay knows, as `assay probe --json` prints it."""
    from assay.probe import ProbeFailure, probe_all

    tools: dict[str, Any] = {}
    for tool, found in probe_all().items():
        if isinstance(found, ProbeFailure):
            tools[tool] = {"found": False, "error": str(found), "install": found.install_hint}
        else:
            tools[tool] = {"found": True, **found.to_dict()}
    return {"schema": "assay.probe/1", "tools": tools}


def _project(path: object) -> str:
    """The project `path` names: the directory itself, or the project it is inside (as the
    command line chooses it)."""
    from assay.pipeline import VerifyUsageError
    from assay.repo_root import project_root

    if not isinstance(path, str) or not path:
        raise VerifyUsageError("path must be a directory path")
    start = Path(path)
    if not start.is_dir():
        raise VerifyUsageError(f"{path} is not a directory")
    return str(project_root(start.resolve()).root)


def _options(arguments: dict[str, Any]) -> Any:
    from assay.pipeline import VerifyOptions
    from assay.verdict import Kind

    kinds = arguments.get("kinds") or ()
    return VerifyOptions(
        timeout_s=arguments.get("timeout_s"),
        deadline_s=arguments.get("deadline_s"),
        sandbox=arguments.get("sandbox", "auto"),
        use_cache=arguments.get("use_cache", True),
        base=arguments.get("base"),
        protect=arguments.get("protect", False),
        all_tests=arguments.get("all_tests", False),
        rerun_failures=arguments.get("rerun_failures", 0),
        kinds=frozenset(Kind(k) for k in kinds) or None,
    )


def answer(request: dict[str, Any], events: _Events) -> tuple[dict[str, Any], str | None]:
    """Run the tool `request` names: its structured result and, for verify, the text for
    the reader. Raises `VerifyUsageError` when nothing could run."""
    from assay.pipeline import VerifyUsageError

    tool = request.get("tool")
    arguments = request.get("arguments") or {}
    if tool == "probe":
        return probe_result(), None
    if tool == "plan":
        from assay.pipeline import VerifyOptions, make_plan

        return dict(make_plan(_project(arguments.get("path")), VerifyOptions()).to_dict()), None
    if tool == "verify":
        from assay.pipeline import verify

        try:
            options = _options(arguments)
        except ValueError as exc:  # a kind that is not one
            raise VerifyUsageError(str(exc)) from None
        report = verify(_project(arguments.get("path")), options, progress=events)
        return verify_result(report), verify_text(report)
    raise VerifyUsageError(f"unknown tool {tool!r}")


def main() -> int:
    # The channel is a copy of stdout; stdout itself becomes stderr, so that nothing else
    # printed in this process can pass for an event.
    events = _Events(os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8"))
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    _die_with_server()
    try:
        request = json.loads(sys.stdin.read())
    except ValueError as exc:
        request = f"unreadable: {exc}"
    if not isinstance(request, dict):
        events.send(
            {"event": "usage_error", "message": f"the request is not a JSON object ({request})"}
        )
        return 2
    from assay.pipeline import VerifyUsageError, internal_error_report

    # From here on, SIGTERM takes the command line's way out of an interrupt (before it,
    # nothing has started and the default action is as good).
    signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        result, text = answer(request, events)
    except KeyboardInterrupt:
        from assay.process import kill_active_runs

        kill_active_runs(and_later=True)
        return INTERRUPTED_EXIT
    except VerifyUsageError as exc:
        events.send({"event": "usage_error", "message": str(exc)})
        return 2
    except Exception as exc:  # fail closed: the caller gets an INDETERMINATE report, not a trace
        if request.get("tool") != "verify":
            events.send({"event": "usage_error", "message": f"{type(exc).__name__}: {exc}"})
            return 2
        report = internal_error_report(exc)
        result, text = verify_result(report), verify_text(report)
    events.send({"event": "result", "result": result, "text": text})
    return 0


def _die_with_server() -> None:
    """SIGTERM when the server dies, even by SIGKILL: no verification outlives its caller."""
    import ctypes

    parent = os.environ.get("ASSAY_MCP_SERVER_PID")
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: cancellation still stops the worker
        return
    if parent is not None and str(os.getppid()) != parent:  # it died before prctl
        os.kill(os.getpid(), signal.SIGTERM)


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())

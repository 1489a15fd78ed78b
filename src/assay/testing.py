"""Test doubles shipped as public API: well-behaved and misbehaving verifiers.

assay's own tests use these, and so can anyone testing code built on assay.
Each misbehaviour is real (a real segfault, a real `os._exit`, a real process
that ignores SIGTERM), not a mock of one. Classes live at module level so they
can be sent to worker processes.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import time
from dataclasses import dataclass

from assay.evidence import Check, Evidence, evidence_for
from assay.runner import VerifierContext
from assay.verdict import Cause, Kind

#: Started by `OrphaningVerifier`: ignores SIGTERM and runs until killed.
SIGTERM_IGNORING_CHILD = (
    "import signal, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "print('ready', flush=True)\n"
    "time.sleep(600)\n"
)


def _check(verifier_id: str) -> Check:
    return Check(name=verifier_id, kind=Kind.TEST, argv=())


@dataclass
class HealthyVerifier:
    """Returns the evidence it was given (a pass by default)."""

    id: str = "healthy"
    cause: Cause = Cause.EXIT_ZERO

    def verify(self, ctx: VerifierContext) -> Evidence:
        return evidence_for(_check(self.id), self.cause)


@dataclass
class AsyncHealthyVerifier:
    id: str = "async-healthy"

    async def verify(self, ctx: VerifierContext) -> Evidence:
        return evidence_for(_check(self.id), Cause.EXIT_ZERO)


@dataclass
class RaisingVerifier:
    id: str = "raises"

    def verify(self, ctx: VerifierContext) -> Evidence:
        raise RuntimeError("verifier bug")


@dataclass
class HangingVerifier:
    """Sleeps far past any deadline."""

    id: str = "hangs"
    seconds: float = 600.0

    def verify(self, ctx: VerifierContext) -> Evidence:
        time.sleep(self.seconds)
        return evidence_for(_check(self.id), Cause.EXIT_ZERO)


@dataclass
class SegfaultVerifier:
    """Dereferences a null pointer: the process dies of SIGSEGV."""

    id: str = "segfaults"

    def verify(self, ctx: VerifierContext) -> Evidence:
        ctypes.string_at(0)
        return evidence_for(_check(self.id), Cause.EXIT_ZERO)


@dataclass
class ExitingVerifier:
    """Calls os._exit(0): the process vanishes with a 'success' status and no result."""

    id: str = "os-exit"

    def verify(self, ctx: VerifierContext) -> Evidence:
        os._exit(0)


@dataclass
class SystemExitVerifier:
    id: str = "system-exit"

    def verify(self, ctx: VerifierContext) -> Evidence:
        raise SystemExit(0)


@dataclass
class KeyboardInterruptVerifier:
    id: str = "keyboard-interrupt"

    def verify(self, ctx: VerifierContext) -> Evidence:
        raise KeyboardInterrupt


@dataclass
class GarbageVerifier:
    """Returns something that looks like a pass but is not Evidence."""

    id: str = "garbage"

    def verify(self, ctx: VerifierContext) -> object:
        return {"verdict": "pass", "cause": "exit_zero"}


@dataclass
class OrphaningVerifier:
    """Starts a grandchild that ignores SIGTERM, then hangs (or returns, if `hang` is False).

    The grandchild's pid is written to `ctx.data["pid_file"]` (or the file named
    by $ASSAY_TESTING_PID_FILE) when given, so a test can check that it is gone.
    """

    id: str = "orphans"
    hang: bool = True

    def verify(self, ctx: VerifierContext) -> Evidence:
        child = subprocess.Popen(
            [sys.executable, "-u", "-c", SIGTERM_IGNORING_CHILD],
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
        assert child.stdout is not None
        child.stdout.readline()  # wait until it ignores SIGTERM
        pid_file = ctx.data.get("pid_file") or os.environ.get("ASSAY_TESTING_PID_FILE")
        if pid_file:
            with open(pid_file, "w") as f:
                f.write(str(child.pid))
        if self.hang:
            time.sleep(600)
        return evidence_for(_check(self.id), Cause.EXIT_ZERO)

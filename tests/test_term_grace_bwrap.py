"""The TERM grace under bubblewrap: a run whose every process ignores SIGTERM is killed at
once, as under the unsandboxed backends, not after the whole grace period."""

from __future__ import annotations

import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.sandbox import BwrapOptions, BwrapSandbox, Workspace


@pytest.fixture
def long_grace(monkeypatch: pytest.MonkeyPatch) -> float:
    from assay import process

    monkeypatch.setattr(process, "TERM_GRACE_SECONDS", 5.0)
    return 5.0


@pytest.fixture
def sandboxed() -> Iterator[tuple[BwrapSandbox, Workspace]]:
    source = Path(tempfile.mkdtemp(prefix="assay-grace-", dir="/var/tmp"))
    (source / "main.py").write_text("print('hello')\n")
    sandbox = BwrapSandbox(BwrapOptions(toolchain_paths=(sys.executable,)))
    try:
        with sandbox.workspace(source) as ws:
            yield sandbox, ws
    finally:
        for path in source.iterdir():
            path.unlink()
        source.rmdir()


def test_no_grace_is_waited_under_bwrap_when_every_survivor_ignores_sigterm(
    long_grace: float, sandboxed: tuple[BwrapSandbox, Workspace]
) -> None:
    sandbox, ws = sandboxed
    started = time.monotonic()
    result = sandbox.run(ws, ["sh", "-c", "trap '' TERM; sleep 30 & sleep 30; wait"], timeout=0.3)
    elapsed = time.monotonic() - started
    assert result.timed_out and result.signal in (signal.SIGTERM, signal.SIGKILL)
    assert elapsed < 0.3 + 1.0 < long_grace, elapsed

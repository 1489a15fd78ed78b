"""An agent's standard output, read on the host while the agent runs, and a way to stop it.

The agent writes its stdout into a FIFO in its workspace's `.assay-agent/` (the launch
wrapper opens it for the agent); a host thread reads it as it arrives. A bounded copy is
kept as evidence and each line goes to an `OutputReader`, so what the agent spends is
known while it spends it. A FIFO stores nothing: an agent that prints without end fills
no disk, and the host holds one end open until the run is over, so the stream ends only
when every writer is gone.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import stat
import threading
import uuid
from collections.abc import Callable
from pathlib import Path

from assay.eval.agent_output import OutputReader
from assay.output import BoundedBuffer, CapturedOutput

#: After the run, how long to wait for the rest of the stream.
DRAIN_S = 2.0
READ_CHUNK = 64 * 1024
_POLL_S = 0.2


class OutputStream:
    """The FIFO and the thread that reads it; `open`, run the agent, then `close`."""

    def __init__(self, directory: Path, on_usage: Callable[[OutputReader], None]) -> None:
        self.path = directory / f"stdout-{uuid.uuid4().hex[:12]}.fifo"
        self.reader = OutputReader()
        self.note = ""
        self._on_usage = on_usage
        self._buffer = BoundedBuffer()
        self._read_fd = -1
        self._write_fd = -1
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._pump, name="agent-stdout", daemon=True)

    def open(self) -> str:
        """Make the FIFO and start reading it; returns its path (the same inside)."""
        os.mkfifo(self.path, 0o600)
        fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            os.close(fd)
            raise OSError(f"{self.path} is not the FIFO just made")
        os.fchmod(fd, 0o666)  # the sandbox's user writes it
        self._read_fd = fd
        # Our own writer: without one, the stream would end before the agent opens it.
        self._write_fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        self._thread.start()
        return str(self.path)

    def close(self) -> CapturedOutput:
        """Once the run is over: read what is left, stop, and remove the FIFO."""
        if self._write_fd >= 0:
            os.close(self._write_fd)
            self._write_fd = -1
        if self._thread.is_alive():
            self._thread.join(DRAIN_S)
            self._stop.set()  # a writer outlived the run: what it still holds is dropped
            self._thread.join()
        if self._read_fd >= 0:
            os.close(self._read_fd)
            self._read_fd = -1
        with contextlib.suppress(OSError):
            self.path.unlink()
        return self._buffer.result()

    def _pump(self) -> None:
        fd = self._read_fd
        try:
            while not self._stop.is_set():
                ready, _, _ = select.select([fd], [], [], _POLL_S)
                if not ready:
                    continue
                try:
                    chunk = os.read(fd, READ_CHUNK)
                except BlockingIOError:
                    continue
                if not chunk:
                    if self.reader.finish():
                        self._on_usage(self.reader)
                    return
                self._buffer.feed(chunk)
                if self.reader.feed(chunk):
                    self._on_usage(self.reader)
        except Exception as exc:  # the stream's reader never takes the run down with it
            self.note = f"agent output not read to the end: {type(exc).__name__}: {exc}"


def kill_child_naming(token: str) -> bool:
    """SIGKILL the child of this process whose command line or environment holds `token`
    (the run's workspace path). The run's own supervision then kills what is left of its
    tree as it does at a deadline, and, under bubblewrap, the sandbox's pid namespace
    goes with its init. Returns whether one was found."""
    needle = token.encode()
    me = os.getpid()
    killed = False
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            if int(fields[1]) != me:
                continue
            named = needle in Path(f"/proc/{pid}/cmdline").read_bytes()
            named = named or needle in Path(f"/proc/{pid}/environ").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if named:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                killed = True
    return killed

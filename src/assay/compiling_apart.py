"""The tree's modules compiled for the byte-code store (`assay.bytecode_store`) in a
forked child that the budget's end kills.

No size bounds what compiling a module costs, and a call to `compile` cannot be
interrupted: each `finally` body is compiled once per way out of its `try`, so
`finally` blocks nested in one another double the code at each level (400 KB of them took
30 s on the host and made a 147 MB `.pyc`), and pytest's rewriting takes time that grows
faster than a module's assertions. So the compiler runs in a child forked from assay's
process (with everything imported, it starts at once), under a bound on its memory; what
it finished before the deadline comes back, and it is killed there.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import struct
import time
from collections.abc import Callable, Sequence

__all__ = ["MEMORY_BYTES", "compiled_apart"]

#: How much more memory than assay's own the child may take.
MEMORY_BYTES = 1024 * 1024 * 1024
_FRAME = struct.Struct(">Q")
_NONE = (1 << 64) - 1  # the frame of a module that compiled to nothing kept


def compiled_apart(
    compiler: Callable[[bytes, str], bytes | None],
    sources: Sequence[tuple[bytes, str]],
    until: float,
    max_bytes: int,
) -> list[bytes | None]:
    """What `compiler` made of each of `sources` (bytes and path) in order, for those
    it finished before the monotonic time `until`; a result over `max_bytes` is None."""
    if not sources or not hasattr(os, "fork") or time.monotonic() >= until:
        return []
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return []
    if pid == 0:  # pragma: no cover - the child reports only through the pipe
        os.close(read_end)
        _serve(compiler, sources, until, max_bytes, write_end)
    os.close(write_end)
    try:
        return _results(read_end, until, len(sources))
    finally:
        os.close(read_end)
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def _serve(  # pragma: no cover - runs in the child
    compiler: Callable[[bytes, str], bytes | None],
    sources: Sequence[tuple[bytes, str]],
    until: float,
    max_bytes: int,
    out: int,
) -> None:
    try:
        _bound_memory()
        for data, rel in sources:
            if time.monotonic() > until:
                break
            pyc = compiler(data, rel)
            if pyc is None or len(pyc) > max_bytes:
                _write_all(out, _FRAME.pack(_NONE))
            else:
                _write_all(out, _FRAME.pack(len(pyc)) + pyc)
    finally:  # whatever ended it (a MemoryError past the bound): what it finished is sent
        os._exit(0)


def _bound_memory() -> None:  # pragma: no cover - runs in the child
    import resource

    try:
        with open("/proc/self/statm", "rb") as statm:
            pages = int(statm.read().split()[0])
    except (OSError, ValueError, IndexError):
        return
    limit = pages * os.sysconf("SC_PAGE_SIZE") + MEMORY_BYTES
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _write_all(fd: int, data: bytes) -> None:  # pragma: no cover - runs in the child
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _results(fd: int, until: float, expected: int) -> list[bytes | None]:
    results: list[bytes | None] = []
    buffered = bytearray()
    while len(results) < expected:
        left = until - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        buffered += chunk
        while len(buffered) >= _FRAME.size:
            (size,) = _FRAME.unpack_from(buffered)
            if size == _NONE:
                results.append(None)
                del buffered[: _FRAME.size]
            elif len(buffered) >= _FRAME.size + size:
                results.append(bytes(buffered[_FRAME.size : _FRAME.size + size]))
                del buffered[: _FRAME.size + size]
            else:
                break
    return results

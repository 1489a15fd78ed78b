"""`assay server`: a warm process that runs `assay` invocations without their start-up.

The server imports the library once, then listens on a Unix socket in assay's per-user
directory (`assay.warm_client.socket_path`). It hands each request to a worker forked
ahead of it (`assay.warm_worker`); the worker becomes the requesting process's twin (its
arguments, directory, environment, umask, resource limits and the standard streams'
descriptors) and runs the command through the same entry point a cold start would, then
sends back the exit code. The client passes its interrupts on to the worker, and a
worker whose client vanished is interrupted too, so that no check outlives the process
that asked for it.

What the server refuses, the client runs itself (nothing has run by then). It refuses:
- a peer of another user, or in another mount or PID namespace (a sandboxed check that
  could reach the socket must not get an unsandboxed run out of it);
- a request from another interpreter or package, or of another protocol;
- a request whose environment would set the interpreter up differently (the `PYTHON*`
  and locale variables are read once, at start-up), or from another cgroup (the checks
  would escape the caller's resource limits);
- any request once the package's source files changed since the server started: it then
  exits, so that no run is answered by code that is no longer installed.

It exits by itself after `idle_timeout` seconds without a request or a running worker.
"""

from __future__ import annotations

import gc
import marshal
import os
import select
import signal
import socket
import sys
import time
from collections.abc import Mapping
from typing import Any

from assay.source_watch import SourceWatch
from assay.warm_client import (
    DEFAULT_IDLE_TIMEOUT_S,
    MAX_MESSAGE,
    PROTOCOL,
    identity,
    interpreter_options,
    peer_credentials,
    read_or_empty,
)
from assay.warm_worker import REFUSED_EXIT, Spare, send

__all__ = ["serve"]

#: The modules loaded before the first request: what `run`, `verify`, `plan` and `probe`
#: import, and the packages whose modules a plan picks among.
PRELOADED = (
    "assay.cli",
    "assay.cli_commands",
    "assay.cli_run",
    "assay.check_verifiers",
    "assay.pipeline",
    "assay.verification",
    "assay.cache",
    "assay.early_key",
    "assay.hooks.stop_hook",
    "assay.channels",
    "assay.classify",
    "assay.instrument",
    "assay.terminal",
    "assay.live_progress",
    "assay.repo_root",
    "assay.go_cache",
    "assay.mypy_cache",
    "assay.tool_caches",
    "concurrent.futures",
    "ctypes",
    "encodings.ascii",
    "encodings.utf_8_sig",
    "logging",
    "queue",
    "yaml",
)
PRELOADED_PACKAGES = (
    "assay.discovery",
    "assay.tools",
    "assay.parsers",
    "assay.sandbox",
    "assay.formats",
)

#: Variables the interpreter reads once, at start-up: a request that sets any of them
#: otherwise than the server's own start-up did would get a different interpreter.
_START_UP_PREFIXES = ("PYTHON", "LC_")
_START_UP_NAMES = frozenset({"LANG", "LANGUAGE"})

#: How long the server waits for a connected peer to send its request.
_REQUEST_WAIT_S = 2.0


def serve(path: str, *, idle_timeout: float = DEFAULT_IDLE_TIMEOUT_S) -> int:
    """Listen at `path` until idle for `idle_timeout` seconds, stopped, or the package
    changed; returns the exit code."""
    _preload()
    # What is loaded now is shared with every worker, copy-on-write: moved out of the
    # collector's reach, a worker's collections neither scan nor copy it.
    gc.collect()
    gc.freeze()
    server = _Server(_Listener(path))
    try:
        while True:
            server.keep_a_spare()
            if not server.wait_for_work(idle_timeout) or not server.answer_next():
                break
    finally:
        server.close()
    return 0


class _Server:
    """What the server knows of itself, and its answer to each connection."""

    def __init__(self, listener: _Listener) -> None:
        self.listener = listener
        self.sources = SourceWatch(identity()[1])
        self.start_env = _start_up_env(os.environ)
        self.cgroup = read_or_empty("/proc/self/cgroup")
        self.started = time.time()
        self.served = self.refused = 0
        self.workers: set[int] = set()
        self.spare: Spare | None = None
        self.last_work = time.monotonic()
        self.working: list[Spare] = []
        """The workers handed a request, until their standby hint comes (`_pass_on`)."""
        self.hint: bytes | None = None
        """The last standby hint a worker sent, for each spare until another comes."""

    def keep_a_spare(self) -> None:
        """Fork the next request's worker now, unless one is waiting already."""
        if self.spare is None:
            self.spare = Spare.fork(closed_in_child=[self.listener.sock, *self.channels()])
            if self.hint is not None:
                self.spare.pass_on(self.hint)

    def channels(self) -> list[socket.socket]:
        return [worker.channel for worker in self.working]

    def close(self) -> None:
        if self.spare is not None:
            self.spare.dismiss()
        for worker in self.working:
            worker.dismiss()
        self.sources.close()
        self.listener.close()

    def wait_for_work(self, idle_timeout: float) -> bool:
        """Until a connection is waiting (True), or the server has been idle for
        `idle_timeout` seconds or lost its path to another (False)."""
        while True:
            refused = _reap(self.workers)
            self.served -= refused  # a worker that could not be its client's twin ran nothing
            self.refused += refused
            if self.workers:
                self.last_work = time.monotonic()
            remaining = idle_timeout - (time.monotonic() - self.last_work)
            if remaining <= 0 or not self.listener.still_ours():
                return False
            waited = [self.listener.sock, *self.channels()]
            ready, _, _ = select.select(waited, [], [], min(remaining, 1.0))
            for worker in [w for w in self.working if w.channel in ready]:
                self._pass_on(worker)
            if self.listener.sock in ready:
                return True

    def _pass_on(self, worker: Spare) -> None:
        """Read a worker's standby hint, and pass it on to the spare; a worker's channel
        is done with after one message, or when it closes."""
        self.working.remove(worker)
        try:
            hint = worker.channel.recv(MAX_MESSAGE)
        except OSError:
            hint = b""
        worker.dismiss()
        if hint:
            self.hint = hint
            if self.spare is not None:
                self.spare.pass_on(hint)

    def answer_next(self) -> bool:
        """Answer one connection; False when the server is to stop."""
        try:
            conn, _ = self.listener.sock.accept()
        except OSError:
            return True
        with conn:
            request, fds = _read_request(conn)
            try:
                return self._answer(conn, request, fds)
            finally:
                for fd in fds:
                    os.close(fd)

    def _answer(self, conn: socket.socket, request: dict[str, Any] | None, fds: list[int]) -> bool:
        reason = _refusal(conn, request, self.start_env, self.cgroup)
        op = request.get("op") if request is not None else None
        if reason is None and op == "stop":
            send(conn, ("stopped", os.getpid()))
            return False
        if reason is None and op == "status":
            send(conn, ("status", os.getpid(), self.started, self.served, self.refused))
            return True
        if reason is None and self.sources.changed():
            send(conn, ("refused", "assay's files changed since the server started"))
            return False
        if reason is not None or op != "run" or request is None:
            self.refused += 1
            send(conn, ("refused", reason or f"unknown request {op!r}"))
            return True
        if not self._hand_over(conn, request, fds):
            self.refused += 1
            send(conn, ("refused", "no worker could be started"))
            return True
        self.served += 1
        self.last_work = time.monotonic()  # only work keeps it up, not `status`
        return True

    def _hand_over(self, conn: socket.socket, request: dict[str, Any], fds: list[int]) -> bool:
        """To the spare; to a new one if the spare died (killed by someone, say)."""
        for _ in range(2):
            spare, self.spare = self.spare, None
            if spare is None:
                spare = Spare.fork(closed_in_child=[self.listener.sock, *self.channels()])
            self.workers.add(spare.pid)  # reaped with the workers, used or not
            if spare.hand_over(conn, request, fds):
                self.working.append(spare)
                return True
        return False


# -- the listening socket --------------------------------------------------------------


class _Listener:
    """The listening socket at `path`, bound in a directory only this user can enter."""

    def __init__(self, path: str) -> None:
        self.path = path
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
        staging = f"{path}.{os.getpid()}"
        _unlink(staging)
        old_umask = os.umask(0o077)
        try:
            self.sock.bind(staging)
        finally:
            os.umask(old_umask)
        self.sock.listen(64)
        self.sock.setblocking(False)  # a peer gone between select and accept blocks nothing
        os.replace(staging, path)  # a client sees the old socket or this one, never none
        self.inode = os.stat(path).st_ino

    def still_ours(self) -> bool:
        """False once another server took the path over (this one then leaves quietly)."""
        try:
            return os.stat(self.path).st_ino == self.inode
        except OSError:
            return False

    def close(self) -> None:
        self.sock.close()
        if self.still_ours():
            _unlink(self.path)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


# -- requests ---------------------------------------------------------------------------


def _read_request(conn: socket.socket) -> tuple[dict[str, Any] | None, list[int]]:
    conn.settimeout(_REQUEST_WAIT_S)
    try:
        data, fds, _flags, _addr = socket.recv_fds(conn, MAX_MESSAGE, 3)
        request = marshal.loads(data) if data else None
    except (OSError, ValueError, EOFError, TypeError):
        return None, []
    return (request if isinstance(request, dict) else None), list(fds)


def _refusal(
    conn: socket.socket,
    request: dict[str, Any] | None,
    start_env: dict[str, str],
    own_cgroup: str,
) -> str | None:
    """Why this peer's request must not be served here, or None."""
    peer_pid, peer_uid = peer_credentials(conn)
    if peer_uid != os.getuid():
        return "another user's request"
    for namespace in ("mnt", "pid"):
        if _namespace(peer_pid, namespace) != _namespace(os.getpid(), namespace):
            return f"a request from another {namespace} namespace"
    if request is None:
        return "no readable request"
    if request.get("protocol") != PROTOCOL or tuple(request.get("identity", ())) != identity():
        return "a request from another assay or interpreter"
    if request.get("op") != "run":
        return None
    env = request.get("env")
    if not isinstance(env, dict) or _start_up_env(env) != start_env:
        return "its environment sets the interpreter up differently"
    if request.get("interpreter") != interpreter_options():
        return "its interpreter was started with other options"
    if request.get("cgroup") != own_cgroup:
        return "a request from another cgroup"
    return None


def _namespace(pid: int, kind: str) -> str:
    try:
        return os.readlink(f"/proc/{pid}/ns/{kind}")
    except OSError:
        return f"unknown:{pid}"


def _start_up_env(env: Mapping[str, str]) -> dict[str, str]:
    return {
        name: value
        for name, value in env.items()
        if name.startswith(_START_UP_PREFIXES) or name in _START_UP_NAMES
    }


# -- workers ----------------------------------------------------------------------------


def _reap(workers: set[int]) -> int:
    """Collect the workers that ended; returns how many of them refused their client."""
    refused = 0
    for pid in list(workers):
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done, status = pid, 0
        if done:
            workers.discard(pid)
            if os.WIFEXITED(status) and os.WEXITSTATUS(status) == REFUSED_EXIT:
                refused += 1
    return refused


# -- start-up ---------------------------------------------------------------------------


def _preload() -> None:
    import importlib
    import pkgutil

    from assay import dataclass_bytecode, pattern_code

    dataclass_bytecode.install()
    pattern_code.install()
    for name in PRELOADED:
        importlib.import_module(name)
    for package_name in PRELOADED_PACKAGES:
        package = importlib.import_module(package_name)
        for module in pkgutil.iter_modules(package.__path__, f"{package_name}."):
            importlib.import_module(module.name)
    from assay.build_identity import assay_build

    assay_build()  # once, for every worker: the server stops when assay's code changes
    dataclass_bytecode.save()
    pattern_code.save()


def main(argv: list[str]) -> int:
    """`python -m assay.warm_server PATH IDLE_TIMEOUT`: what `assay server start` runs."""
    path, idle = argv
    os.chdir("/")  # hold no directory of the caller's
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _exit_on_signal)  # so that the socket goes with it
    return serve(path, idle_timeout=float(idle))


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(0)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

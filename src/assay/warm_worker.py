"""The warm server's workers: each becomes one client's twin and runs its command.

A worker is forked before its request arrives (a *spare*, as Android's zygote keeps
unspecialised processes ready). A process forked on demand pays twice while its client
waits: for the fork, and then for a copy of every page of the server's memory it writes
to (Python writes reference counts on every object it touches). A spare pays both while
the server is idle: when no request has come after a moment, it has the kernel copy its
writable memory in advance (`MADV_POPULATE_WRITE`, Linux 5.14).

The server checks a request before handing it over (`hand_over`); the spare then takes
the client's place: its arguments, directory, environment, umask, resource limits and
standard streams, and runs the command through the same entry point a cold start does.
An idle spare also makes what a command in the bubblewrap sandbox first waits for
(`assay.sandbox.bwrap.start_ahead`): its cgroup, and its launch joined to it.
"""

from __future__ import annotations

import marshal
import os
import select
import signal
import socket
import sys
from typing import Any

from assay.warm_client import MAX_MESSAGE

__all__ = ["REFUSED_EXIT", "Spare", "send"]

#: A worker's exit status when it could not take its client's place (EX_TEMPFAIL): the
#: client then ran the command itself, and the server counts a refusal, not a run.
REFUSED_EXIT = 75

#: How long a spare waits for a request before copying the server's memory: a spare made
#: just after a hand-over would otherwise take CPU from the worker serving it.
PREFAULT_AFTER_S = 0.25

#: madvise(2)'s MADV_POPULATE_WRITE: fault pages in writable (breaking copy-on-write)
#: without changing what they hold. Older kernels refuse it, and nothing is lost.
_MADV_POPULATE_WRITE = 23


class Spare:
    """A forked worker, waiting for its request on one end of a socket pair."""

    def __init__(self, pid: int, channel: socket.socket) -> None:
        self.pid = pid
        self.channel = channel

    @classmethod
    def fork(cls, *, closed_in_child: list[socket.socket]) -> Spare:
        """A new spare; `closed_in_child` are the server's sockets it must not hold."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid:
            theirs.close()
            return cls(pid, ours)
        code = 70  # EX_SOFTWARE: the worker failed before it could report
        try:
            ours.close()
            for sock in closed_in_child:
                sock.close()
            code = _serve_one(theirs)
        finally:
            os._exit(code)

    def hand_over(self, conn: socket.socket, request: dict[str, Any], fds: list[int]) -> bool:
        """Give the spare its client (the connection and the client's standard streams);
        False when it is gone (its channel then closed). A worker sends one message back
        on its channel as it ends: its standby hint (`pass_on`)."""
        try:
            socket.send_fds(self.channel, [marshal.dumps(request)], [conn.fileno(), *fds])
            return True
        except OSError:
            self.channel.close()
            return False

    def pass_on(self, hint: bytes) -> None:
        """Tell the spare where the last run in place ran (`assay.sandbox.bwrap.stand_by`)."""
        try:
            self.channel.send(hint)
        except OSError:
            pass  # gone: the server forks another

    def dismiss(self) -> None:
        """The spare sees its channel close, and exits."""
        self.channel.close()


def _serve_one(channel: socket.socket) -> int:
    """In the spare: wait for the request, get ready for it meanwhile (the prefault, the
    cgroup made ahead, and a standby where the server passed on a hint), then serve it."""
    from assay.sandbox import bwrap

    ready = False
    hint: dict[str, Any] | None = None
    try:
        while True:
            waiting = not ready or hint is not None
            if waiting and not select.select([channel], [], [], PREFAULT_AFTER_S)[0]:
                if not ready:
                    _prefault()
                    bwrap.start_ahead()
                    ready = True
                if hint is not None:
                    bwrap.stand_by(hint)
                    hint = None
                continue
            try:
                data, fds, _flags, _addr = socket.recv_fds(channel, MAX_MESSAGE, 4)
            except OSError:
                return 0
            if data and not fds:
                hint = _hint(data)
                continue
            if not data or len(fds) != 4:
                for fd in fds:
                    os.close(fd)
                return 0  # dismissed, or the server is gone
            conn = socket.socket(fileno=fds[0])
            return work(conn, marshal.loads(data), fds[1:], channel)
    finally:
        bwrap.drop_ahead()


def _hint(data: bytes) -> dict[str, Any] | None:
    """The standby hint in a message from the server, or None when it holds none."""
    try:
        message = marshal.loads(data)
    except (ValueError, EOFError, TypeError):
        return None
    if isinstance(message, tuple) and len(message) == 2 and message[0] == "standby":
        return message[1] if isinstance(message[1], dict) else None
    return None


def _prefault() -> None:
    """Copy now every page of private writable memory shared with the server, which the
    run would otherwise copy one fault at a time."""
    import ctypes

    madvise = ctypes.CDLL(None, use_errno=True).madvise
    madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    try:
        with open("/proc/self/maps") as maps:
            regions = [line.split(maxsplit=2)[:2] for line in maps]
    except OSError:
        return
    for bounds, perms in regions:
        if perms == "rw-p":
            start, end = (int(address, 16) for address in bounds.split("-"))
            madvise(start, end - start, _MADV_POPULATE_WRITE)


def work(
    conn: socket.socket,
    request: dict[str, Any],
    fds: list[int],
    server: socket.socket | None = None,
) -> int:
    """In the worker: become the client's twin, run its command, report; then tell the
    `server` what the sandbox of its last command in place was made of, if it ran one
    (for the next worker to build ahead)."""
    try:
        _become_client(request, fds)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        send(conn, ("refused", f"could not take the client's place: {exc}"))
        return REFUSED_EXIT
    conn.settimeout(None)
    send(conn, ("ready", os.getpid()))
    _interrupt_when_client_leaves(conn)
    from assay.cli import main

    try:
        code = main(list(request["args"]))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    _release_streams()
    # What is left once the client has its answer is the worker's own ending (what it made
    # ahead and no run took): the client leaving (`watch`'s SIGTERM) must not cut it short,
    # or its scratch directories and cgroups are left to a later run's sweep.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if server is not None:
        _send_hint(server)
    send(conn, ("exit", code))
    return 0


def _release_streams() -> None:
    """Flush the client's standard streams and let go of them: what the worker does after
    its run (ending what it made ahead and no run took) must not keep a caller that reads
    the client's output until it closes waiting."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    try:
        null = os.open(os.devnull, os.O_RDWR)
    except OSError:
        return
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


def _send_hint(server: socket.socket) -> None:
    bwrap = sys.modules.get("assay.sandbox.bwrap")
    hint = bwrap.standby_hint() if bwrap is not None else None
    if hint is not None:
        try:
            server.send(marshal.dumps(("standby", hint)))
        except (OSError, ValueError):
            pass  # the next run starts as it would have


def send(conn: socket.socket, message: tuple[Any, ...]) -> None:
    try:
        conn.sendall(marshal.dumps(message))
    except OSError:
        pass


def _become_client(request: dict[str, Any], fds: list[int]) -> None:
    import resource

    for signum in (signal.SIGCHLD, signal.SIGHUP, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if len(fds) != 3:
        raise ValueError("the client did not pass its three standard streams")
    for target, fd in enumerate(fds):
        os.dup2(fd, target, inheritable=True)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    os.umask(request["umask"])
    for name, (soft, hard) in request["rlimits"].items():
        which = getattr(resource, name, None)
        if which is not None and resource.getrlimit(which) != (soft, hard):
            resource.setrlimit(which, (soft, hard))
    sys.argv = [request["argv0"], *request["args"]]
    _reopen_streams(request["streams"])


def _reopen_streams(shapes: list[tuple[str, str, bool, bool] | None]) -> None:
    """The standard streams as the client's interpreter set them up, on its descriptors."""
    opened: list[Any] = []
    for fd, shape in enumerate(shapes):
        if shape is None:
            opened.append(None)
            continue
        encoding, errors, line_buffering, write_through = shape
        # Never closed: they live as long as the worker, as the interpreter's own do.
        if fd == 0:
            stream = open(fd, encoding=encoding, errors=errors, closefd=False)  # noqa: SIM115
        else:
            stream = open(fd, "w", encoding=encoding, errors=errors, closefd=False)  # noqa: SIM115
            stream.reconfigure(line_buffering=line_buffering, write_through=write_through)
        opened.append(stream)
    sys.stdin = sys.__stdin__ = opened[0]  # type: ignore[misc]
    sys.stdout = sys.__stdout__ = opened[1]  # type: ignore[misc]
    sys.stderr = sys.__stderr__ = opened[2]  # type: ignore[misc]


def _interrupt_when_client_leaves(conn: socket.socket) -> None:
    """A client killed outright cannot pass an interrupt on: its socket closing is one
    (the worker then stops every process it started, as on SIGTERM)."""
    import threading

    def watch() -> None:
        try:
            while conn.recv(1):
                pass
        except OSError:
            pass
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="assay-client-watch", daemon=True).start()

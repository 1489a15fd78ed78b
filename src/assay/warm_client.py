"""The client side of `assay server`: hand this invocation to a warm process, if one runs.

A fresh `assay run` spends most of its time importing and defining the library before
the command starts (about 0.1 s against a 12 ms interpreter start). The warm server
(`assay.warm_server`) has all of that loaded; it forks a worker per invocation, and the
worker runs the command with this process's arguments, directory, environment, umask,
resource limits and standard streams (the descriptors themselves, passed over the
socket), so that what it prints and the exit code it gives are those of a cold run.

This module runs before anything else is loaded, so it imports only what the socket
needs. Whenever the server is absent, refuses (it does whenever the worker could not be
this process's twin) or cannot be reached, `run_warm` returns None before anything has
run, and the caller runs the command itself: the server only ever saves time.
"""

from __future__ import annotations

import marshal
import os
import sys

TYPE_CHECKING = False  # not typing's: importing typing costs the client 3 ms
if TYPE_CHECKING:
    from _socket import socket as Socket

__all__ = [
    "COMMANDS",
    "DEFAULT_IDLE_TIMEOUT_S",
    "NO_ANSWER_EXIT",
    "NO_SERVER_VAR",
    "SERVER_VAR",
    "ask",
    "identity",
    "interpreter_options",
    "peer_credentials",
    "read_or_empty",
    "run_warm",
    "socket_path",
    "start_in_background",
]

#: The commands a warm server answers: the ones agents call in loops.
COMMANDS = frozenset({"run", "verify", "plan", "probe", "hook"})

#: Set (to anything but empty) to never use a warm server.
NO_SERVER_VAR = "ASSAY_NO_SERVER"

#: `auto`: where no server runs, start one (this invocation runs without it).
SERVER_VAR = "ASSAY_SERVER"

#: How long a server waits for work before it exits (as Gradle's daemon does, but sooner).
DEFAULT_IDLE_TIMEOUT_S = 30 * 60.0

#: The exit code when the worker vanished before giving one: nothing was verified.
NO_ANSWER_EXIT = 3

#: Version of the request's shape; a server of another shape refuses it.
PROTOCOL = 1

#: Largest message either side sends (a request carries the whole environment).
MAX_MESSAGE = 4 * 1024 * 1024

#: Descriptors 0, 1 and 2 as SCM_RIGHTS carries them (native C ints).
_STANDARD_STREAMS = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2))

#: The signals a client passes on to its worker, as a shell passes them to a child.
FORWARDED_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


def identity() -> tuple[str, str]:
    """What a server must share with its clients: the interpreter and this package."""
    return (sys.executable, os.path.dirname(os.path.abspath(__file__)))


def interpreter_options() -> tuple[object, ...]:
    """How the interpreter was started (`-O`, `-W`, `-X`, `-I`...): a worker forked from a
    server started otherwise would not behave as this process would. All but `-P`, which
    every server is started with (`start_in_background`)."""
    flags = tuple(
        (name, getattr(sys.flags, name))
        for name in type(sys.flags).__match_args__
        if name != "safe_path"
    )
    return (flags, tuple(sys.warnoptions), sorted(sys._xoptions.items()))


def socket_path() -> str:
    """Where the server for this interpreter and package listens (in assay's per-user
    directory, which no sandbox shows)."""
    import zlib  # builtin and small; hashlib would cost the client more than the socket

    from assay.state_dir import cache_dir_name

    key = zlib.crc32("\0".join(identity()).encode("utf-8", "surrogateescape"))
    return os.path.join(cache_dir_name(), f"server-{key:08x}.sock")


def run_warm(args: list[str]) -> int | None:
    """Run `assay ARGS` in the warm server's worker; its exit code, or None when no
    worker took it (nothing ran: the caller runs it)."""
    if os.environ.get(NO_SERVER_VAR):
        return None
    path = socket_path()
    if not os.path.exists(path):
        if os.environ.get(SERVER_VAR) == "auto":
            start_in_background(path, idle_timeout=DEFAULT_IDLE_TIMEOUT_S)
        return None
    import _socket  # not `socket`: its enums cost the client more than the rest of its work

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_SEQPACKET | _socket.SOCK_CLOEXEC)
    try:
        _connect(sock, path)
        sock.sendmsg(
            [marshal.dumps(_request(args))],
            [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, _STANDARD_STREAMS)],
        )
        answer = _receive(sock)
    except (OSError, ValueError, EOFError, TypeError):
        answer = None
    if answer is None or answer[0] != "ready" or len(answer) != 2:
        sock.close()
        return None  # refused, unreachable, or gone before it started: nothing ran
    try:
        return _wait_for_exit(sock, worker_pid=answer[1])
    finally:
        sock.close()


def ask(path: str, op: str) -> tuple[object, ...] | None:
    """The answer of this user's server at `path` to `op` (`status`, `stop`), or None when
    none answers."""
    import _socket

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_SEQPACKET | _socket.SOCK_CLOEXEC)
    sock.settimeout(5.0)
    try:
        _connect(sock, path)
        sock.sendall(marshal.dumps({"op": op, "protocol": PROTOCOL, "identity": identity()}))
        answer = _receive(sock)
    except (OSError, ValueError, EOFError, TypeError):
        return None
    finally:
        sock.close()
    return answer if answer is not None and len(answer) >= 2 else None


def start_in_background(path: str, *, idle_timeout: float) -> int | None:
    """Start a server at `path` that outlives this process (a session of its own, no
    terminal, no standard streams), without waiting for it; its pid, or None when it
    could not be started (nothing is lost: this invocation runs without it).

    `-P`: `-m` would otherwise put the working directory first on the module path, and
    the working directory is often the repository under verification: its own `assay/`
    or `yaml.py` would be imported by the server, on the host."""
    argv = [sys.executable, "-P", "-m", "assay.warm_server", path, str(idle_timeout)]
    devnull = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
    try:
        return os.posix_spawn(sys.executable, argv, os.environ, file_actions=devnull, setsid=True)
    except OSError:
        return None


def _request(args: list[str]) -> dict[str, object]:
    from assay.inherited import current_umask, resource_limits

    return {
        "op": "run",
        "protocol": PROTOCOL,
        "identity": identity(),
        "interpreter": interpreter_options(),
        "argv0": sys.argv[0] if sys.argv else "assay",
        "args": list(args),
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "umask": current_umask(),
        "rlimits": resource_limits(),
        "cgroup": read_or_empty("/proc/self/cgroup"),
        "streams": [_stream_shape(sys.stdin), _stream_shape(sys.stdout), _stream_shape(sys.stderr)],
    }


def _connect(sock: Socket, path: str) -> None:
    """Connect to `path`, and only to a server of this user: another's would get this
    process's environment and terminal, and be taken at its word for the exit code."""
    sock.connect(path)
    if peer_credentials(sock)[1] != os.getuid():
        raise PermissionError(f"the server at {path} is another user's")


def peer_credentials(sock: Socket) -> tuple[int, int]:
    """The pid and uid of the process at the other end of a Unix socket (SO_PEERCRED)."""
    import _socket

    creds = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)  # pid, uid, gid
    return int.from_bytes(creds[0:4], sys.byteorder), int.from_bytes(creds[4:8], sys.byteorder)


def _stream_shape(stream: object) -> tuple[str, str, bool, bool] | None:
    """How the interpreter set up one standard stream, for the worker to do the same."""
    if stream is None:
        return None
    return (
        str(getattr(stream, "encoding", "utf-8")),
        str(getattr(stream, "errors", "strict")),
        bool(getattr(stream, "line_buffering", False)),
        bool(getattr(stream, "write_through", False)),
    )


def read_or_empty(path: str) -> str:
    """A small text file's content (`/proc/self/cgroup`), or "" when it cannot be read."""
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError:
        return ""


def _receive(sock: Socket) -> tuple[object, ...] | None:
    data = sock.recv(MAX_MESSAGE)
    if not data:
        return None
    answer = marshal.loads(data)
    return answer if isinstance(answer, tuple) and answer else None


def _wait_for_exit(sock: Socket, *, worker_pid: object) -> int:
    """Pass this process's interrupts on to the worker until it gives its exit code.
    The command has started: from here on, no answer is a non-passing one."""
    # Builtin and loaded already (no stub, hence the ignore); `signal` would load enum.
    import _signal as signal  # type: ignore[import-not-found]

    def forward(signum: int, frame: object) -> None:
        if not isinstance(worker_pid, int) or worker_pid <= 0:
            return
        try:
            os.kill(worker_pid, signum)
        except OSError:
            pass

    previous = {}
    for name in FORWARDED_SIGNALS:
        number = getattr(signal, name)
        previous[number] = signal.signal(number, forward)
    try:
        answer = _receive(sock)
    except (OSError, ValueError, EOFError, TypeError):
        answer = None
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    if answer is None or answer[0] != "exit" or len(answer) != 2 or not isinstance(answer[1], int):
        sys.stderr.write(
            "assay: the warm server's worker ended without an exit code; nothing was "
            f"verified (set {NO_SERVER_VAR}=1 to run without the server)\n"
        )
        return NO_ANSWER_EXIT
    return answer[1]

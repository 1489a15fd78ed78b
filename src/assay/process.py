"""The one way assay runs a process: argv, deadline, whole-tree kill, bounded output.

Defaults are fail-closed, and each one says why:

- stdin is /dev/null, because a child that reads stdin otherwise hangs until
  its deadline and the hang looks like slowness, not like the bug it is;
- the child gets its own session and process group, because killing only the
  child leaves its children holding the output pipes and running on;
- the environment is scrubbed of secret-looking variables unless a caller asks
  for more, because code under test is untrusted;
- the call returns at the deadline (plus the kill grace period) even when a
  process we could not kill still holds the pipes open: output collection stops
  at that point and the result says so.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import re
import resource
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from assay import reaper, scratch
from assay.environment import EnvPolicy, build_env
from assay.errors import AssayError
from assay.output import HEAD_BYTES, TAIL_BYTES, BoundedBuffer, CapturedOutput
from assay.process_result import ProcessResult, StartFailure

#: Time between SIGTERM to the process tree and SIGKILL. Tests shrink it.
TERM_GRACE_SECONDS = 1.0
#: After the main process exits, how long to keep reading pipes held open by
#: leftovers that are being killed.
DRAIN_SECONDS = 0.5
#: Bytes per read from a pipe.
READ_CHUNK = 256 * 1024
#: Requested pipe capacity (Linux F_SETPIPE_SZ); bigger pipes mean fewer wake-ups.
PIPE_CAPACITY = 1024 * 1024
_F_SETPIPE_SZ = 1031


class InvalidRun(AssayError, ValueError):
    """The arguments to `run_process` are unusable; nothing was started."""


def _validate(
    argv: Sequence[str],
    cwd: str | os.PathLike[str] | None,
    timeout: float | None,
    no_output_timeout: float | None = None,
) -> tuple[tuple[str, ...], str]:
    if isinstance(argv, str | bytes):
        raise InvalidRun("argv must be a sequence of strings, not one string (no shell is used)")
    argv = tuple(argv)
    if not argv:
        raise InvalidRun("argv is empty: there is no command to run")
    if not all(isinstance(a, str) for a in argv):
        raise InvalidRun("every argv element must be a string")
    if any("\0" in a for a in argv):
        raise InvalidRun("argv contains a NUL byte")
    for name, seconds in (("timeout", timeout), ("no_output_timeout", no_output_timeout)):
        if seconds is None:
            continue
        if not isinstance(seconds, int | float) or math.isnan(seconds):
            raise InvalidRun(f"{name} must be a number of seconds, got {seconds!r}")
        if seconds < 0:
            raise InvalidRun(f"{name} must be >= 0 seconds, got {seconds}")
    resolved = os.getcwd() if cwd is None else os.fspath(cwd)
    if not os.path.isdir(resolved):
        raise InvalidRun(f"working directory does not exist or is not a directory: {resolved}")
    return argv, resolved


def run_process(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
    no_output_timeout: float | None = None,
    env: Mapping[str, str] | None = None,
    env_policy: EnvPolicy = EnvPolicy.SCRUB,
    pin_home: bool = False,
    head_bytes: int = HEAD_BYTES,
    tail_bytes: int = TAIL_BYTES,
    shell: bool = False,
    started: Started | None = None,
    watch: Callable[[], str | None] | None = None,
) -> ProcessResult:
    """Run `argv` to completion or to its deadline and return what happened.

    `timeout` is seconds from start (None or 0: no deadline). `no_output_timeout` stops the
    run once that many seconds pass with nothing on stdout or stderr. `env` is laid over
    the environment `env_policy` builds. `pin_home` points HOME at a fresh scratch
    directory removed afterwards. `shell=True` runs argv[0] as a /bin/sh script
    and must be asked for explicitly. `started`: a process `start_process` started
    ahead of its run, supervised from now on in place of starting `argv` (the deadline
    counts from now). `watch`, asked every `WATCH_SECONDS` while the run goes on, stops it
    as a deadline would the moment it answers why (`ProcessResult.stopped_for`).

    Never raises for anything the child does; raises `InvalidRun` for bad arguments.
    """
    argv, resolved_cwd = _validate(argv, cwd, timeout, no_output_timeout)
    if shell:
        argv = ("/bin/sh", "-c", *argv)
    scratch_home = _make_scratch_home() if pin_home and started is None else None
    if started is None:
        started = _start(argv, resolved_cwd, build_env(env_policy, env, home=scratch_home))
    deadline = None if not timeout else time.monotonic() + timeout
    _tell_started()
    try:
        return _Execution(
            started,
            _Deadlines(deadline, no_output_timeout or None),
            head_bytes,
            tail_bytes,
            watch,
        ).run()
    finally:
        if scratch_home is not None:
            _remove_tree(scratch_home)


_listening = threading.local()


@contextlib.contextmanager
def telling_start(callback: Callable[[], None]) -> Iterator[None]:
    """Within the block, `callback` is called (in this thread) as each process `run_process`
    runs here begins its supervision: the command is running."""
    before = getattr(_listening, "callback", None)
    _listening.callback = callback
    try:
        yield
    finally:
        _listening.callback = before


def _tell_started() -> None:
    callback = getattr(_listening, "callback", None)
    if callback is not None:
        callback()


@dataclass(slots=True)
class Started:
    """A process started the one way assay starts them, not yet supervised: `run_process`
    (`started=`) takes it over. Until then it is killed on an interrupt like any run's."""

    argv: tuple[str, ...]
    cwd: str
    env: dict[str, str]
    """The environment it was started with, its run's marker left out."""
    marker: str
    proc: subprocess.Popen[bytes] | None
    """None when it could not be started (`failure` says why)."""
    failure: OSError | None = None
    since: int | None = None
    """Its start in clock ticks: the sweeps of its run look at nothing older."""

    def discard(self, *, alone: bool = False) -> None:
        """Kill and reap it, unsupervised (a process started for a run that never came).
        `alone`: it was given nothing to run, so it started nothing: its process group is
        all there is to kill, without a search for the run's other processes."""
        proc = self.proc
        if proc is None:
            return
        if proc.returncode is None:
            if alone:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
            else:
                reaper.kill_run(proc.pid, self.marker, keep=proc.pid, since=self.since)
            proc.returncode = _reap(proc.pid).returncode
        _ACTIVE.discard(proc.pid)
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()


def start_process(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    env_policy: EnvPolicy = EnvPolicy.SCRUB,
    pass_fds: Sequence[int] = (),
    stdin: int | None = None,
) -> Started:
    """Start `argv` as `run_process` would (stdin /dev/null, a session of its own, output
    piped, a marker in its environment), plus `pass_fds`, and leave it unsupervised: for a
    process that must wait for what its run gives it. `stdin`: a descriptor to read in
    place of /dev/null (a pipe its run writes to). Raises `InvalidRun` for bad arguments; a
    process that could not start is returned with its failure."""
    argv, resolved_cwd = _validate(argv, cwd, None)
    return _start(argv, resolved_cwd, build_env(env_policy, env), pass_fds, stdin)


def _start(
    argv: tuple[str, ...],
    cwd: str,
    env: dict[str, str],
    pass_fds: Sequence[int] = (),
    stdin: int | None = None,
) -> Started:
    marker = os.urandom(16).hex()
    reaper.ensure_subreaper()
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env={**env, reaper.MARKER_VAR: marker},
            stdin=subprocess.DEVNULL if stdin is None else stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            close_fds=True,
            pass_fds=tuple(pass_fds),
        )
    except OSError as exc:
        return Started(argv, cwd, env, marker, None, exc)
    # Read before anything could reap the main process (it is ours to reap), so the pid
    # is still its own.
    started = Started(argv, cwd, env, marker, proc, since=reaper.start_ticks(proc.pid))
    _ACTIVE.add(proc.pid, marker)
    return started


def _address_space_limit(pid: int) -> int | None:
    """The RLIMIT_AS process `pid` runs under (a sandbox's launch sets its own), or ours,
    which it inherited, when it has exited already; None for no limit."""
    try:
        soft, _ = resource.prlimit(pid, resource.RLIMIT_AS)
    except OSError:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY else soft


class _Execution:
    """One process tree from its start to its reaping."""

    def __init__(
        self,
        started: Started,
        deadlines: _Deadlines,
        head_bytes: int,
        tail_bytes: int,
        watch: Callable[[], str | None] | None = None,
    ) -> None:
        self.started = started
        self.watch = watch
        self.argv = started.argv
        self.cwd = started.cwd
        self.deadlines = deadlines
        self.marker = started.marker
        self.out = BoundedBuffer(head_bytes, tail_bytes)
        self.err = BoundedBuffer(head_bytes, tail_bytes)
        self.since = started.since

    def run(self) -> ProcessResult:
        begun = time.monotonic()
        proc = self.started.proc
        if proc is None:
            assert self.started.failure is not None
            return self._start_failed(self.started.failure, time.monotonic() - begun)
        sandbox_init = reaper.SandboxInitClaim(proc.pid)
        try:
            with reaper.waiting_on(proc.pid, self.since):  # its status is ours to read, no sweep's
                try:
                    return self._supervise(proc, begun, sandbox_init)
                finally:
                    if proc.returncode is None:
                        # Supervision did not finish: nothing of this run outlives it all the same.
                        reaper.kill_run(proc.pid, self.marker, keep=proc.pid, since=self.since)
                        _reap(proc.pid)
        finally:
            sandbox_init.release()
            _ACTIVE.discard(proc.pid)
            for pipe in (proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()
            # Orphans that died as the run ended (bubblewrap's init among them) are ours now.
            reaper.reap_adopted()

    def _start_failed(self, exc: OSError, duration: float) -> ProcessResult:
        if isinstance(exc, FileNotFoundError):
            failure = StartFailure.NOT_FOUND
        elif isinstance(exc, PermissionError) or exc.errno == errno.EACCES:
            failure = StartFailure.PERMISSION_DENIED
        else:
            failure = StartFailure.OS_ERROR
        return ProcessResult(
            argv=self.argv,
            cwd=self.cwd,
            exit_code=None,
            signal=None,
            timed_out=False,
            start_failure=failure,
            start_error=f"{self.argv[0]}: {exc.strerror or exc}",
            duration_s=duration,
            stdout=CapturedOutput.empty(),
            stderr=CapturedOutput.empty(),
        )

    def _supervise(
        self, proc: subprocess.Popen[bytes], started: float, sandbox_init: reaper.SandboxInitClaim
    ) -> ProcessResult:
        assert proc.stdout is not None and proc.stderr is not None
        address_space = _address_space_limit(proc.pid)
        pipes = _Pipes({proc.stdout.fileno(): self.out, proc.stderr.fileno(): self.err})
        exit_fd = reaper.pidfd(proc.pid)
        if exit_fd is not None:
            pipes.watch(exit_fd)
        exited = False
        timed_out = False
        stopped_for: str | None = None
        deadlines = self.deadlines
        deadlines.heard(time.monotonic())
        next_watch = time.monotonic() + WATCH_SECONDS
        try:
            # Phase 1: pump output until the main process exits or a deadline passes.
            while not exited:
                now = time.monotonic()
                if (wait := deadlines.left(now)) is not None and wait <= 0:
                    if deadlines.only_quiet(now) and self._building(proc.pid, deadlines):
                        deadlines.heard(now)
                        continue
                    timed_out = True
                    break
                if self.watch is not None and now >= next_watch:
                    if (stopped_for := self.watch()) is not None:
                        break  # killed with the rest of its run below, at once
                    next_watch = now + WATCH_SECONDS
                if self.watch is not None:
                    wait = max(next_watch - now, 0) if wait is None else min(wait, next_watch - now)
                if exit_fd is None:
                    wait = _EXIT_POLL_SECONDS if wait is None else min(wait, _EXIT_POLL_SECONDS)
                if sandbox_init.looking:
                    every = sandbox_init.EVERY_SECONDS
                    wait = every if wait is None else min(wait, every)
                if pipes.pump(wait):
                    deadlines.heard(time.monotonic())
                sandbox_init.look()
                exited = _has_exited(proc.pid)
        finally:
            if exit_fd is not None:
                pipes.unwatch(exit_fd)
        leaves: list[reaper.Leaf] = []
        said_by_deadline = None
        if timed_out:
            pipes.pump(0)  # what was written before the deadline and not read yet
            said_by_deadline = (self.out.result(), self.err.result())
            leaves = reaper.leaf_commands(proc.pid, self.marker, since=self.since)
            self._await_stacks(leaves, pipes, proc.pid)
            self._terminate(proc.pid, pipes)
        # Phase 2: the main process is done, or about to be killed. It is not reaped yet, so
        # its process group id cannot be reused: everything it left behind dies first.
        swept = reaper.kill_run(proc.pid, self.marker, keep=proc.pid, since=self.since)
        status = _reap(proc.pid)
        # Phase 3: collect what is still in the pipes, but never wait on a holder forever.
        drain_end = time.monotonic() + DRAIN_SECONDS
        while pipes.open and (remaining := drain_end - time.monotonic()) > 0:
            pipes.pump(remaining)
        output_complete = not pipes.open
        pipes.close()
        proc.returncode = status.returncode  # we reaped it; keep Popen consistent
        exit_code, killed_by = status.exit_code, status.signal
        if (
            timed_out
            and killed_by is None
            and exit_code is not None
            and exit_code in _KILLED_EXIT_CODES
        ):
            # A sandbox's outer bwrap outlived its command, which the deadline's sweep
            # killed first (`reaper.signal_run`), and passed its fate on as 128 + the signal.
            killed_by = exit_code - 128
            exit_code = None
        return ProcessResult(
            argv=self.argv,
            cwd=self.cwd,
            exit_code=exit_code,
            signal=killed_by,
            timed_out=timed_out,
            start_failure=None,
            start_error=None,
            duration_s=time.monotonic() - started,
            stdout=self.out.result(),
            stderr=self.err.result(),
            cpu_s=status.cpu_s + swept.cpu_s,
            peak_rss_bytes=max(status.peak_rss_bytes, swept.max_rss_bytes),
            output_complete=output_complete,
            silent_s=deadlines.silence_that_stopped(timed_out),
            stopped_for=stopped_for,
            address_space_bytes=address_space,
            running_at_deadline=tuple(leaf.argv for leaf in leaves),
            threads_at_deadline=tuple(leaf.threads for leaf in leaves),
            said_by_deadline=said_by_deadline,
        )

    def _building(self, pid: int, deadlines: _Deadlines) -> bool:
        """Whether the run, quiet for its whole no-output limit, is starting programs: a
        build's compilers, one after another (`go test -json` prints nothing while it
        builds the test binaries, and a cold cache's `-race` build outlasted the limit). A
        hung test is stuck in what it started long before."""
        lately = min(BUILDING_SECONDS, (deadlines.no_output_s or 0) / 4)
        return reaper.started_lately(pid, self.marker, lately, since=self.since)

    def _await_stacks(self, leaves: Sequence[reaper.Leaf], pipes: _Pipes, pid: int) -> None:
        """Ask the leaves that print their stacks on a signal for them (`assay.stack_dumps`),
        and keep draining until they have exited and what relays their output has passed
        it on (the main process exited, or a moment went by), within a bound."""
        from assay.stack_dumps import DUMP_WAIT_SECONDS, RELAY_SECONDS, ask_for_stacks

        asked = ask_for_stacks(leaves)
        if not asked:
            return
        try:
            reaper.await_pidfds(
                asked, DUMP_WAIT_SECONDS, lambda: pipes.pump(_EXIT_POLL_SECONDS / 5)
            )
            # The relay's own moment, from the dumps' end: within the dumps' wait, a dump
            # slow to come on a loaded machine left `go test` none to pass it on.
            relayed = time.monotonic() + RELAY_SECONDS
            while time.monotonic() < relayed and not _has_exited(pid):
                pipes.pump(_EXIT_POLL_SECONDS / 5)
        finally:
            for fd in asked:
                os.close(fd)

    def _terminate(self, pid: int, pipes: _Pipes) -> None:
        """TERM the whole tree and keep draining until it is gone, every survivor ignores
        TERM, or the grace period ends (the caller then KILLs whatever is left, and reaps)."""
        reaper.signal_run(pid, self.marker, signal.SIGTERM, since=self.since)
        grace_end = time.monotonic() + TERM_GRACE_SECONDS
        while (remaining := grace_end - time.monotonic()) > 0:
            if not reaper.awaiting(pid, self.marker, signal.SIGTERM, since=self.since):
                return
            pipes.pump(min(_EXIT_POLL_SECONDS / 5, remaining))


#: How often a run's `watch` is asked whether it must stop.
WATCH_SECONDS = 0.25
#: A run quiet for its no-output limit is building, not hung, while a process of it
#: started within this long (a quarter of the limit at most).
BUILDING_SECONDS = 5.0
#: How a launcher (bubblewrap, a shell) reports a command a deadline's sweep killed.
_KILLED_EXIT_CODES = (128 + signal.SIGTERM, 128 + signal.SIGKILL)
#: Without a pidfd, how often to look for the main process's exit.
_EXIT_POLL_SECONDS = 0.05


class _Deadlines:
    """When a run is stopped: at a fixed time, or once it has printed nothing for a while."""

    def __init__(self, fixed: float | None, no_output_s: float | None) -> None:
        self.fixed = fixed
        self.no_output_s = no_output_s
        self.last_output = 0.0

    def heard(self, now: float) -> None:
        """Output arrived (or the run began) at `now`."""
        self.last_output = now

    def left(self, now: float) -> float | None:
        """Seconds until the nearer deadline (<= 0: passed), or None when there is none."""
        ends = [self.fixed] if self.fixed is not None else []
        if self.no_output_s is not None:
            ends.append(self.last_output + self.no_output_s)
        return min(ends) - now if ends else None

    def only_quiet(self, now: float) -> bool:
        """Whether the no-output limit has passed at `now` and the fixed deadline has not."""
        return (
            self.no_output_s is not None
            and self.last_output + self.no_output_s <= now
            and (self.fixed is None or now < self.fixed)
        )

    def silence_that_stopped(self, timed_out: bool) -> float | None:
        """The no-output limit, when it, not the fixed deadline, ended the run."""
        if not timed_out or self.no_output_s is None:
            return None
        if self.fixed is not None and self.last_output + self.no_output_s > self.fixed:
            return None
        return self.no_output_s


@dataclass(frozen=True, slots=True)
class _Status:
    exit_code: int | None
    signal: int | None
    cpu_s: float
    peak_rss_bytes: int

    @property
    def returncode(self) -> int:
        return self.exit_code if self.exit_code is not None else -(self.signal or 0)


def _reap(pid: int) -> _Status:
    """Wait for the child and collect its status and resource use."""
    try:
        _, raw, usage = os.wait4(pid, 0)
    except ChildProcessError:
        # Already reaped elsewhere: we no longer know how it ended; say so fail-closed.
        return _Status(exit_code=None, signal=signal.SIGKILL, cpu_s=0.0, peak_rss_bytes=0)
    code = os.waitstatus_to_exitcode(raw)
    return _Status(
        exit_code=code if code >= 0 else None,
        signal=-code if code < 0 else None,
        cpu_s=usage.ru_utime + usage.ru_stime,
        peak_rss_bytes=usage.ru_maxrss * 1024,  # Linux reports KiB
    )


def _has_exited(pid: int) -> bool:
    """Whether the child has exited, without reaping it (a reaped pid could be reused)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


class _Pipes:
    """The child's output pipes (plus optional watched fds) behind one selector."""

    def __init__(self, streams: dict[int, BoundedBuffer]) -> None:
        self._streams = streams
        self._selector = selectors.DefaultSelector()
        for fd in streams:
            _widen_pipe(fd)
            os.set_blocking(fd, False)
            self._selector.register(fd, selectors.EVENT_READ)

    @property
    def open(self) -> bool:
        return any(key.fd in self._streams for key in self._selector.get_map().values())

    def watch(self, fd: int) -> None:
        """Also wake up when `fd` becomes readable (a pidfd: the process exited)."""
        self._selector.register(fd, selectors.EVENT_READ)

    def unwatch(self, fd: int) -> None:
        self._selector.unregister(fd)
        os.close(fd)

    def pump(self, timeout: float | None) -> bool:
        """Wait up to `timeout` for output or a watched event; read what is ready. True when
        some output was read."""
        if not self._selector.get_map():
            time.sleep(timeout if timeout is not None else _EXIT_POLL_SECONDS)
            return False
        heard = False
        for key, _ in self._selector.select(timeout):
            buffer = self._streams.get(key.fd)
            if buffer is None:
                continue
            try:
                chunk = os.read(key.fd, READ_CHUNK)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if chunk:
                buffer.feed(chunk)
                heard = heard or not _only_heartbeats(chunk)
            else:
                self._selector.unregister(key.fd)
        return heard

    def close(self) -> None:
        self._selector.close()


#: A test runner's own word that a test is still running: no sign of progress. libtest
#: prints it once a test has run 60 s, the same as the no-output limit, and a hung test
#: then took twice the limit to be stopped. A doc-test's name has spaces. Only a line's
#: start begins one: tried from each "test " of a line, a line of them took minutes to read.
_HEARTBEAT = re.compile(rb"(?m)^test [^\n]+? has been running for over \d+ seconds\r?\n?")


def _only_heartbeats(chunk: bytes) -> bool:
    """Whether `chunk` holds nothing but runners' still-running lines."""
    return b"has been running for over" in chunk and not _HEARTBEAT.sub(b"", chunk).strip()


def _widen_pipe(fd: int) -> None:
    try:
        import fcntl

        fcntl.fcntl(fd, _F_SETPIPE_SZ, PIPE_CAPACITY)
    except OSError:
        pass  # capacity is an optimisation; the default pipe works


def _make_scratch_home() -> str:
    return str(scratch.make_scratch("home"))


def _remove_tree(path: str) -> None:
    with contextlib.suppress(OSError):  # a leftover is swept once this process is gone
        scratch.remove_scratch(path)


class _ActiveRuns:
    """The process trees started and not yet finished with, so that an interrupted assay
    (Ctrl-C, SIGTERM) can kill them: each lives in a session of its own, which a terminal's
    signal never reaches."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[int, str] = {}
        self._ending = False

    def add(self, pgid: int, marker: str) -> None:
        with self._lock:
            self._runs[pgid] = marker
            late = self._ending
        if late:  # started by a thread that had not yet seen the interrupt: it goes too
            reaper.kill_run(pgid, marker, keep=pgid)

    def discard(self, pgid: int) -> None:
        with self._lock:
            self._runs.pop(pgid, None)

    def kill_all(self, *, and_later: bool) -> int:
        with self._lock:
            self._ending = self._ending or and_later
            runs = list(self._runs.items())
        for pgid, marker in runs:
            reaper.kill_run(pgid, marker, keep=pgid)
        return len(runs)


_ACTIVE = _ActiveRuns()


def kill_active_runs(*, and_later: bool = False) -> int:
    """Kill every process tree this process started and has not reaped yet; returns how
    many runs there were. Their callers still reap and report. `and_later`: the process is
    ending (an interrupt), so every run it starts from now on is killed as it starts, by
    a thread that had not yet seen the interrupt."""
    return _ACTIVE.kill_all(and_later=and_later)


class CommandRunner(Protocol):
    """The seam through which checks run commands: `run_process` itself, a sandbox
    backend's runner, or a deterministic fake in unit tests."""

    def __call__(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        no_output_timeout: float | None = None,
    ) -> ProcessResult: ...

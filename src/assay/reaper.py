"""Finding and killing every process a run started, including ones that left its group.

A process group catches ordinary children and grandchildren. A process that calls
setsid() or double-forks leaves the group; two Linux mechanisms bring it back:

- this process becomes a *child subreaper* (prctl PR_SET_CHILD_SUBREAPER), so
  orphans re-parent to us instead of to init and can be found and reaped;
- every child is started with a per-run marker in its environment, which its
  descendants inherit, so a sweep can attribute an escaped process to its run.

Code that scrubs its own environment can still hide from the marker sweep; the
bubblewrap sandbox (a PID namespace that dies with its parent) is the boundary
for hostile code. This module is the best effort for the unsandboxed backends.

Reaping what we adopt (`reap_adopted`). A subreaper that never waits for its
adopted orphans fills the process table with zombies (bubblewrap's init alone
leaves one per sandboxed command). But this process may have children that other
code in it waits on: the caller's `subprocess.Popen` objects, a concurrent run's
main process. Reaping one of those steals its exit status (Popen then reports 0).
The kernel does not record whether a child was forked here or adopted; two facts
that outlive a process do tell, and a zombie is reaped only when one proves it
was adopted:

1. Session. A process forked here starts in this process's session and can leave
   it only by setsid(), which makes it the leader of a session of its own. So a
   child in a foreign session that it does not lead was forked by someone else.
2. PID namespace. A process forked here lives in this process's PID namespace
   (while its children are made there). So a child in a namespace below it was
   forked by someone else (bubblewrap's init, left behind when bwrap exits).

Pids assay is itself waiting on (`waiting_on`) are never reaped by this sweep,
whatever they look like. What is left: an orphan that made itself a session leader
in our namespace (a daemon's first fork, not waited for) and died before a kill
sweep saw it alive carrying its run's marker. Nothing the kernel keeps tells it
from a child the caller started with `start_new_session=True`, so it is left to
its fate rather than risk a caller's exit status. (A caller that is a subreaper for
reasons of its own and waits on particular adopted orphans would race with this.)
"""

from __future__ import annotations

import contextlib
import os
import resource
import select
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

#: Environment variable carrying the per-run marker.
MARKER_VAR = "ASSAY_RUN_MARKER"
#: How long to wait for killed processes to disappear before giving up on them.
REAP_WAIT_SECONDS = 1.0

_PR_SET_CHILD_SUBREAPER = 36
_subreaper_lock = threading.Lock()
_subreaper_enabled: bool | None = None
#: Sessions this process has been seen in: its children forked then are still in them.
_own_sessions: set[int] = set()


def ensure_subreaper() -> bool:
    """Make this process a child subreaper, once. Returns whether it is one."""
    global _subreaper_enabled
    with _subreaper_lock:
        _note_own_session()
        if _subreaper_enabled is None:
            _subreaper_enabled = _set_subreaper()
        return _subreaper_enabled


def _set_subreaper() -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def marked_pids(marker: str, *, since: int | None = None) -> list[int]:
    """Pids of processes whose environment carries `marker` (ours included never); with
    `since` (clock ticks since boot, see `start_ticks`), only of those started then or later."""
    return [found.pid for found in _scan_all(None, marker, since)]


def start_ticks(pid: int) -> int | None:
    """When `pid` started, in clock ticks since boot (field 22 of /proc/PID/stat), if it exists.

    A run's main process is its first: every process of the run started at or after it, so
    the sweeps below look at nothing older (the machine's other processes, however many)."""
    fields = _stat_fields(pid)
    try:
        return int(fields[19]) if fields is not None else None
    except (IndexError, ValueError):
        return None


def started_lately(pgid: int, marker: str, seconds: float, *, since: int | None = None) -> bool:
    """Whether a live process of the run started in the last `seconds`: it is starting
    programs (a build's compilers, one per package), not stuck in one."""
    ticks_per_s = os.sysconf("SC_CLK_TCK")
    lately = int((time.clock_gettime(time.CLOCK_BOOTTIME) - seconds) * ticks_per_s)
    for found in _scan(pgid, marker, since):
        started = start_ticks(found.pid) if found.alive else None
        if started is not None and started >= lately:
            return True
    return False


@dataclass(frozen=True, slots=True)
class _Found:
    """A process of the run, as one look at /proc saw it."""

    pid: int
    in_group: bool
    """In the run's process group (signalled through it, not one by one)."""
    alive: bool
    """Neither a zombie nor gone."""


def _scan(pgid: int | None, marker: str, since: int | None) -> list[_Found]:
    """The run's processes, zombies included: members of the group `pgid` and processes
    carrying `marker`. Where this process is a subreaper and the leader is known, only the
    run's own processes are read; otherwise every process started since `since`."""
    if pgid is not None and since is not None and _subreaper_enabled and _children_listed():
        return _walk(pgid, marker, since)
    return _scan_all(pgid, marker, since)


def _walk(pgid: int, marker: str, since: int) -> list[_Found]:
    """Every process of a run descends from its leader or, its parent gone, was adopted by
    this process (a subreaper): the trees under the leader and under the adopted children
    that are the run's (its group, its marker). The machine's other processes are never read."""
    needle = f"{MARKER_VAR}={marker}".encode()
    me = os.getpid()
    roots = [pgid]
    for child in _children(me):
        fields = _stat_fields(child)
        if child == pgid or fields is None or len(fields) < 20 or int(fields[19]) < since:
            continue
        if _claims.owner(child) == pgid:
            roots.append(child)
            continue
        environ = _environ(child)
        in_run = int(fields[2]) == pgid or needle in (environ or b"").split(b"\0")
        # A dead or dying process's marker is gone with its memory: a zombie, or one still
        # exiting (its memory released, not yet a zombie), may be the run's sandbox init.
        if in_run or (
            (fields[0] == b"Z" or not environ) and _sandbox_init_of(pgid, child, int(fields[19]))
        ):
            roots.append(child)
    found: list[_Found] = []
    visited: set[int] = {me}
    while roots:
        pid = roots.pop()
        if pid in visited:
            continue
        visited.add(pid)
        fields = _stat_fields(pid)
        if fields is None:
            continue
        found.append(_Found(pid, int(fields[2]) == pgid, fields[0] not in (b"Z", b"X")))
        roots.extend(_task_children(pid))
    return found


def _sandbox_init_of(pgid: int, zombie: int, started: int) -> bool:
    """Whether `zombie`, a dead or dying child of ours whose marker went with its memory, is the
    init of the run led by `pgid`'s sandbox: it lived in a PID namespace below ours (as
    bubblewrap's init does; the outer bwrap exits without waiting for it, so it comes to us),
    and of the runs this process is waiting on, that run's leader is the only one started
    before it (by start time, and by pid: pids are handed out in increasing order)."""
    own_depth = _own_namespace_depth()
    depth = _namespace_depth(f"/proc/{zombie}/status")
    if own_depth is None or depth is None or depth <= own_depth:
        return False
    earlier = [
        leader
        for leader, since in _waiting.starts().items()
        if since is not None and since <= started and _allocated_before(leader, zombie)
    ]
    return earlier == [pgid]


def _allocated_before(first: int, second: int) -> bool:
    """Whether pid `first` was handed out before `second`, both recent (pids wrap around)."""
    return 0 < (second - first) % _pid_max() < _pid_max() // 2


def _pid_max() -> int:
    global _PID_MAX
    if _PID_MAX is None:
        try:
            with open("/proc/sys/kernel/pid_max", "rb") as f:
                _PID_MAX = int(f.read())
        except (OSError, ValueError):
            _PID_MAX = 1 << 22
    return _PID_MAX


_PID_MAX: int | None = None


def _scan_all(pgid: int | None, marker: str, since: int | None) -> list[_Found]:
    """One pass over /proc; a process started before `since` is skipped on its stat line
    alone, its environment never read."""
    needle = f"{MARKER_VAR}={marker}".encode()
    me = os.getpid()
    found = []
    for pid in _proc_pids():
        if pid == me:
            continue
        fields = _stat_fields(pid)
        if fields is None or len(fields) < 20:
            continue
        if since is not None and int(fields[19]) < since:
            continue
        alive = fields[0] not in (b"Z", b"X")
        if pgid is not None and int(fields[2]) == pgid:
            found.append(_Found(pid, True, alive))
            continue
        environ = _environ(pid)
        if environ is not None and needle in environ.split(b"\0"):
            found.append(_Found(pid, False, alive))
    return found


def _task_children(pid: int) -> list[int]:
    """Children of every thread of `pid` (an orphan is adopted by one thread)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    children: list[int] = []
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                children.extend(int(p) for p in f.read().split())
        except (OSError, ValueError):
            continue
    return children


def _children_listed() -> bool:
    """Whether the kernel lists a process's children (CONFIG_PROC_CHILDREN)."""
    return os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def _environ(pid: int) -> bytes | None:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return f.read()
    except OSError:
        return None


#: How many of a run's commands `leaf_commands` reads, and how much of each; how many
#: thread names of each.
MAX_LEAF_COMMANDS = 16
MAX_COMMAND_BYTES = 4096
MAX_LEAF_THREADS = 32


@dataclass(frozen=True, slots=True)
class Leaf:
    """A process of the run with no live child of its own, as it was looked at."""

    argv: tuple[str, ...]
    threads: tuple[str, ...] = ()
    """The names of its threads but the first, each once: Rust's libtest runs each test in a
    thread named for it (the kernel keeps 15 bytes of a name)."""
    pid: int | None = None
    """Its pid as it was looked at (`assay.stack_dumps` asks it for its stacks)."""


def leaf_commands(pgid: int, marker: str, *, since: int | None = None) -> list[Leaf]:
    """Each live process of the run that has no live child in it: what the run was doing
    when it was looked at (a hung `node --test` waits on `node test/a.test.js`, which
    prints nothing of its tests until the file ends; a hung `cargo test` on a test binary
    whose thread is named for the test). Read from /proc, bounded; the sandbox's own
    processes (bwrap, its init) are never leaves while the command lives."""
    found = [f for f in _scan(pgid, marker, since) if f.alive]
    alive = {f.pid for f in found}
    parents: set[int] = set()
    for pid in alive:
        fields = _stat_fields(pid)
        if fields is not None and fields[1].isdigit():
            parents.add(int(fields[1]))
    leaves: list[Leaf] = []
    for pid in sorted(alive - parents):
        if len(leaves) >= MAX_LEAF_COMMANDS:
            break
        argv = command_line(pid)
        if argv and argv[0]:
            leaves.append(Leaf(argv, _thread_names(pid), pid))
    return leaves


def command_line(pid: int) -> tuple[str, ...]:
    """The words `pid` was started with (its first `MAX_COMMAND_BYTES`); () when gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read(MAX_COMMAND_BYTES)
    except OSError:
        return ()
    return tuple(w.decode("utf-8", "replace") for w in raw.rstrip(b"\0").split(b"\0"))


def _thread_names(pid: int) -> tuple[str, ...]:
    try:
        tids = sorted(int(t) for t in os.listdir(f"/proc/{pid}/task") if t.isdigit())
    except OSError:
        return ()
    names: list[str] = []
    for tid in tids[:MAX_LEAF_THREADS]:
        if tid == pid:
            continue  # the main thread, named for the program
        try:
            with open(f"/proc/{pid}/task/{tid}/comm", "rb") as f:
                name = f.read(64).rstrip(b"\n").decode("utf-8", "replace")
        except OSError:
            continue
        if name and name not in names:
            names.append(name)
    return tuple(names)


def signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def signal_pids(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def signal_run(pgid: int, marker: str, sig: int, *, since: int | None = None) -> list[int]:
    """Send `sig` to every process carrying the run's marker outside its process group, then
    to the group.

    Those outside the group first: a sandboxed command runs in a session of its own below the
    sandbox's init, which is in the group, as the outer bwrap is. Signalled first, the group's
    bwrap dies and takes the init with it (`--die-with-parent`); the kernel then reaps what
    the namespace still holds without adding its cost to anyone's (`_inner_first`).

    `since` is the run's start (`start_ticks` of its leader), given only while the leader is
    not reaped (its pid is still its own): nothing older is looked at."""
    pids = [found.pid for found in _scan(pgid, marker, since) if found.alive and not found.in_group]
    _inner_first(pids, sig)
    if sig != signal.SIGKILL and any(
        _alive(pid) and _sandboxed(pid) and not _namespace_init(pid) for pid in pids
    ):
        # A sandboxed process that ignores `sig` lives on: the group's death would take its
        # init and its cost with it. The caller's SIGKILL sweep (`kill_run`) kills it first.
        return pids
    signal_group(pgid, sig)
    pids += [
        found.pid
        for found in _scan(pgid, marker, since)
        if not found.in_group and found.pid not in pids
    ]
    signal_pids(pids, sig)
    return pids


#: How long a sweep waits for the run's processes outside its group to be reaped by their own
#: parent (a sandbox's init) before it signals the group.
INNER_FIRST_SECONDS = 0.5


def _sandboxed(pid: int) -> bool:
    """Whether `pid` lives in a PID namespace below this process's (a sandbox's)."""
    own_depth = _own_namespace_depth()
    depth = _namespace_depth(f"/proc/{pid}/status")
    return own_depth is not None and depth is not None and depth > own_depth


def _namespace_init(pid: int) -> bool:
    """Whether `pid` is the init (pid 1) of a PID namespace below this process's."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"NSpid:"):
                    ids = line.split()[1:]
                    return len(ids) > 1 and ids[-1] == b"1"
    except OSError:
        return False
    return False


def _inner_first(pids: list[int], sig: int) -> None:
    """Signal `pids` (the run's processes outside its group) and wait, up to
    `INNER_FIRST_SECONDS`, until each is gone, reaped by its parent, or one of ours (a zombie
    we reap), or, being alive, may not act on `sig` (it ignores it).

    Why: a sandboxed command's parent is the sandbox's PID-namespace init. When that init
    dies first (killed with the group, or by `--die-with-parent` when the outer bwrap does),
    the kernel reaps the namespace's processes with SIGCHLD ignored, adding nothing to any
    process's cost: a hung check killed at its deadline reported the few milliseconds of
    bwrap's init, not the minute its test runner spun. Killed first, they are reaped by the
    init, whose wait adds their cost to its own, and the sweep that reaps the init reads it."""
    pids = [pid for pid in pids if not _namespace_init(pid)]  # the init reaps the others
    if not pids:
        return
    signal_pids(pids, sig)
    me = os.getpid()
    end = time.monotonic() + INNER_FIRST_SECONDS
    while time.monotonic() < end:
        pending = False
        for pid in pids:
            fields = _stat_fields(pid)
            if fields is None or int(fields[1]) == me:
                continue  # gone (reaped by its parent), or ours to reap
            if fields[0] in (b"Z", b"X"):
                pending = True  # dead, its parent not yet done waiting for it
            elif sig == signal.SIGKILL or not _ignores(pid, sig):
                pending = True
        if not pending:
            return
        time.sleep(0.002)


def run_alive(pgid: int, marker: str, *, since: int | None = None) -> bool:
    """Whether any process of the run is still alive (zombies do not count)."""
    return any(found.alive for found in _scan(pgid, marker, since))


def awaiting(pgid: int, marker: str, sig: int, *, since: int | None = None) -> bool:
    """Whether a live process of the run may still act on `sig`: one that does not ignore
    it. When every survivor ignores it (SIG_IGN), waiting out a grace period is pointless."""
    found = [f for f in _scan(pgid, marker, since) if f.alive]
    # A sandboxed command that ignores `sig` holds back the signal to its group and its init
    # (`signal_run`): they were not sent it, and do not count.
    held = any(
        not f.in_group and _sandboxed(f.pid) and not _namespace_init(f.pid) and _ignores(f.pid, sig)
        for f in found
    )
    return any(
        not _ignores(f.pid, sig) and not (held and (f.in_group or _namespace_init(f.pid)))
        for f in found
    )


def _ignores(pid: int, sig: int) -> bool:
    """Whether `pid`'s disposition for `sig` is SIG_IGN (the `SigIgn` mask in its status)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"SigIgn:"):
                    return bool(int(line.split()[1], 16) >> (sig - 1) & 1)
    except (OSError, ValueError, IndexError):
        pass
    return False  # unknown: assume it may still act, and wait


@dataclass(frozen=True, slots=True)
class Usage:
    """What reaped processes cost, as wait4 reports it: each one's own use and that of the
    descendants it waited for."""

    cpu_s: float = 0.0
    """User + system CPU seconds, summed."""
    max_rss_bytes: int = 0
    """The largest peak resident set size among them (not a sum: the kernel keeps only
    each process's own peak)."""

    @classmethod
    def of(cls, rusage: resource.struct_rusage) -> Usage:
        return cls(rusage.ru_utime + rusage.ru_stime, rusage.ru_maxrss * 1024)  # Linux: KiB

    def plus(self, other: Usage) -> Usage:
        return Usage(self.cpu_s + other.cpu_s, max(self.max_rss_bytes, other.max_rss_bytes))


def kill_run(pgid: int, marker: str, *, keep: int | None = None, since: int | None = None) -> Usage:
    """SIGKILL everything of the run, then reap what re-parented to us; returns what the
    processes reaped here cost (bubblewrap's init, and below it the sandboxed command, is
    one: the outer bwrap exits without waiting for it).

    `keep` is a pid the caller reaps itself (to read its exit status). When it is the
    group's leader, not reaped yet, its start time is the run's start and `since` need not
    be given. Repeats for a short while: a process may fork between our scan and our kill.
    """
    if since is None and keep is not None and keep == pgid:
        since = start_ticks(pgid)
    deadline = time.monotonic() + REAP_WAIT_SECONDS
    seen: set[int] = set()
    usage = Usage()
    # The processes outside the group first, and reaped by their own parent before the
    # group dies: a sandbox's init that dies first takes their cost with it (`_inner_first`).
    _inner_first(
        [f.pid for f in _scan(pgid, marker, since) if f.alive and not f.in_group], signal.SIGKILL
    )
    while True:
        signal_group(pgid, signal.SIGKILL)
        found = _scan(pgid, marker, since)
        signal_pids([f.pid for f in found if f.alive and not f.in_group], signal.SIGKILL)
        seen.update(f.pid for f in found)
        if keep is not None:
            seen.discard(keep)
        usage = usage.plus(_reap(seen, pgid))
        seen = {p for p in seen if os.path.exists(f"/proc/{p}")}  # zombies too: not yet reaped
        # Done when a look finds nothing alive: what was killed just now is looked at again.
        if (not seen and not any(f.alive for f in found)) or time.monotonic() >= deadline:
            break
        _await_exit([f.pid for f in found if f.alive], 0.005)
    reap_adopted()  # those of the run that were dead before it could be seen
    return usage


def _await_exit(pids: list[int], timeout: float) -> None:
    """Until every one of `pids` has exited, or `timeout` seconds passed. A killed process
    is usually gone well within a millisecond: a fixed nap would mostly wait on the dead."""
    fds = [fd for fd in map(pidfd, pids) if fd is not None]
    if not fds:
        time.sleep(timeout)  # none to watch (gone already, or no pidfds): look again later
        return
    try:
        await_pidfds(fds, timeout)
    finally:
        for fd in fds:
            os.close(fd)


def await_pidfds(
    fds: Sequence[int], timeout: float, meanwhile: Callable[[], object] | None = None
) -> None:
    """Until every process of the pidfds `fds` has exited, or `timeout` seconds passed.
    `meanwhile`, when given, is what the wait does between looks (draining a command's
    pipes for a moment) instead of blocking on the pidfds."""
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    end = time.monotonic() + timeout
    pending = len(fds)
    while pending and (left := end - time.monotonic()) > 0:
        if meanwhile is not None:
            meanwhile()
            left = 0
        for fd, _ in poller.poll(left * 1000):
            poller.unregister(fd)
            pending -= 1


def _reap(pids: set[int] | list[int], pgid: int) -> Usage:
    """Collect zombies among `pids` (seen alive with the marker of the run led by `pgid`: the
    run's own) that are our children (orphans adopted as subreaper); what they cost."""
    usage = Usage()
    for pid in pids:
        if _waiting.holds(pid) or _claims.owner(pid) not in (None, pgid):
            continue
        try:
            done, _, rusage = os.wait4(pid, os.WNOHANG)
        except ChildProcessError:
            continue  # not ours to reap: its own parent will
        if done:
            usage = usage.plus(Usage.of(rusage))
    return usage


# --------------------------------------------------------------------------- adopted orphans


class _Waiting:
    """Pids that assay's own code waits on (a run's main process): never reaped by a sweep.
    With each, when known, its start (`start_ticks`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pids: dict[int, int] = {}
        self._starts: dict[int, int | None] = {}

    def add(self, pid: int, since: int | None = None) -> None:
        with self._lock:
            self._pids[pid] = self._pids.get(pid, 0) + 1
            self._starts[pid] = since

    def discard(self, pid: int) -> None:
        with self._lock:
            left = self._pids.pop(pid, 1) - 1
            if left > 0:
                self._pids[pid] = left
            else:
                self._starts.pop(pid, None)

    def holds(self, pid: int) -> bool:
        with self._lock:
            return pid in self._pids

    def starts(self) -> dict[int, int | None]:
        with self._lock:
            return dict(self._starts)


_waiting = _Waiting()


class _Claims:
    """Sandbox inits claimed by the run whose leader started them: init pid -> leader pid.

    When the outer bwrap exits, its sandbox's init (and, in what the init waited for, the
    check's whole cost) comes to this process. Checks of a stage run side by side, and a
    dead init carries nothing that says whose it was: the first sweep to see it, any
    run's, would reap it and its cost would be lost. A run claims its init while the
    outer bwrap is still its parent (`SandboxInitClaim`); only that run reaps it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._owners: dict[int, int] = {}

    def add(self, init: int, leader: int) -> None:
        with self._lock:
            self._owners[init] = leader

    def release(self, leader: int) -> None:
        with self._lock:
            for init in [i for i, owner in self._owners.items() if owner == leader]:
                del self._owners[init]

    def owner(self, pid: int) -> int | None:
        with self._lock:
            return self._owners.get(pid)


_claims = _Claims()


class SandboxInitClaim:
    """Looks, in the first moments of a run led by `leader`, for the init of the sandbox it
    starts (its child in a PID namespace below ours) and claims it for the run (`_Claims`).
    Commands with no PID namespace of their own have none: the look stops after `LOOKS`."""

    #: Looks at most, `EVERY_SECONDS` apart: bwrap forks its init within a few milliseconds,
    #: later on a loaded machine.
    LOOKS = 40
    EVERY_SECONDS = 0.005

    def __init__(self, leader: int) -> None:
        self.leader = leader
        self._looks_left = self.LOOKS if _subreaper_enabled else 0

    @property
    def looking(self) -> bool:
        return self._looks_left > 0

    def look(self) -> None:
        """One look at the leader's children; the first in a deeper namespace is claimed."""
        if self._looks_left <= 0:
            return
        self._looks_left -= 1
        own_depth = _own_namespace_depth()
        for child in _task_children(self.leader):
            depth = _namespace_depth(f"/proc/{child}/status")
            if own_depth is not None and depth is not None and depth > own_depth:
                _claims.add(child, self.leader)
                self._looks_left = 0
                return

    def release(self) -> None:
        """Once the run's sweep is done: what is left of it is any sweep's again."""
        self._looks_left = 0
        _claims.release(self.leader)


@contextlib.contextmanager
def waiting_on(pid: int, since: int | None = None) -> Iterator[None]:
    """Mark `pid` as one this process waits on itself, for as long as the block runs;
    `since` is its start (`start_ticks`), to tell its sandbox's init from another run's."""
    _waiting.add(pid, since)
    try:
        yield
    finally:
        _waiting.discard(pid)


def reap_adopted() -> int:
    """Reap every zombie child this process adopted (the rule in the module docstring);
    returns how many. Cheap: one small read per thread and per child."""
    me = os.getpid()
    _note_own_session()
    own_depth = _own_namespace_depth()
    reaped = 0
    for pid in _children(me):
        if _waiting.holds(pid) or _claims.owner(pid) is not None:
            continue
        reaped += _reap_if_adopted(pid, me, own_depth)
    return reaped


def _reap_if_adopted(pid: int, me: int, own_depth: int | None) -> int:
    # A pidfd pins this very process: if it is reaped elsewhere and its pid reused between
    # our look and our wait, the wait fails instead of taking the newcomer's status.
    exit_fd = pidfd(pid)
    try:
        fields = _stat_fields(pid)
        if fields is None or fields[0] != b"Z" or int(fields[1]) != me:
            return 0
        if not _adopted(pid, int(fields[3]), own_depth):
            return 0
        return _collect(pid, exit_fd)
    finally:
        if exit_fd is not None:
            os.close(exit_fd)


def _adopted(pid: int, session: int, own_depth: int | None) -> bool:
    """Whether the child `pid` cannot have been forked by this process (see the docstring)."""
    if session != pid and session not in _own_sessions:
        return True
    depth = _namespace_depth(f"/proc/{pid}/status")
    return own_depth is not None and depth is not None and depth > own_depth


def _collect(pid: int, exit_fd: int | None) -> int:
    try:
        if exit_fd is not None:
            reaped = os.waitid(os.P_PIDFD, exit_fd, os.WEXITED | os.WNOHANG)
            return 0 if reaped is None else 1
        done, _ = os.waitpid(pid, os.WNOHANG)
        return 1 if done else 0
    except ChildProcessError:
        return 0  # reaped meanwhile by someone else
    except OSError:
        return 0


def _children(me: int) -> set[int]:
    """Pids of this process's children: per thread from /proc (an orphan is adopted by one
    of our threads), else from every process's parent pid."""
    found: set[int] = set()
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        tasks = []
    if not tasks or not os.path.exists(f"/proc/self/task/{me}/children"):
        return _children_by_scan(me)
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/children", "rb") as f:
                found.update(int(p) for p in f.read().split())
        except OSError:
            continue  # the thread ended: its children are some other thread's now
    return found


def _children_by_scan(me: int) -> set[int]:
    found = set()
    for entry in _proc_pids():
        fields = _stat_fields(entry)
        if fields is not None and len(fields) > 1 and int(fields[1]) == me:
            found.add(entry)
    return found


def _proc_pids() -> list[int]:
    try:
        return [int(e) for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []


def _stat_fields(pid: int) -> list[bytes] | None:
    """Fields of /proc/PID/stat after the command name: [state, ppid, pgrp, session, ...]."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()
    return fields if len(fields) > 3 else None


def _note_own_session() -> None:
    try:
        _own_sessions.add(os.getsid(0))
    except OSError:
        pass


def _own_namespace_depth() -> int | None:
    """How deep this process's PID namespace is, or None when its children are made in
    another one (then rule 2 proves nothing)."""
    try:
        if os.readlink("/proc/self/ns/pid") != os.readlink("/proc/self/ns/pid_for_children"):
            return None
    except OSError:
        return None
    return _namespace_depth("/proc/self/status")


def _namespace_depth(status_path: str) -> int | None:
    """The number of PID namespaces a process is seen in (its `NSpid` line), if known."""
    try:
        with open(status_path, "rb") as f:
            for line in f:
                if line.startswith(b"NSpid:"):
                    return len(line.split()) - 1
    except OSError:
        return None
    return None


def pidfd(pid: int) -> int | None:
    """A pidfd for `pid` (readable once it exits), or None: gone, or a kernel without them."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _alive(pid: int) -> bool:
    """Whether `pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    # The state letter follows the parenthesised command name.
    state = stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3]
    return state not in (b"Z", b"X", b"")

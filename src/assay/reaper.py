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
import signal
import threading
import time
from collections.abc import Iterator

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


def marked_pids(marker: str) -> list[int]:
    """Pids of live processes whose environment carries `marker` (ours included never)."""
    needle = f"{MARKER_VAR}={marker}".encode()
    found = []
    me = os.getpid()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        pid = int(entry)
        if pid == me:
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(pid)
    return found


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


def signal_run(pgid: int, marker: str, sig: int) -> list[int]:
    """Send `sig` to the run's process group and to every process carrying its marker."""
    signal_group(pgid, sig)
    pids = marked_pids(marker)
    signal_pids(pids, sig)
    return pids


def run_alive(pgid: int, marker: str) -> bool:
    """Whether any process of the run is still alive (zombies do not count)."""
    return _group_alive(pgid) or any(_alive(p) for p in marked_pids(marker))


def awaiting(pgid: int, marker: str, sig: int) -> bool:
    """Whether a live process of the run may still act on `sig`: one that does not ignore
    it. When every survivor ignores it (SIG_IGN), waiting out a grace period is pointless."""
    live = {p for p in (*_group_members(pgid), *marked_pids(marker)) if _alive(p)}
    return any(not _ignores(p, sig) for p in live)


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


def kill_run(pgid: int, marker: str, *, keep: int | None = None) -> None:
    """SIGKILL everything of the run, then reap what re-parented to us.

    `keep` is a pid the caller reaps itself (to read its exit status). Repeats
    for a short while: a process may fork between our scan and our kill.
    """
    deadline = time.monotonic() + REAP_WAIT_SECONDS
    seen: set[int] = set()
    while True:
        seen.update(signal_run(pgid, marker, signal.SIGKILL))
        if keep is not None:
            seen.discard(keep)
        _reap(seen)
        seen = {p for p in seen if os.path.exists(f"/proc/{p}")}  # zombies too: not yet reaped
        if (not seen and not _group_alive(pgid)) or time.monotonic() >= deadline:
            break
        time.sleep(0.005)
    reap_adopted()  # those of the run that were dead before it could be seen


def _reap(pids: set[int] | list[int]) -> None:
    """Collect zombies among `pids` (seen alive with the run's marker: the run's own) that
    are our children (orphans adopted as subreaper)."""
    for pid in pids:
        if _waiting.holds(pid):
            continue
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass  # not ours to reap: its own parent will


# --------------------------------------------------------------------------- adopted orphans


class _Waiting:
    """Pids that assay's own code waits on (a run's main process): never reaped by a sweep."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pids: dict[int, int] = {}

    def add(self, pid: int) -> None:
        with self._lock:
            self._pids[pid] = self._pids.get(pid, 0) + 1

    def discard(self, pid: int) -> None:
        with self._lock:
            left = self._pids.pop(pid, 1) - 1
            if left > 0:
                self._pids[pid] = left

    def holds(self, pid: int) -> bool:
        with self._lock:
            return pid in self._pids


_waiting = _Waiting()


@contextlib.contextmanager
def waiting_on(pid: int) -> Iterator[None]:
    """Mark `pid` as one this process waits on itself, for as long as the block runs."""
    _waiting.add(pid)
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
        if _waiting.holds(pid):
            continue
        reaped += _reap_if_adopted(pid, me, own_depth)
    return reaped


def _reap_if_adopted(pid: int, me: int, own_depth: int | None) -> int:
    # A pidfd pins this very process: if it is reaped elsewhere and its pid reused between
    # our look and our wait, the wait fails instead of taking the newcomer's status.
    pidfd = _pidfd(pid)
    try:
        fields = _stat_fields(pid)
        if fields is None or fields[0] != b"Z" or int(fields[1]) != me:
            return 0
        if not _adopted(pid, int(fields[3]), own_depth):
            return 0
        return _collect(pid, pidfd)
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _adopted(pid: int, session: int, own_depth: int | None) -> bool:
    """Whether the child `pid` cannot have been forked by this process (see the docstring)."""
    if session != pid and session not in _own_sessions:
        return True
    depth = _namespace_depth(f"/proc/{pid}/status")
    return own_depth is not None and depth is not None and depth > own_depth


def _collect(pid: int, pidfd: int | None) -> int:
    try:
        if pidfd is not None:
            reaped = os.waitid(os.P_PIDFD, pidfd, os.WEXITED | os.WNOHANG)
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


def _pidfd(pid: int) -> int | None:
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


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A group of zombies still answers signal 0; only count living members.
    return any(_alive(pid) for pid in _group_members(pgid))


def _group_members(pgid: int) -> list[int]:
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid:
            members.append(int(entry))
    return members

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
"""

from __future__ import annotations

import os
import signal
import threading
import time

#: Environment variable carrying the per-run marker.
MARKER_VAR = "ASSAY_RUN_MARKER"
#: How long to wait for killed processes to disappear before giving up on them.
REAP_WAIT_SECONDS = 1.0

_PR_SET_CHILD_SUBREAPER = 36
_subreaper_lock = threading.Lock()
_subreaper_enabled: bool | None = None


def ensure_subreaper() -> bool:
    """Make this process a child subreaper, once. Returns whether it is one."""
    global _subreaper_enabled
    with _subreaper_lock:
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
        if not seen and not _group_alive(pgid):
            return
        if time.monotonic() >= deadline:
            return
        time.sleep(0.005)


def _reap(pids: set[int] | list[int]) -> None:
    """Collect zombies among `pids` that are our children (orphans adopted as subreaper)."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass  # not ours to reap: its own parent will


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

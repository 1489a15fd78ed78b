"""Who sandboxed commands run as when assay runs as root: a uid of their own per run.

The kernel counts RLIMIT_NPROC per real uid across the whole host, so if every run used
the same uid, a fork bomb in one run would make a concurrent honest run's `fork()` fail.
Each `BwrapSandbox` therefore takes a slot of its own: an exclusive `flock` on a slot file
for as long as it lives (the kernel releases it when the process dies, however it dies),
and the uid and gid `SANDBOX_ID_BASE + slot`. The ids belong to no account on the host;
the sandbox is given a passwd and group line for them, so `whoami`, `getpass` and git's
identity lookups work inside.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
from dataclasses import dataclass
from pathlib import Path

from assay.errors import AssayError

#: First uid/gid handed to sandboxes: far above login accounts and the usual subuid ranges,
#: and below 2**31, which some tools still store as a signed int.
SANDBOX_ID_BASE = 1_800_000_000
#: How many runs can hold an id at once.
SANDBOX_ID_SLOTS = 4096
#: The uid/gid commands run as when assay runs as root and no id of their own can be had.
FALLBACK_UID = 65534
#: Where slot locks and the generated account files live (root only).
ID_STATE_DIRS = ("/run/assay/ids", "/var/tmp/assay-ids")
#: The account name sandboxed commands see.
ACCOUNT = "assay"


class IdentityUnavailable(AssayError):
    """No slot could be taken (every slot held, or nowhere to keep the locks)."""


@dataclass(slots=True)
class SandboxIdentity:
    """A uid/gid held for one sandbox, with the account files that name it."""

    uid: int
    passwd: Path
    """/etc/passwd as the sandbox sees it: the host's lines plus one for `uid`."""
    group: Path
    _lock: int

    @property
    def gid(self) -> int:
        return self.uid

    def release(self) -> None:
        """Give the slot back (also happens when the process exits)."""
        if self._lock >= 0:
            with contextlib.suppress(OSError):
                os.close(self._lock)
            self._lock = -1

    def __del__(self) -> None:
        self.release()


def allocate() -> SandboxIdentity:
    """Take a free slot; raises `IdentityUnavailable` when there is none."""
    state = _state_dir()
    start = random.randrange(SANDBOX_ID_SLOTS)  # concurrent runs rarely contend for one lock
    for step in range(SANDBOX_ID_SLOTS):
        slot = (start + step) % SANDBOX_ID_SLOTS
        lock = os.open(state / f"{slot}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock)
            continue
        uid = SANDBOX_ID_BASE + slot
        try:
            passwd = _account_file(
                state, slot, "passwd", f"{ACCOUNT}:x:{uid}:{uid}::/tmp/home:/bin/sh"
            )
            group = _account_file(state, slot, "group", f"{ACCOUNT}:x:{uid}:")
        except OSError as exc:
            os.close(lock)
            raise IdentityUnavailable(f"cannot write account files in {state}: {exc}") from exc
        return SandboxIdentity(uid, passwd, group, lock)
    raise IdentityUnavailable(f"all {SANDBOX_ID_SLOTS} sandbox ids are in use")


def _state_dir() -> Path:
    for candidate in ID_STATE_DIRS:
        path = Path(candidate)
        try:
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
            info = path.lstat()
        except OSError:
            continue
        # Only a directory of our own: another user's could hand us their locks.
        if not path.is_symlink() and info.st_uid == os.geteuid():
            return path
    raise IdentityUnavailable(f"none of {', '.join(ID_STATE_DIRS)} is usable for slot locks")


def _account_file(state: Path, slot: int, name: str, line: str) -> Path:
    """The host's /etc/<name> with `line` added, written for `slot` (replaced atomically)."""
    try:
        host = Path("/etc", name).read_text(encoding="utf-8", errors="replace")
    except OSError:
        host = ""
    kept = [entry for entry in host.splitlines() if not entry.startswith(f"{ACCOUNT}:")]
    wanted = "\n".join([*kept, line]) + "\n"
    target = state / f"{slot}.{name}"
    with contextlib.suppress(OSError, UnicodeDecodeError):
        # The slot is ours alone while we hold its lock: as the last run left it, it is
        # not written again (a write and a rename cost a millisecond each on a disk).
        if target.read_text(encoding="utf-8") == wanted:
            return target
    scratch = state / f"{slot}.{name}.new"
    scratch.write_text(wanted, encoding="utf-8")
    scratch.chmod(0o644)
    scratch.replace(target)
    return target

"""Where assay keeps its scratch directories, and sweeping up after runs that died.

Every directory assay makes for a run (workspaces, report directories, base trees,
the bubblewrap probe's directory, scratch homes) is made by `make_scratch`, and its
name says who owns it:

    assay-<purpose>-<pid>_<starttime>_<pidns>-<random>

`pid` is the process that made it, `starttime` that process's start time (field 22
of /proc/PID/stat, so a reused pid is never taken for the owner) and `pidns` the
inode of its PID namespace (pids of another namespace are not ours to look up). No dot:
a workspace's name is in every path of the project, and TypeScript's `include` matches
nothing under a directory whose name has dots (vitest's typecheck of redux-thunk found
"No inputs"). Names with dots, from older releases, are still swept.

A run killed with SIGKILL removes nothing, and its workspace may sit in RAM
(/dev/shm). `sweep_stale`, called as `assay verify` and `assay run` start, removes
the directories whose owner is gone. It removes an entry only when all of these hold:

- its name matches the pattern above exactly;
- it is a directory, not a symlink (nothing is followed, inside it either), owned by
  our uid (as root: or by a uid root hands sandboxes its directories under);
- its owner's PID namespace is ours, and no process of that pid with that start time
  is alive (a zombie owner counts as gone: it will never clean up).

Anything it cannot judge (an unreadable /proc, another namespace) it leaves.

What is not a directory in a scratch place (a run's cgroup) is named by `tagged_name`
the same way, and judged by `owner_gone_by_name` where it lives (`assay.sandbox.cgroup`).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from assay.deep_removal import remove_deep

#: Names a directory to make workspaces in (read by `assay.sandbox.provision` too).
WORKSPACE_DIR_ENV = "ASSAY_WORKSPACE_DIR"
#: RAM-backed places workspaces go when they have room (`assay.sandbox.provision.scratch_dir`).
TMPFS_PLACES = ("/dev/shm",)
#: How many removed paths the one-line message names.
SHOWN_IN_MESSAGE = 3

_PURPOSE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
#: `tempfile.mkdtemp` appends eight of these characters.
_NAME = re.compile(
    r"assay-(?P<purpose>[a-z0-9]+(?:-[a-z0-9]+)*)"
    r"-(?P<pid>[1-9][0-9]*)[_.](?P<start>[0-9]+)[_.](?P<ns>[0-9]+)"
    r"-[a-z0-9_]{8}"
)


def make_scratch(purpose: str, dir: str | os.PathLike[str] | None = None) -> Path:
    """A new directory named for `purpose` and its owner (this process), in `dir`
    (default: the system temp dir). The caller removes it; the sweep does once the
    owner is gone."""
    if not _PURPOSE.fullmatch(purpose):
        raise ValueError(f"scratch purpose must be lowercase words joined by '-': {purpose!r}")
    if _made_ahead and dir is not None:
        ahead = _made_ahead.pop((purpose, os.fspath(dir)), None)
        if ahead is not None:
            try:
                if not any(os.scandir(ahead)):
                    return ahead
                remove_scratch(ahead)  # not as it was made: not to be trusted
            except OSError:
                pass
    tag = _owner_tag()
    # Without a readable /proc the owner cannot be recorded: such a name is never swept.
    prefix = f"assay-{purpose}-{tag}-" if tag else f"assay-{purpose}-untracked-"
    return Path(tempfile.mkdtemp(prefix=prefix, dir=dir))


#: Scratch directories made before their run came (`make_like`), by purpose and place.
_made_ahead: dict[tuple[str, str], Path] = {}


def make_like(path: str) -> str | None:
    """A new scratch directory of this process's with the purpose and place of `path`
    (another's, gone), which this process's next `make_scratch` of them returns: a sandbox
    built before its run (`assay.sandbox.standby`) mounts it as that run will. None when
    `path` has no scratch directory's name."""
    match = _NAME.fullmatch(os.path.basename(path))
    if match is None:
        return None
    place = os.path.dirname(path)
    made = make_scratch(match["purpose"], place)
    _made_ahead[(match["purpose"], place)] = made
    return str(made)


def drop_made_ahead() -> None:
    """Remove what `make_like` made that no run took."""
    while _made_ahead:
        _, path = _made_ahead.popitem()
        with contextlib.suppress(OSError):
            remove_scratch(path)


def tagged_name(purpose: str) -> str | None:
    """A fresh name of the scratch directories' form for something of this process's
    that is not one (a cgroup), so that a sweep can tell when its owner is gone; None
    without a readable /proc (the owner could not be recorded)."""
    tag = _owner_tag()
    # os.urandom, not `secrets`: the same bytes, without loading hmac and hashlib to start.
    return f"assay-{purpose}-{tag}-{os.urandom(4).hex()}" if tag else None


def owner_gone_by_name(name: str) -> bool:
    """Whether `name` has the form of `tagged_name` and `make_scratch`, names an owner of
    this PID namespace, and that owner is gone (by the module docstring's rules)."""
    match = _NAME.fullmatch(name)
    if match is None:
        return False  # most names in a cgroup directory: no stat of /proc for them
    own_ns = _namespace_id()
    if own_ns is None or int(match["ns"]) != own_ns:
        return False
    return _owner_gone(int(match["pid"]), int(match["start"]))


@contextlib.contextmanager
def temporary_scratch(purpose: str, dir: str | os.PathLike[str] | None = None) -> Iterator[Path]:
    """`make_scratch`, removed when the block ends. A removal that fails leaves the
    directory to the sweep, which takes it once this process is gone."""
    path = make_scratch(purpose, dir)
    try:
        yield path
    finally:
        with contextlib.suppress(OSError):
            remove_scratch(path)


def scratch_places() -> list[Path]:
    """Every place assay makes scratch directories: `$ASSAY_WORKSPACE_DIR`, the tmpfs
    places, `$XDG_RUNTIME_DIR` and the system temp dir (those that exist)."""
    candidates = [
        os.environ.get(WORKSPACE_DIR_ENV),
        *TMPFS_PLACES,
        os.environ.get("XDG_RUNTIME_DIR"),
        tempfile.gettempdir(),
    ]
    places: list[Path] = []
    for candidate in candidates:
        if candidate and os.path.isdir(candidate) and Path(candidate) not in places:
            places.append(Path(candidate))
    return places


def sweep_stale(places: Iterable[str | os.PathLike[str]] | None = None) -> list[str]:
    """Remove the scratch directories (in `places`, default `scratch_places()`) whose
    owner is gone, by the rules of the module docstring; returns the paths removed."""
    own_ns = _namespace_id()
    if own_ns is None:
        return []  # nothing can be judged without /proc
    removed: list[str] = []
    for place in scratch_places() if places is None else [Path(p) for p in places]:
        try:
            entries = list(os.scandir(place))
        except OSError:
            continue
        for entry in entries:
            if _stale(entry, own_ns):
                try:
                    remove_scratch(entry.path)
                except OSError:
                    continue  # left for a later sweep; never a reason to fail a run
                removed.append(entry.path)
    return removed


def describe_sweep(removed: Sequence[str]) -> str:
    """The one line that tells a user what a sweep removed."""
    count = len(removed)
    shown = ", ".join(removed[:SHOWN_IN_MESSAGE])
    if count > SHOWN_IN_MESSAGE:
        shown += f" and {count - SHOWN_IN_MESSAGE} more"
    noun = "directory" if count == 1 else "directories"
    return f"assay: removed {count} stale scratch {noun} of assay runs that died ({shown})"


def remove_scratch(path: str | os.PathLike[str]) -> None:
    """Remove the directory `path` and everything in it, read-only parts included,
    following no symlink, at any depth; raises OSError when something is left."""
    try:
        _remove_scratch(path)
    except RecursionError:
        remove_deep(path)


def _remove_scratch(path: str | os.PathLike[str]) -> None:
    try:
        shutil.rmtree(path)
        return
    except FileNotFoundError:
        return
    except OSError:
        pass
    # A read-only directory (a test's chmod) stops an unprivileged removal: make every
    # directory ours to change, then try once more.
    _make_directories_writable(path)
    try:
        shutil.rmtree(path)
    except FileNotFoundError:
        return


# --------------------------------------------------------------------------- owners


def _stale(entry: os.DirEntry[str], own_ns: int) -> bool:
    match = _NAME.fullmatch(entry.name)
    if match is None or int(match["ns"]) != own_ns:
        return False
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode):
        return False
    # The owner first: most entries are live runs', and telling whose uid a sandbox's is
    # loads the sandbox package.
    return _owner_gone(int(match["pid"]), int(match["start"])) and _ours(info.st_uid)


def _ours(uid: int) -> bool:
    me = os.geteuid()
    return uid == me or (me == 0 and uid in _sandbox_uids())


def _sandbox_uids() -> range | frozenset[int]:
    # As root, the bubblewrap backend hands workspaces and report directories to the
    # sandbox's uid. Imported here: the sandbox package sits above this module.
    try:
        from assay.sandbox.identity import FALLBACK_UID, SANDBOX_ID_BASE, SANDBOX_ID_SLOTS
    except ImportError:
        return frozenset()
    ids = range(SANDBOX_ID_BASE, SANDBOX_ID_BASE + SANDBOX_ID_SLOTS)
    return frozenset({*ids, FALLBACK_UID}) if FALLBACK_UID not in ids else ids


def _owner_gone(pid: int, start: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = _after_name(f.read())
    except FileNotFoundError:
        return True
    except OSError:
        return False  # cannot tell: leave it
    if len(fields) < 20:
        return False
    if fields[0] in (b"Z", b"X"):
        return True
    return int(fields[19]) != start  # the pid now names another process


def _owner_tag() -> str | None:
    ns = _namespace_id()
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = _after_name(f.read())
    except OSError:
        return None
    if ns is None or len(fields) < 20:
        return None
    return f"{os.getpid()}_{int(fields[19])}_{ns}"


def _after_name(stat_line: bytes) -> list[bytes]:
    """Fields of a /proc/PID/stat line after the command name (which may hold spaces)."""
    return stat_line[stat_line.rfind(b")") + 2 :].split()


def _namespace_id() -> int | None:
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return None


def _make_directories_writable(path: str | os.PathLike[str]) -> None:
    """Give every directory under `path` (itself included) mode 0700, following no link.

    Each directory is opened with O_PATH|O_NOFOLLOW before its mode is changed through
    that descriptor, so a directory swapped for a symlink meanwhile is never followed.
    """
    top = os.fspath(path)
    _chmod_directory(top, None)
    for _root, dirs, _files, root_fd in os.fwalk(top, follow_symlinks=False):
        for name in dirs:  # before the walk opens them: a mode-000 one opens only after
            _chmod_directory(name, root_fd)


def _chmod_directory(name: str, dir_fd: int | None) -> None:
    flags = os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError:
        return  # gone, or a symlink: not ours to change
    try:
        os.chmod(f"/proc/self/fd/{fd}", 0o700)
    except OSError:
        pass
    finally:
        os.close(fd)

"""A control group per sandboxed run: memory and process counts capped for the run as a whole.

Per-process rlimits cannot stop five processes from taking 1.5 GB each, nor a test from
filling a RAM-backed tmpfs (tmpfs pages are charged to the memory cgroup of the process
that writes them). A cgroup can, and `pids.max` counts the run's own processes rather than
every process of a uid on the host, so a fork bomb in one run cannot starve another.

Both cgroup v2 (one unified hierarchy) and v1 (a `memory` and a `pids` hierarchy) are
used where this process may create child groups under its own; where it may not (no
delegation, a read-only /sys/fs/cgroup), `create` says why and the caller records that
the whole-run limits were not in force. Nothing here is ever a reason not to run.

A process joins by writing its pid to `cgroup.procs` before it starts anything, so every
descendant is born inside: `join_argv` prefixes a command with a tiny host-side shell
that does exactly that and then execs the command.

Joining is slow after the machine has been idle: every move between groups takes the
kernel's `cgroup_threadgroup_rwsem` for writing, and after a quiet spell the first writer
waits out an RCU grace period (7-20 ms measured here; cgroup v2's `favordynmods` mount
option exists for this). `RunCgroup.prime` starts that wait early, beside the work before
the command starts, by moving this process into the group it is already in, which takes
the same lock and moves nothing.

A run killed with SIGKILL leaves its groups behind (a harness's timeout does that). Their
names say who made them (`assay.scratch.tagged_name`), and `create` removes those whose
maker is gone, killing whatever is left in them first.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from assay.errors import AssayError
from assay.scratch import owner_gone_by_name

#: Where cgroup filesystems are mounted.
CGROUP_ROOT = Path("/sys/fs/cgroup")
#: What `join_argv`'s shell prints when it cannot join (recognised as a sandbox refusal).
JOIN_FAILED = "assay-cgroup: cannot join"
#: How long `remove` waits for the last processes of a group to be gone.
REMOVE_WAIT_SECONDS = 2.0
#: How long a sweep waits for the killed processes of a dead run's group to be gone.
SWEEP_WAIT_SECONDS = 0.2
#: How often `prime` takes the lock again while no process has joined: well within
#: a grace period, after which the kernel lets the lock's fast path back.
PRIME_EVERY_SECONDS = 0.002
#: The longest `prime` keeps the lock primed for a join that does not come.
PRIME_AT_MOST_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class RunCgroup:
    """The groups one run's processes are put in, and the limits they enforce."""

    directories: tuple[Path, ...]
    """One per hierarchy (v2: one; v1: memory and pids)."""
    version: int
    memory_bytes: int | None
    pids_max: int | None

    def join_argv(self, argv: Sequence[str]) -> list[str]:
        """`argv`, started by a shell that first moves itself into every group."""
        script = (
            'while [ "$1" != -- ]; do '
            f'echo $$ > "$1" 2>/dev/null || {{ echo "{JOIN_FAILED} $1" >&2; exit 125; }}; '
            'shift; done; shift; exec "$@"'
        )
        procs = [str(d / "cgroup.procs") for d in self.directories]
        return ["/bin/sh", "-c", script, "sh", *procs, "--", *argv]

    def prime(self) -> threading.Event:
        """Start taking the kernel's lock (see the module's notes) in a thread, until a
        process has joined the groups, the returned event is set, or a second passed: a
        process that joins meanwhile (`join_argv`) then does not wait for the grace period
        the lock may want first. Where this process may not write its own group, nothing
        is primed and nothing else changes."""
        done = threading.Event()
        threading.Thread(
            target=self._prime, args=(done,), name="cgroup-primer", daemon=True
        ).start()
        return done

    @contextlib.contextmanager
    def joins_primed(self) -> Iterator[None]:
        """`prime`, stopped when the block ends."""
        done = self.prime()
        try:
            yield
        finally:
            done.set()

    def _prime(self, done: threading.Event) -> None:
        own = self.directories[0].parent / "cgroup.procs"  # this process's own group
        joined = self.directories[0] / "cgroup.procs"
        pid = str(os.getpid()).encode()
        expires = time.monotonic() + PRIME_AT_MOST_SECONDS
        try:
            fd = os.open(own, os.O_WRONLY | os.O_CLOEXEC)
        except OSError:
            return
        try:
            while not done.is_set() and time.monotonic() < expires:
                with contextlib.suppress(OSError):  # refused after the lock: still primed
                    os.write(fd, pid)
                if _members(self.directories[0]) or not joined.exists():
                    return
                done.wait(PRIME_EVERY_SECONDS)
        finally:
            os.close(fd)

    def describe(self) -> dict[str, object]:
        """For evidence: which whole-run limits were in force, and how."""
        return {
            "enforced_by": f"cgroup v{self.version}",
            "memory_bytes": self.memory_bytes,
            "pids_max": self.pids_max,
        }

    def kill(self) -> None:
        """SIGKILL every process still in the groups (v2: `cgroup.kill` where it exists)."""
        for directory in self.directories:
            _kill_members(directory)

    def remove(self) -> None:
        """Kill what is left and remove the groups; raises OSError if one stays."""
        self.kill()
        expires = time.monotonic() + REMOVE_WAIT_SECONDS
        for directory in self.directories:
            while True:
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > expires:
                        raise
                    self.kill()
                    time.sleep(0.02)


class CgroupUnavailable(AssayError):
    """No group could be made here; the message says why (for evidence)."""


def create(name: str, *, memory_bytes: int | None, pids_max: int | None) -> RunCgroup:
    """Make the groups for run `name` under this process's own, once the groups there of
    runs that died are gone; raises `CgroupUnavailable`."""
    own = _own_groups()
    if "" in own and (CGROUP_ROOT / "cgroup.controllers").exists():
        sweep_stale(CGROUP_ROOT / own[""].lstrip("/"))
        return _create_v2(own[""], name, memory_bytes, pids_max)
    if "memory" in own or "pids" in own:
        for controller in ("memory", "pids"):
            if controller in own:
                sweep_stale(_v1_parent(own, controller))
        return _create_v1(own, name, memory_bytes, pids_max)
    raise CgroupUnavailable("no cgroup hierarchy with memory or pids controllers is mounted")


def can_cap_memory() -> bool:
    """Whether a run's group made here could hold a memory limit, as `create` would make
    it (a v2 parent with the memory controller, or a v1 memory hierarchy, that this process
    may write): told without making one."""
    own = _own_groups()
    if "" in own and (CGROUP_ROOT / "cgroup.controllers").exists():
        parent = CGROUP_ROOT / own[""].lstrip("/")
        available = _read(parent / "cgroup.controllers").split()
        return "memory" in available and os.access(parent, os.W_OK)
    if "memory" in own:
        return os.access(_v1_parent(own, "memory"), os.W_OK)
    return False


def sweep_stale(parent: Path) -> list[Path]:
    """Remove the groups in `parent` whose maker is gone (their names say who made them:
    `assay.scratch.tagged_name`), killing what is still in them; returns those removed.
    One that cannot be removed is left for the next sweep."""
    removed = []
    try:
        entries = [e for e in os.scandir(parent) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    for entry in entries:
        if owner_gone_by_name(entry.name):
            directory = Path(entry.path)
            _kill_members(directory)
            # Briefly: a group whose processes will not die is left for the next sweep.
            expires = time.monotonic() + SWEEP_WAIT_SECONDS
            while _members(directory) and time.monotonic() < expires:
                time.sleep(0.005)
            with contextlib.suppress(OSError):
                directory.rmdir()
                removed.append(directory)
    return removed


def _create_v2(own: str, name: str, memory_bytes: int | None, pids_max: int | None) -> RunCgroup:
    parent = CGROUP_ROOT / own.lstrip("/")
    wanted = {c for c, v in (("memory", memory_bytes), ("pids", pids_max)) if v is not None}
    enabled = set(_read(parent / "cgroup.subtree_control").split())
    if not wanted <= enabled:
        try:
            (parent / "cgroup.subtree_control").write_text(
                " ".join(f"+{c}" for c in sorted(wanted - enabled))
            )
        except OSError as exc:
            # Typically EBUSY: the parent holds processes ("no internal processes" rule).
            raise CgroupUnavailable(
                f"cannot enable {', '.join(sorted(wanted - enabled))} in {parent}: "
                f"{exc.strerror or exc}"
            ) from exc
    directory = _mkdir(parent / name)
    try:
        if memory_bytes is not None:
            (directory / "memory.max").write_text(str(memory_bytes))
            with contextlib.suppress(OSError):  # swap would let memory.max be sidestepped
                (directory / "memory.swap.max").write_text("0")
        if pids_max is not None:
            (directory / "pids.max").write_text(str(pids_max))
    except OSError as exc:
        _discard(directory)
        raise CgroupUnavailable(f"cannot set limits in {directory}: {exc}") from exc
    return RunCgroup((directory,), 2, memory_bytes, pids_max)


def _create_v1(
    own: dict[str, str], name: str, memory_bytes: int | None, pids_max: int | None
) -> RunCgroup:
    made: list[Path] = []
    try:
        if memory_bytes is not None:
            memory = _mkdir(_v1_parent(own, "memory") / name)
            made.append(memory)
            (memory / "memory.limit_in_bytes").write_text(str(memory_bytes))
        if pids_max is not None:
            pids = _mkdir(_v1_parent(own, "pids") / name)
            made.append(pids)
            (pids / "pids.max").write_text(str(pids_max))
    except (OSError, CgroupUnavailable) as exc:
        for directory in made:
            _discard(directory)
        if isinstance(exc, CgroupUnavailable):
            raise
        raise CgroupUnavailable(f"cannot set cgroup v1 limits: {exc}") from exc
    return RunCgroup(tuple(made), 1, memory_bytes, pids_max)


def _v1_parent(own: dict[str, str], controller: str) -> Path:
    if controller not in own:
        raise CgroupUnavailable(f"no cgroup v1 {controller} hierarchy is mounted")
    return CGROUP_ROOT / controller / own[controller].lstrip("/")


def _own_groups() -> dict[str, str]:
    """This process's group per controller from /proc/self/cgroup (v2's key is "")."""
    groups: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return groups
    for line in lines:
        _id, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            mounted = CGROUP_ROOT / controller if controller else CGROUP_ROOT
            if controller == "" or (mounted / "cgroup.procs").exists():
                groups[controller] = path
    return groups


def _mkdir(directory: Path) -> Path:
    try:
        directory.mkdir()
    except OSError as exc:
        raise CgroupUnavailable(f"cannot create {directory}: {exc.strerror or exc}") from exc
    return directory


def _discard(directory: Path) -> None:
    with contextlib.suppress(OSError):
        directory.rmdir()


def _kill_members(directory: Path) -> None:
    kill_file = directory / "cgroup.kill"
    if kill_file.exists():
        with contextlib.suppress(OSError):
            kill_file.write_text("1")
        return
    for pid in _members(directory):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _members(directory: Path) -> list[int]:
    return [int(p) for p in _read(directory / "cgroup.procs").split() if p.isdigit()]


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""

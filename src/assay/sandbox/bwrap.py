"""The bubblewrap backend: untrusted commands confined to a copy of the workspace.

Inside, a command sees a root built from what checks need, not the host with holes punched
in it: the system directories (`SYSTEM_DIRS`) read-only; toolchains read-only (the
toolchain parts of a home the tool declarations name, such as `~/.cargo/bin` or pipx's
environments, the homes `TOOLCHAIN_HOME_VARS` name, and every hop of the links to each
located tool), with credential files and configs that hold a token masked; its workspace
read-write (with `.git` and the environments it links to read-only, see `provision`, but
for the cache directories tools write inside `node_modules` and the hooks and info/ a git
hook installer writes in `.git`, private to each run);
the source tree read-only; and fresh, size-limited tmpfs mounts for /tmp (holding its
HOME), /var/tmp, /run and /dev/shm. The real homes are empty and read-only but for the
toolchain parts shown in them. Nothing else of the host exists there: no other
directories, no host sockets. It has no network unless asked for (and cargo is then told
it is offline), its own PID namespace (everything in it dies with the check), an
environment of assay's choosing, resource limits, a seccomp filter, and no way to make
user namespaces of its own.

Each directory the root shows is reached name by name, following only links no run can
have made (`nofollow`), held open as it is reached, scanned for credentials through that
descriptor and mounted from it: a directory a run can write (a project's toolchain beside
another run's), swapped for a link and back as the root is built, is not shown, never the
link's target.

Nothing the repository supplies steers a host-side process: the check's command and
variables reach the innermost shell as values of assay's own variables (see `launch`),
and only that shell exports the variables, right before it execs the command.

Running as root needs one extra step: the kernel does not enforce RLIMIT_NPROC for uid 0,
so a fork bomb would not be contained. As root, the command therefore drops to an
unprivileged uid of its own (see `identity`) inside the sandbox, and the workspace is
handed to that uid. Where this process may make control groups, each workspace gets one
(see `cgroup`): memory and processes are then capped for the run as a whole.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fnmatch
import itertools
import os
import posixpath
import pwd
import re
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from assay import probe_bwrap
from assay.environment import EnvPolicy, build_env
from assay.filetree import walk
from assay.process import ProcessResult, Started, StartFailure, run_process
from assay.sandbox import cgroup, identity, launch, nofollow, seccomp, standby
from assay.sandbox.base import (
    CleanupError,
    ProvisionError,
    Sandbox,
    SandboxError,
    SandboxUnavailable,
    Workspace,
    new_run_id,
    resolve_inside,
)
from assay.sandbox.disk_watch import disk_watch, forget
from assay.sandbox.identity import FALLBACK_UID
from assay.sandbox.provision import (
    discard,
    provision_workspace,
    remove_workspace,
)
from assay.scratch import drop_made_ahead, make_like, make_scratch, tagged_name
from assay.source_layout import ENV_WRITABLE_CACHES, GIT_DIR, GIT_KEPT_DIRS, GIT_WRITABLE_DIRS
from assay.tools.index import PACKAGE_MANAGER_HOMES

#: Where HOME points inside the sandbox (on the private /tmp, so it starts empty every run).
SANDBOX_HOME = "/tmp/home"
#: Host directories every check may need, shown read-only (links among them, like a merged
#: /usr's /bin -> usr/bin, are recreated as links). Nothing else of the host root is shown.
SYSTEM_DIRS: tuple[str, ...] = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/nix",
    "/sys",
)
#: Fresh, empty, size-limited and world-writable directories (sticky, like the host's).
PRIVATE_TMPFS: tuple[str, ...] = ("/tmp", "/var/tmp", "/run", "/dev/shm")
#: The size of a fresh filesystem that only holds mount points and links.
_LISTING_TMPFS_BYTES = 16 * 1024**2
#: Deadline for the availability probe; a working bwrap answers in milliseconds.
PROBE_TIMEOUT_SECONDS = 20.0

#: Host variables that name a toolchain's home: what they name is shown read-only (the
#: sandbox passes them on, so they must point somewhere that exists inside).
TOOLCHAIN_HOME_VARS: tuple[str, ...] = (
    "CARGO_HOME",
    "RUSTUP_HOME",
    "PYENV_ROOT",
    "NVM_DIR",
    "GOROOT",
    "GOPATH",
    "GOMODCACHE",
    "JAVA_HOME",
    "VIRTUAL_ENV",
    *PACKAGE_MANAGER_HOMES,
)
#: Names that hold credentials: never shown, even inside a directory that is bound back.
CREDENTIAL_NAMES: tuple[str, ...] = (
    "credentials*",
    "*.token",
    ".*token",
    "*token.json",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".yarnrc*",
    ".git-credentials",
    ".gitconfig",
    ".docker",
    ".kube",
    ".aws",
    ".ssh",
    ".gnupg",
    ".azure",
    ".gcloud",
    ".password-store",
    ".config",
    "*.pem",
    "*.key",
    "id_rsa*",
    "id_ed25519*",
    "id_ecdsa*",
)
#: A configuration file beside a toolchain that holds a secret (`~/.cargo/config.toml`'s
#: `token = ...`, an `.npmrc`-style `_auth=` or `//registry/:_authToken=`): masked like a
#: credential file.
_SECRET_SETTING = re.compile(
    rb"(?im)^\s*(?:[^\s=#]*[/:])?[\w.-]*(token|password|passwd|secret|_auth)\w*\s*[=:]"
)
#: The words `_SECRET_SETTING` needs, lower-cased: a file holding none of them (most files
#: beside a toolchain) is passed over without running the pattern through it.
_SECRET_WORDS = (b"token", b"passw", b"secret", b"_auth")
#: How much of a configuration file is read to look for a secret in it.
_CONFIG_SCAN_BYTES = 64 * 1024

_BWRAP_FIX = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) and make sure user "
    "namespaces are allowed (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04+ "
    "kernel.apparmor_restrict_unprivileged_userns=0), or opt into `--sandbox local`, which "
    "runs checks in a temporary copy but is NOT a security boundary"
)
_LIMIT_FIX = (
    "the machine ran out of processes or memory while starting the sandbox (another run, "
    "or a fork bomb, may be holding them): this is not a bubblewrap problem; retry when the "
    "load has dropped"
)
#: What a failed fork or allocation says, wherever it happens.
_RESOURCE_EXHAUSTED = re.compile(r"Resource temporarily unavailable|Cannot allocate memory")

#: What the in-sandbox shell prints when its `exec` of the command itself fails (dash:
#: `sh: 1: exec: /x: not found`; bash: `sh: line 1: exec: /x: not found`): a shell the
#: command starts says the same of a command it cannot find, without the `exec:`.
_EXEC_FAILED = re.compile(
    r"^sh: (?:line )?(?:\d+: )?exec: (?P<cmd>.+?): "
    r"(?P<why>not found|(?:cannot execute: )?(?:No such file or directory|Permission denied))\s*$"
)
#: The seccomp program's file descriptor in bwrap.
_SECCOMP_FD = 9


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource limits inside the sandbox (None: no limit)."""

    address_space_bytes: int | None = None
    """RLIMIT_AS per process, when given. Default (None): none where the run's memory is
    capped as a whole (its cgroup counts what is used); elsewhere the machine's physical
    memory and `_RESERVED_BEYOND_MEMORY`, so no single process can reserve much more than
    exists (`address_space_for`)."""
    processes: int | None = 1024
    """The run's processes: `pids.max` of its cgroup where there is one, and RLIMIT_NPROC
    (counted per uid: as root each run has a uid of its own) always."""
    file_size_bytes: int | None = 4 * 1024**3
    """RLIMIT_FSIZE: a runaway writer gets SIGXFSZ instead of filling the disk."""
    memory_bytes: int | None = None
    """The run's memory as a whole, tmpfs pages included (its cgroup's limit). Default (None
    at construction): half the machine's physical memory."""
    tmpfs_bytes: int | None = 1024**3
    """The size of each private tmpfs (/tmp, /var/tmp, /run, /dev/shm)."""

    def resolved(self) -> Limits:
        return dataclasses.replace(self, memory_bytes=self.memory_bytes or _physical_memory() // 2)

    def address_space_for(self, memory_capped: bool) -> int | None:
        """RLIMIT_AS for a run whose memory is or is not `memory_capped` as a whole. A cap
        on address space counts what is reserved, not what is used, and the sanitizers
        reserve terabytes of shadow memory they never touch: under any RLIMIT_AS, Go's
        race detector fails a test that synchronises enough ("ThreadSanitizer failed to
        allocate 0x1c000000000 bytes", golang-lru), and ASan's and TSan's binaries abort at
        start. So where the run's cgroup counts its memory, none is set unless asked for."""
        if self.address_space_bytes is not None or memory_capped:
            return self.address_space_bytes
        return _physical_memory() + _RESERVED_BEYOND_MEMORY


#: Address space reserved but never committed, where a process's address space is all that
#: bounds it: V8 reserves about 10 GiB for each WebAssembly memory, and vitest's vite
#: instantiates several (it needs 32 to 48 GiB).
_RESERVED_BEYOND_MEMORY = 64 * 1024**3


def _raise(error: OSError) -> None:
    raise error


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 8 * 1024**3


@dataclass(frozen=True, slots=True)
class BwrapOptions:
    """How a `BwrapSandbox` confines commands; every default is the strict one."""

    network: bool = False
    """Share the host network. Off: tests cannot reach services or exfiltrate."""
    limits: Limits = field(default_factory=Limits)
    toolchain_paths: tuple[str, ...] = ()
    """Binaries of real toolchains the probes resolved. Those outside the system directories
    are shown read-only by their installation prefix (see `_toolchain_binds`)."""
    writable_paths: tuple[str, ...] = ()
    """Host directories outside the workspace the command may write (a report directory)."""
    tool_caches: tuple[str, ...] = ()
    """Those of `writable_paths` that only a command whose environment names one, or a
    directory in one (its tool's cache variable), may write; every other command sees
    them read-only, so a test cannot plant entries that a later run's tool takes on trust."""
    executable: str = "bwrap"
    """The bubblewrap binary, looked up on PATH when not absolute."""
    whole_run_limits: bool = True
    """Give each workspace a cgroup capping its memory and processes, where possible."""


class BwrapSandbox(Sandbox):
    """Commands run under bubblewrap in a temporary copy of the source."""

    name = "bwrap"

    def __init__(self, options: BwrapOptions | None = None) -> None:
        self.options = options or BwrapOptions()
        self._limits = self.options.limits.resolved()
        self._as_root = os.geteuid() == 0
        self._probed: str | SandboxUnavailable | None = None
        self._binary = ""
        """The bubblewrap binary, found by the probe."""
        self._helpers: dict[str, str] = {}
        self._identity: identity.SandboxIdentity | None = None
        self._identity_note = ""
        self._seccomp: int | None = None
        self._seccomp_note = ""
        self._roots: dict[str, tuple[tuple[str, ...], list[str], dict[str, int]]] = {}
        """Per workspace, the directories held when its root was built, the root, and a
        descriptor holding each of its binds' sources as it was built (`_built_root`)."""
        self._pins: dict[str, list[int]] = {}
        """Per workspace, every descriptor its roots hold, closed when it is cleaned up."""
        self._held: dict[str, tuple[str, ...]] = {}
        """Per workspace, the directories shown read-only (`hold`)."""
        self._cgroups: dict[str, cgroup.RunCgroup] = {}
        self._cgroup_notes: dict[str, str] = {}

    def with_network(self) -> BwrapSandbox:
        """This sandbox with the host network shared; every other confinement stays."""
        online = BwrapSandbox(dataclasses.replace(self.options, network=True))
        online._share_state(self)
        return online

    def _share_state(self, other: BwrapSandbox) -> None:
        """Run as `other` does: same probe, id, filter and per-workspace groups."""
        self._probed, self._helpers = other._probed, other._helpers
        self._identity, self._identity_note = other._identity, other._identity_note
        self._seccomp, self._seccomp_note = other._seccomp, other._seccomp_note
        self._cgroups, self._cgroup_notes = other._cgroups, other._cgroup_notes
        self._held, self._pins = other._held, other._pins
        self._binary = other._binary

    def __getstate__(self) -> dict[str, object]:
        # Descriptors are this process's: elsewhere the same numbers hold other files.
        return {**self.__dict__, "_roots": {}, "_pins": {}}

    @property
    def uid(self) -> int | None:
        """The uid commands run as (as root), or None when they keep the caller's."""
        if not self._as_root:
            return None
        return self._identity.uid if self._identity is not None else FALLBACK_UID

    # -- availability ------------------------------------------------------------------

    def describe(self) -> str:
        self.ensure_available()
        assert isinstance(self._probed, str)
        return self._probed

    def ensure_available(self) -> None:
        """Probe once: `bwrap --version`, then a real `true` with every option a check uses
        (skipped where this binary passed it before, see `assay.probe_bwrap`).

        Also raises `CleanupError` when the probe's scratch directory cannot be removed.
        A probe that failed only for want of processes or memory is not remembered: that
        says nothing about bubblewrap, and the next call tries again."""
        if self._probed is None:
            try:
                self._probed = self._probe()
            except SandboxUnavailable as exc:
                if exc.note != _LIMIT_FIX:
                    self._probed = exc
                raise
        if isinstance(self._probed, SandboxUnavailable):
            raise self._probed

    def _probe(self) -> str:
        binary = shutil.which(self.options.executable)
        if binary is None:
            raise self._unavailable(f"{self.options.executable} not found on PATH")
        key = self._probe_key(binary)
        remembered = probe_bwrap.recall(key) if key is not None else None
        if remembered is not None:
            # This very binary, with these helpers, passed the whole probe on this boot.
            self._find_helpers()
            self._take_identity()
            self._load_seccomp()
            self._binary = binary
            return remembered
        version = run_process([binary, "--version"], timeout=PROBE_TIMEOUT_SECONDS)
        if version.exit_code != 0:
            raise self._unavailable(f"`{binary} --version` failed: {_why(version)}", version)
        describe = _describe_version(version.stdout.text)
        self._find_helpers()
        self._take_identity()
        self._load_seccomp()
        self._binary = binary
        ws = Workspace(run_id="probe", path=make_scratch("bwrap-probe", tempfile.gettempdir()))
        try:
            self._hand_over(ws.path)
            result = self._execute(ws, ["true"], str(ws.path), {}, timeout=PROBE_TIMEOUT_SECONDS)
        except BaseException as error:
            discard(ws.path, error)
            raise
        self.cleanup(ws)  # a leftover is reported (CleanupError), never left behind silently
        if result.exit_code != 0:
            raise self._unavailable(f"`bwrap ... true` failed: {_why(result)}", result)
        if key is not None:
            probe_bwrap.remember(key, describe)
        return describe

    def _helpers_wanted(self) -> tuple[str, ...]:
        return ("setpriv",) if self._as_root else ()

    def _find_helpers(self) -> None:
        for helper in self._helpers_wanted():
            found = shutil.which(helper)
            if found is None:
                raise self._unavailable(f"{helper} (util-linux) not found on PATH")
            # By absolute path: inside, PATH is the check's to set, and these run first.
            self._helpers[helper] = os.path.realpath(found)

    def _probe_key(self, binary: str) -> str | None:
        """What a remembered probe of `binary` is stored under (`assay.probe_bwrap`): the
        binaries it runs, and the temp dir its scratch is made in; None when a helper is
        missing (the probe then says so)."""
        helpers = [shutil.which(helper) for helper in self._helpers_wanted()]
        if None in helpers:
            return None
        binaries = [binary, *(os.path.realpath(h) for h in helpers if h is not None)]
        return probe_bwrap.probe_key(binaries, tempfile.gettempdir())

    def _unavailable(self, reason: str, result: ProcessResult | None = None) -> SandboxUnavailable:
        if result is not None and _RESOURCE_EXHAUSTED.search(_why(result)):
            return SandboxUnavailable(
                f"bubblewrap could not start: {reason}", backend=self.name, note=_LIMIT_FIX
            )
        return SandboxUnavailable(
            f"bubblewrap sandbox unavailable: {reason}", backend=self.name, note=_BWRAP_FIX
        )

    def _take_identity(self) -> None:
        """As root: a uid of this sandbox's own, so process limits are not shared."""
        if not self._as_root or self._identity is not None:
            return
        self._identity = _ahead_identity()
        if self._identity is not None:
            return
        try:
            self._identity = identity.allocate()
        except identity.IdentityUnavailable as exc:
            self._identity_note = (
                f"no uid of its own ({exc}): runs share uid {FALLBACK_UID}, "
                "so their process limits are shared"
            )

    def _load_seccomp(self) -> None:
        try:
            self._seccomp = _seccomp_program_fd()
        except seccomp.UnsupportedArchitecture as exc:
            self._seccomp_note = f"no seccomp filter: {exc}"

    # -- lifecycle -----------------------------------------------------------------------

    def provision(self, source: str | os.PathLike[str], *, commit: str | None = None) -> Workspace:
        self.ensure_available()  # never make a workspace nothing can run in
        group, why_not = self._make_cgroup()
        try:
            # .git is linked, not copied: the link's target is bound read-only by `_argv`.
            # In RAM only where the run's memory cap counts what the checks write there.
            ws = provision_workspace(
                source,
                commit=commit,
                backend=self.name,
                link_git=True,
                ram_ok=group is not None and group.memory_bytes is not None,
            )
        except BaseException:
            if group is not None:
                group.remove()
            raise
        try:
            self._hand_over(ws.path, recursive=True)  # the copy only: links are not followed
            for writable in self.options.writable_paths:
                self._hand_over(Path(writable))
        except BaseException as error:
            discard(ws.path, error)
            if group is not None:
                group.remove()
            raise
        if group is not None:
            self._cgroups[ws.run_id] = group
        else:
            self._cgroup_notes[ws.run_id] = why_not
        self._stand_by_for_the_first(ws)
        return ws

    def provision_in_place(self, source: str | os.PathLike[str]) -> Workspace:
        """`source` itself as the workspace, shown read-write at its own path; nothing is
        copied or handed over. As root, commands act as the caller on it (see `_argv`)."""
        self.ensure_available()
        path = Path(source).resolve()
        if not path.is_dir():
            raise ProvisionError(f"not a directory: {path}", backend=self.name)
        built = (*SYSTEM_DIRS, *PRIVATE_TMPFS, "/dev", "/proc")
        if any(_within(point, str(path)) for point in built):
            raise ProvisionError(
                f"{path} holds a directory the sandbox builds itself ({', '.join(built)}): "
                "run from a project directory, or use `--sandbox none`",
                backend=self.name,
            )
        ahead = _take_ahead(self) if self.options.whole_run_limits else None
        group, why_not = (ahead.group, "") if ahead is not None else self._make_cgroup()
        ws = Workspace(run_id=new_run_id(), path=path, owned=False)
        if group is not None:
            self._cgroups[ws.run_id] = group
        else:
            self._cgroup_notes[ws.run_id] = why_not
        if ahead is not None and ahead.standby is not None:
            # The run's sandbox is most likely built already: another built now would
            # only be in its way (a root to build, a process to start and join).
            standby.STANDBYS.add(ws.run_id, ahead.standby)
        else:
            self._stand_by_for_the_first(ws)
        return ws

    def _make_cgroup(self) -> tuple[cgroup.RunCgroup | None, str]:
        """The control group for one workspace's commands, or why there is none."""
        if not self.options.whole_run_limits:
            return None, "whole-run limits not asked for"
        try:
            made = cgroup.create(
                tagged_name("cgroup") or f"assay-{new_run_id()}",
                memory_bytes=self._limits.memory_bytes,
                pids_max=self._limits.processes,
            )
        except cgroup.CgroupUnavailable as exc:
            return None, str(exc)
        made.prime()  # the first command's join then waits for nothing
        return made, ""

    def runner(self, workspace: Workspace) -> _BwrapRunner:
        self.ensure_available()
        return _BwrapRunner(self, workspace)

    def reclaim(self, workspace: Workspace) -> None:
        self._hand_over(workspace.path, recursive=True)

    def write_file(self, workspace: Workspace, relpath: str, data: bytes) -> None:
        super().write_file(workspace, relpath, data)
        self.reclaim(workspace)

    def cleanup(self, workspace: Workspace) -> None:
        standby.STANDBYS.discard(workspace.run_id)
        group = self._cgroups.pop(workspace.run_id, None)
        self._cgroup_notes.pop(workspace.run_id, None)
        with _roots_lock:
            self._roots.pop(workspace.run_id, None)
            pins = self._pins.pop(workspace.run_id, [])
        standby.close_all(pins)
        self._held.pop(workspace.run_id, None)
        try:
            if group is not None:
                group.remove()
        except OSError as exc:
            forget(workspace.path)
            if workspace.owned:
                remove_workspace(workspace, backend=self.name)
            raise CleanupError(f"cgroup of {workspace.run_id}: {exc}", backend=self.name) from exc
        forget(workspace.path)
        if workspace.owned:  # a workspace in place is the user's directory
            remove_workspace(workspace, backend=self.name)

    def limits_in_force(self, workspace: Workspace) -> dict[str, object]:
        """For evidence: every limit a command in `workspace` runs under, and what enforces it."""
        limits = self._limits
        group = self._cgroups.get(workspace.run_id)
        whole_run: dict[str, object] = (
            group.describe()
            if group is not None
            else {"enforced_by": None, "why_not": self._cgroup_notes.get(workspace.run_id, "")}
        )
        return {
            "per_process": {
                "address_space_bytes": limits.address_space_for(
                    self._memory_capped(workspace.run_id)
                ),
                "processes_per_uid": limits.processes,
                "file_size_bytes": limits.file_size_bytes,
            },
            "whole_run": whole_run,
            "tmpfs_bytes": limits.tmpfs_bytes,
            "uid": self.uid,
            "uid_note": (
                self._identity_note
                if workspace.owned or not self._as_root
                else "in place: mapped to the caller (root) on its files, so processes are "
                "bounded by the whole-run limit only"
            ),
            "seccomp": self._seccomp is not None,
            "seccomp_note": self._seccomp_note,
            "user_namespaces": "blocked",
            "network": self.options.network,
        }

    def _hand_over(self, path: Path, *, recursive: bool = False) -> None:
        """As root, give the sandbox uid ownership so it can write there (it is our copy)."""
        uid = self.uid
        if uid is None:
            return
        if not recursive:
            os.chown(path, uid, uid)
            return
        # In process, not `chown -R`: a small tree's copy is handed over in 0.3 ms, where
        # starting chown took 2 to 6. Nothing but assay has touched the copy yet, and no
        # link is followed.
        try:
            os.chown(path, uid, uid, follow_symlinks=False)
            for top, dirs, files in walk(path, onerror=_raise):
                for name in (*dirs, *files):
                    os.chown(os.path.join(top, name), uid, uid, follow_symlinks=False)
        except OSError as exc:
            raise ProvisionError(f"chown of {path} failed: {exc}", backend=self.name) from exc

    # -- the command line ----------------------------------------------------------------

    def _launch_template(self, workspace: Workspace) -> list[str]:
        """The first part of a command's start in `workspace` (`assay.sandbox.launch`):
        all of its confinement, and `--args` for the rest."""
        args = [*self._launcher(workspace), self._binary, "--die-with-parent", "--new-session"]
        # The host's cgroup namespace, not one of its own: there, the host's cgroup mounts
        # read as rooted above the run's group (`/../../..`), and a JVM's container support
        # (GraalVM native images at start) raised on every metric. Shared, a JVM finds the
        # run's group, and takes its limits as its container's.
        args += ["--unshare-ipc", "--unshare-pid", "--unshare-uts"]
        if not self.options.network:
            args.append("--unshare-net")
        dropped = self._dropped(workspace)
        if not dropped:
            # Unprivileged bwrap needs a user namespace; none may be nested inside it. As
            # root there is none to disable: the seccomp filter refuses new ones instead.
            args += ["--unshare-user", "--disable-userns"]
        if self._seccomp is not None:
            args += ["--seccomp", str(_SECCOMP_FD)]
        args += ["--args", launch.FD_PLACEHOLDER]
        if dropped:
            args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--"]
            ids = str(self.uid)
            args += [
                self._helpers["setpriv"],
                f"--reuid={ids}",
                f"--regid={ids}",
                "--clear-groups",
                "--inh-caps=-all",
                "--",
            ]
        else:
            args.append("--")
        return [*args, "/bin/sh", "-c", launch.COMMAND_SHELL, "sh"]

    def _sandbox_args(
        self, workspace: Workspace, cwd: str, overlay: Mapping[str, str]
    ) -> list[str]:
        """What of a command's late part builds its sandbox, each path by its name: the
        uid, the root, the caches and the directory (all but the command and its
        variables)."""
        mounts, _ = self._mounts(workspace, overlay)
        return [*mounts, "--chdir", cwd]

    def _mounts(
        self, workspace: Workspace, overlay: Mapping[str, str]
    ) -> tuple[list[str], dict[str, int]]:
        """The uid, the root and the caches of a command's sandbox, each path by its name,
        and a descriptor holding each bind's source as the root was built."""
        args: list[str] = []
        if self._as_root and not self._dropped(workspace):
            args += ["--uid", str(self.uid), "--gid", str(self.uid)]
        root, pins = self._built_root(workspace)
        args += root
        for cache in self.options.tool_caches:
            if not _names(overlay, cache):
                args += ["--ro-bind", cache, cache]
        return args, pins

    def _by_descriptors(
        self, mounts: Sequence[str], pins: Mapping[str, int]
    ) -> tuple[list[str], list[int]]:
        """`mounts` with each bind's source the copy of its pin that bubblewrap is to
        inherit, and those copies (`standby.by_descriptors`)."""
        handed = standby.by_descriptors(mounts, pins)
        if handed is None:
            raise SandboxError("a sandbox's mount option is not known here", backend=self.name)
        return handed

    def _dropped(self, workspace: Workspace) -> bool:
        """As root in place, the command cannot be handed the user's tree: it runs in a
        user namespace as the sandbox's uid mapped to the caller, so it acts on that tree
        as the caller would, as an unprivileged caller's command does. Otherwise, as root,
        it drops to the sandbox's uid itself."""
        return self._as_root and workspace.owned

    def _stand_by_for_the_first(self, workspace: Workspace) -> None:
        """Build the first command's sandbox now, beside the rest of the provisioning: a
        standby (`assay.sandbox.standby`) whose shell waits inside, at the workspace's root,
        with the mounts of a command whose variables name no tool cache. The first command
        it fits (of a stage's, `start_order` starts the test run first) then waits for none
        of bubblewrap's work, its cgroup's join, nor HOME to be made (a first `true` took
        7.8 ms so, 31.5 ms with only bubblewrap started ahead, on a loaded machine). One
        only: on two cores, three built for a stage of three checks made a small verify
        slower (549 against 530 ms, where one made it 510 against 520)."""
        if not self._binary:
            return
        template, env = self._launch_template(workspace), self._env()
        rlimits = self._rlimits(workspace.run_id)
        root = str(workspace.path)
        try:
            late = [*self._mounts(workspace, {})[0], "--chdir", root]
            built = standby.start(template, env, root, rlimits, late, self._trust())
        except (SandboxError, OSError):
            return  # the command's own start says why
        if built is not None:
            standby.STANDBYS.add(workspace.run_id, built)

    def _execute(
        self,
        workspace: Workspace,
        argv: Sequence[str],
        cwd: str,
        overlay: Mapping[str, str],
        *,
        timeout: float | None,
        no_output_timeout: float | None = None,
    ) -> ProcessResult:
        """Run `argv` in `workspace`: in place, in its standby when one fits; else as
        `_launched` starts it."""
        template = self._launch_template(workspace)
        env = self._env()
        begun = None
        if standby.STANDBYS.has(workspace.run_id):
            begun = self._standing_by(workspace, template, env, cwd, overlay, argv)
        if begun is None:
            begun = self._launched(workspace, template, env, cwd, overlay, argv)
        if not workspace.owned:
            self._keep_for_the_next(workspace, cwd, overlay)
        return run_process(
            begun.argv,
            cwd=begun.cwd,
            timeout=timeout,
            no_output_timeout=no_output_timeout,
            started=begun,
            watch=disk_watch(workspace.path, *self.options.writable_paths),
        )

    def _launched(
        self,
        workspace: Workspace,
        template: Sequence[str],
        env: dict[str, str],
        cwd: str,
        overlay: Mapping[str, str],
        argv: Sequence[str],
    ) -> Started:
        """`argv` started through a launch started now (`assay.sandbox.launch`), its words
        in the launch's own argv, its mounts and variables fed late (its cgroup's join
        primed).

        Each bind's source is handed to bubblewrap as a descriptor the launch inherited,
        opened when the workspace's root was built, never as its path: bubblewrap would
        resolve a path as it mounts it, and a run in place that can write beside it could
        swap it for a link and back in between, and show this sandbox the link's target."""
        mounts, pins = self._mounts(workspace, overlay)
        rlimits = self._rlimits(workspace.run_id)
        fed, passed = self._by_descriptors(mounts, pins)
        group = self._cgroups.get(workspace.run_id)
        primed = group.joins_primed() if group is not None else None
        try:
            with primed or contextlib.nullcontext():
                started = launch.start(
                    template, env, str(workspace.path), rlimits, argv, keep_fds=passed
                )
        finally:
            standby.close_all(
                passed
            )  # bubblewrap has its own, and closes each once it has mounted it
        return started.feed([*fed, "--chdir", cwd, *launch.late_variables(overlay)])

    def _standing_by(
        self,
        workspace: Workspace,
        template: Sequence[str],
        env: dict[str, str],
        cwd: str,
        overlay: Mapping[str, str],
        argv: Sequence[str],
    ) -> Started | None:
        """`argv` started in the workspace's standby when one fits it (`assay.sandbox.standby`),
        else None. A copied workspace's standby was built at its root
        (`_stand_by_for_the_first`): the command's script enters its own directory."""
        built_in = str(workspace.path) if workspace.owned else cwd
        sandbox = self._sandbox_args(workspace, built_in, overlay)
        rlimits = self._rlimits(workspace.run_id)
        waiting = standby.STANDBYS.take(workspace.run_id, template, env, rlimits, sandbox)
        return waiting.command(cwd, overlay, argv) if waiting is not None else None

    def _keep_for_the_next(
        self, workspace: Workspace, cwd: str, overlay: Mapping[str, str]
    ) -> None:
        """Keep what the sandbox of a command in place was made of, for the next run's
        standby (`standby_hint`); once the command started, its root is built already."""
        global _last_in_place
        _last_in_place = {
            "late": self._sandbox_args(workspace, cwd, overlay),
            "account": _account(self._identity),
            "writable": list(self.options.writable_paths),
        }

    def _launcher(self, workspace: Workspace) -> list[str]:
        """A host-side shell that puts bwrap in the run's cgroup and hands it the seccomp
        program, then execs it (nothing of the repository is in its arguments' reach)."""
        group = self._cgroups.get(workspace.run_id)
        procs = [str(d / "cgroup.procs") for d in group.directories] if group else []
        if not procs and self._seccomp is None:
            return []
        script = (
            'while [ "$1" != -- ]; do '
            f'echo $$ > "$1" 2>/dev/null || {{ echo "{cgroup.JOIN_FAILED} $1" >&2; exit 125; }}; '
            "shift; done; shift; "
        )
        if self._seccomp is not None:
            script += f'exec "$@" {_SECCOMP_FD}</proc/{os.getpid()}/fd/{self._seccomp}'
        else:
            script += 'exec "$@"'
        return ["/bin/sh", "-c", script, "sh", *procs, "--"]

    def _built_root(self, workspace: Workspace) -> tuple[list[str], dict[str, int]]:
        """`_root`'s arguments, built once per workspace: what it shows cannot change.
        Checks start side by side; the first builds them while the others wait, rather
        than each scanning the same toolchain directories at once. With them, a
        descriptor holding what each bind's source named as they were built, held until
        the workspace is cleaned up: every sandbox of the workspace mounts that."""
        with _roots_lock:
            held = self._held.get(workspace.run_id, ())
            built = self._roots.get(workspace.run_id)
            if built is None or built[0] != held:
                root = self._root(workspace)
                args = root.args
                try:
                    pins = standby.pinned_sources(args, root.trust, root.pins)
                except OSError as exc:
                    # Gone since the root was built, or swapped: never left to bubblewrap
                    # to resolve later, as whatever is there then.
                    raise SandboxError(
                        f"a directory the sandbox shows changed as it was built: {exc}",
                        backend=self.name,
                    ) from exc
                if pins is None:
                    raise SandboxError("a root's mount option is not known here", backend=self.name)
                self._pins.setdefault(workspace.run_id, []).extend(pins.values())
                built = self._roots[workspace.run_id] = (held, args, pins)
            return built[1], built[2]

    def hold(self, workspace: Workspace, directories: Sequence[str]) -> bool:
        # Each is bound read-only whole, its caches mounted over directories made for them
        # now: one mount for a node_modules of a thousand packages, not one per package.
        for rel in directories:
            caches = ENV_WRITABLE_CACHES.get(posixpath.basename(rel), frozenset())
            if not _cache_points(os.path.join(str(workspace.path), rel), caches):
                return False
        with _roots_lock:
            held = self._held.get(workspace.run_id, ())
            self._held[workspace.run_id] = (*held, *(d for d in directories if d not in held))
        return True

    def _root(self, workspace: Workspace) -> _RootLayout:
        """The sandbox's filesystem, mount by mount (the module docstring says what is in
        it), each directory reached following only the links its `trust` follows."""
        env = self._env()  # read once: it looks up homes and package managers' places
        root = _RootLayout(self._trust(env))
        for path in SYSTEM_DIRS:
            root.system(path)
        root.add(["--dev", "/dev"], "/dev", fresh=True)
        root.add(["--proc", "/proc"], "/proc", fresh=True)
        for path in PRIVATE_TMPFS:
            root.tmpfs(path, "1777", self._limits.tmpfs_bytes)
        if not self._dropped(workspace):
            # Made by bubblewrap, as the command's own uid (its user namespace maps it):
            # the shell inside then need not start a `mkdir` first. A command that drops
            # to its uid itself (as root, `setpriv`) makes it, as bubblewrap's would be root's.
            root.directory(SANDBOX_HOME, "0700")
        if self.options.network and os.path.isdir("/run/systemd/resolve"):
            root.bind(["--ro-bind"], "/run/systemd/resolve")
        if self._identity is not None:
            root.add(
                ["--ro-bind", str(self._identity.passwd), "/etc/passwd"], "/etc/passwd", fresh=False
            )
            root.add(
                ["--ro-bind", str(self._identity.group), "/etc/group"], "/etc/group", fresh=False
            )
        for home in _real_homes():
            root.tmpfs(home, "0555", 1024**2)  # shown empty, so tools that stat it still work
        source = _source_of(workspace)
        for path, fd in self._toolchain_binds(root.trust, env, source):
            # Scanned through the descriptor that is mounted: the very directory shown.
            root.pins[path] = fd
            root.bind(["--ro-bind"], path)
            for secret in _credentials_in(path, fd):
                root.mask(secret, directory=_is_directory_in(fd, os.path.basename(secret)))
        for writable in self.options.writable_paths:
            root.bind(["--bind"], writable)
        if source is not None:
            # The source tree, read-only at its own path: the workspace's links (.venv,
            # node_modules, .git) point into it, and an editable install in the project's
            # environment imports from it, even when it lies under the hidden home or /tmp.
            root.bind(["--ro-bind"], source)
            # What the copy left out (caches, build output) is not in the cache's key
            # either: a check must not read it there (a test opening the source's
            # `__pycache__/x` by its absolute path would decide by what no key covers).
            for rel in workspace.provisioned.skipped if workspace.provisioned else ():
                if not os.path.islink(os.path.join(source, rel)):  # a link shows only the tree
                    root.mask(os.path.join(source, rel))
            for rel in workspace.provisioned.linked if workspace.provisioned else ():
                caches = ENV_WRITABLE_CACHES.get(posixpath.basename(rel))
                if caches:
                    root.with_private_caches(os.path.join(source, rel), caches, self._limits)
                elif rel == GIT_DIR:
                    root.with_private_caches(
                        os.path.join(source, rel), GIT_WRITABLE_DIRS, self._limits, GIT_KEPT_DIRS
                    )
            for host, seen in _relative_homes(env, source, str(workspace.path)):
                root.mirror(host, seen)
        root.bind(["--bind"], str(workspace.path))
        for rel in self._held.get(workspace.run_id, ()):
            held = os.path.join(str(workspace.path), rel)
            root.add(["--ro-bind", held, held], held, fresh=False)
            for name in sorted(ENV_WRITABLE_CACHES.get(posixpath.basename(rel), frozenset())):
                root.tmpfs(os.path.join(held, name), "1777", self._limits.tmpfs_bytes)
        return root

    def _memory_capped(self, run_id: str) -> bool:
        group = self._cgroups.get(run_id)
        return group is not None and group.memory_bytes is not None

    def _rlimits(self, run_id: str) -> tuple[tuple[int, int], ...]:
        """The per-process limits a launch of `run_id` is given as it starts (`launch.start`):
        every process of the sandbox inherits them, bubblewrap's children and the command's."""
        import resource

        limits = self._limits
        return tuple(
            (which, value)
            for which, value in (
                (resource.RLIMIT_AS, limits.address_space_for(self._memory_capped(run_id))),
                (resource.RLIMIT_NPROC, limits.processes),
                (resource.RLIMIT_FSIZE, limits.file_size_bytes),
            )
            if value is not None
        )

    def _trust(self, env: Mapping[str, str] | None = None) -> nofollow.Trust:
        """Where a link on the way to what a root shows is followed (`nofollow`): the
        system's directories, a home's toolchain directories and the toolchain homes the
        sandbox's variables name, none of which a run can write; never in what a sandbox
        may write. A project's own environment (`VIRTUAL_ENV`) is the project's to write."""
        from assay.tools import home_toolchain_dirs

        places = [*SYSTEM_DIRS]
        places += [os.path.join(h, rel) for h in _real_homes() for rel in home_toolchain_dirs()]
        env = self._env() if env is None else env
        for var in TOOLCHAIN_HOME_VARS:
            if var != "VIRTUAL_ENV":
                places += env.get(var, "").split(os.pathsep)
        return nofollow.trusted(places, self.options.writable_paths)

    def _toolchain_binds(
        self, trust: nofollow.Trust, env: Mapping[str, str], source: str | None = None
    ) -> list[tuple[str, int]]:
        """Toolchain directories the root would not show otherwise, to bind back read-only
        (`env`: the sandbox's own variables, `_env`).

        The toolchain parts of a home that the tool declarations name (`~/.cargo/bin`,
        `~/.rustup`, `~/.local/share/pipx/venvs` ...), the toolchain homes the sandbox's own
        variables name (`CARGO_HOME`, `GOPATH` ...), and each located toolchain's
        installation prefix (a venv under /tmp, a uv-managed Python under the home).

        A toolchain found in the `source` tree (`.venv/bin/ruff`) is the tree's word: a
        link in it may lead out of the tree only to a file where host toolchains live (the
        system's, those named above, a directory on assay's own PATH), or through links
        that end there; a link to anything else is no reason to show that place.

        Each is resolved and opened following only the links `trust` follows, and comes
        with the descriptor that holds it (the caller's to close): a directory a run can
        write, swapped for a link and back as the root is built, is not shown at all,
        rather than the link's target chosen, scanned or mounted in its place."""
        from assay.tools import home_toolchain_dirs

        homes = _real_homes()
        declared = [os.path.join(home, rel) for home in homes for rel in home_toolchain_dirs()]
        binds = list(declared)
        for var in TOOLCHAIN_HOME_VARS:
            binds += [p for p in env.get(var, "").split(os.pathsep) if os.path.isabs(p)]
        # A tree reached through a link no longer is refused as the root is pinned; until
        # then, its path as recorded still bounds where its links may lead.
        tree = (nofollow.resolved(source, trust) or source) if source is not None else ""
        host_places = _host_toolchain_places(binds, homes)
        for path in self.options.toolchain_paths:
            chain = _link_chain(path, trust)
            if not chain:
                continue  # reached through a link a run could have made: not shown
            from_tree = bool(tree) and _within(chain[0], tree)
            # A chain that ends in a host toolchain may pass through links anywhere (a
            # venv's python -> an unmanaged Python's link under the home -> /usr/bin).
            ends_in_toolchain = _in_any(chain[-1], host_places)
            for hop in chain:
                leaves_tree = from_tree and not _within(hop, tree)
                if leaves_tree and not (ends_in_toolchain or _in_any(hop, host_places)):
                    continue
                binds.extend(_toolchain_dirs(hop, [*SYSTEM_DIRS, *declared]))
        shown = [os.path.normpath(p) for p in binds]
        opened: list[tuple[str, int]] = []
        try:
            # Looked up by path first only to skip what is not there at all (most named
            # places, cheaply): what is shown is what the walk below reaches.
            for path in (p for p in dict.fromkeys(shown) if os.path.exists(p)):
                if not _may_show(path, homes):
                    continue
                try:
                    _, fd = nofollow.open_directory(path, trust)
                except OSError:
                    continue  # nothing there, or reached through a link a run could make
                opened.append((path, fd))
        except BaseException:
            standby.close_all([fd for _, fd in opened])
            raise
        return opened

    def _env(self) -> dict[str, str]:
        """What bwrap itself starts with: an allowlist, HOME pinned inside. Never anything
        of the check's: bwrap runs on the host, before any namespace exists."""
        env = build_env(EnvPolicy.MINIMAL, None, home=SANDBOX_HOME)
        env.pop("USERPROFILE", None)
        env["TMPDIR"] = "/tmp"
        env.update(_package_manager_homes())
        if not self.options.network:
            # Without a network, cargo and npm should say they are offline, not time out on
            # an index: npm retries a registry it cannot resolve for over a minute, silent
            # (object-inspect's `posttest: npx aud` read as a hang), offline it says at once.
            env.setdefault("CARGO_NET_OFFLINE", "true")
            env.setdefault("npm_config_offline", "true")
        return env


def _entries(path: str, skip: Collection[str] = ()) -> list[os.DirEntry[str]] | None:
    """The entries of the host directory `path` but those named in `skip`; None where it is
    no directory (a link, a file, nothing) or cannot be listed."""
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            return None
        with os.scandir(path) as listing:
            return [e for e in listing if e.name not in skip]
    except OSError:
        return None


class _RootLayout:
    """bwrap arguments that build the sandbox's root one mount at a time.

    bwrap creates a missing parent of a mount point as root-owned 0700, which would close
    it to the sandbox's uid; parents inside a fresh filesystem are made 0755 here first
    (they are empty apart from the mount, so that shows nothing)."""

    def __init__(self, trust: nofollow.Trust) -> None:
        self.trust = trust
        """Which links are followed on the way to what it shows (`nofollow`)."""
        self.args: list[str] = []
        self._mounts: list[tuple[str, bool]] = [("/", True)]
        """Mount points so far, each with whether it is a fresh (empty) filesystem."""
        self._made: set[str] = set()
        self.pins: dict[str, int] = {}
        """A descriptor holding each bind's source opened as it was chosen, by path."""

    def system(self, path: str) -> None:
        if os.path.islink(path):
            self.args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            self.bind(["--ro-bind"], path)

    def tmpfs(self, path: str, perms: str, size: int | None) -> None:
        sized = ["--size", str(size)] if size else []
        self.add(["--perms", perms, *sized, "--tmpfs", path], path, fresh=True)

    def bind(self, how: list[str], path: str) -> None:
        """Bind `path` at itself, unless a read-only bind of a parent already shows it."""
        if how == ["--ro-bind"] and self._shown_read_only(path):
            return
        self.add([*how, path, path], path, fresh=False)

    def with_private_caches(
        self, path: str, caches: Collection[str], limits: Limits, kept: Collection[str] = ()
    ) -> None:
        """Show the host directory `path` read-only, entry by entry, with an empty writable
        directory of each name in `caches` in place of whatever the host has there; of
        those, each in `kept` shows the host's entries in it, read-only.

        A fresh filesystem at `path` holds a read-only bind of each entry (a link is made
        anew as a link, so its target resolves as on the host), is then made read-only
        itself, so no entry can be added, removed or renamed, and gets one small private
        tmpfs per cache. Names, never contents, are read from the host."""
        entries = _entries(path, skip=caches)
        if entries is None:
            return  # shown as the enclosing bind shows it
        self.tmpfs(path, "0755", _LISTING_TMPFS_BYTES)
        self._entries_read_only(path, entries)
        for name in sorted(caches):
            self.args += ["--perms", "0755", "--dir", os.path.join(path, name)]
        self.args += ["--remount-ro", path]
        for name in sorted(caches):
            self.tmpfs(os.path.join(path, name), "1777", limits.tmpfs_bytes)
            inner = _entries(os.path.join(path, name)) if name in kept else None
            self._entries_read_only(os.path.join(path, name), inner or [])

    def _entries_read_only(self, path: str, entries: list[os.DirEntry[str]]) -> None:
        for entry in entries:
            inside = os.path.join(path, entry.name)
            if entry.is_symlink():
                self.args += ["--symlink", os.readlink(entry.path), inside]
            elif entry.is_dir(follow_symlinks=False) or entry.is_file(follow_symlinks=False):
                self.add(["--ro-bind", inside, inside], inside, fresh=False)

    def mirror(self, host: str, inside: str) -> None:
        """Show the host directory `host` read-only at `inside` as well, where that lies in a
        fresh filesystem of the sandbox's own (never in a bind, never in its HOME)."""
        point, fresh = self._covering(inside)
        if not fresh or point == inside or _within(inside, SANDBOX_HOME):
            return
        if _within(SANDBOX_HOME, inside) or not os.path.isdir(host):
            return
        self.add(["--ro-bind", host, inside], inside, fresh=False)

    def mask(self, path: str, *, directory: bool | None = None) -> None:
        """Hide a file or directory inside something bound: an empty one in its place.
        Whether it is a directory is looked up by its path unless `directory` says."""
        if directory is None:
            directory = os.path.isdir(path) and not os.path.islink(path)
        if directory:
            self.add(["--perms", "0000", "--tmpfs", path], path, fresh=True)
        else:
            self.add(["--ro-bind", "/dev/null", path], path, fresh=False)

    def directory(self, path: str, perms: str) -> None:
        """An empty directory made in a fresh filesystem (no mount of its own)."""
        self._parents(path)
        self._made.add(path)
        self.args += ["--perms", perms, "--dir", path]

    def add(self, args: list[str], point: str, *, fresh: bool) -> None:
        self._parents(point)
        self.args += args
        self._mounts.append((point, fresh))

    def _covering(self, path: str) -> tuple[str, bool]:
        """The mount `path` lies in (the last one wins: later mounts are on top)."""
        best = ("/", True)
        for point, fresh in self._mounts:
            if _within(path, point) and len(point) >= len(best[0]):
                best = (point, fresh)
        return best

    def _shown_read_only(self, path: str) -> bool:
        point, fresh = self._covering(path)
        return not fresh and point != path

    def _parents(self, path: str) -> None:
        parent = os.path.dirname(path.rstrip("/")) or "/"
        point, fresh = self._covering(parent)
        if not fresh or parent == point:
            return  # inside a bind, the host's own directories are there already
        current = point
        for part in Path(os.path.relpath(parent, point)).parts:
            current = os.path.join(current, part)
            if current not in self._made:
                self._made.add(current)
                self.args += ["--perms", "0755", "--dir", current]


def _cache_points(directory: str, caches: Collection[str]) -> bool:
    """Make an empty directory of each name in `caches` in `directory` (reached following
    no link) where there is none, to mount a private cache on; False when one cannot be
    made, or something other than a directory is there."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        for name in caches:
            try:
                os.mkdir(name, 0o755, dir_fd=fd)
            except FileExistsError:
                pass
            if not stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                return False
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def _within(path: str, point: str) -> bool:
    return point == "/" or path == point or path.startswith(point.rstrip("/") + "/")


class _BwrapRunner:
    """`CommandRunner` for one bwrap workspace."""

    def __init__(self, sandbox: BwrapSandbox, workspace: Workspace) -> None:
        self.sandbox = sandbox
        self.workspace = workspace

    def __call__(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        no_output_timeout: float | None = None,
    ) -> ProcessResult:
        inner = tuple(argv)
        inside = str(resolve_inside(self.workspace, cwd))
        result = self.sandbox._execute(
            self.workspace,
            inner,
            inside,
            env or {},
            timeout=timeout,
            no_output_timeout=no_output_timeout,
        )
        # Evidence names the command that was checked; the backend is recorded separately.
        return _interpret(dataclasses.replace(result, argv=inner, cwd=inside))


def _interpret(result: ProcessResult) -> ProcessResult:
    """Turn the sandbox's own refusals into start failures, never into the command's exit.

    The code under test can print these messages itself; doing so only ever makes its
    check inconclusive, never a pass.
    """
    if not result.started or result.timed_out or result.signal is not None:
        return result
    first = result.stderr.head.lstrip().splitlines()[0] if result.stderr.head.strip() else ""
    failure: StartFailure | None = None
    if result.exit_code in (1, 125) and first.startswith(
        ("bwrap: ", "setpriv: ", cgroup.JOIN_FAILED, launch.NO_COMMAND)
    ):
        failure = StartFailure.OS_ERROR
        message = f"sandbox refused to start the command: {first}"
        if _RESOURCE_EXHAUSTED.search(first):
            message += f" ({_LIMIT_FIX})"
    elif first == standby.NO_DIRECTORY and result.exit_code == 125:
        failure = StartFailure.OS_ERROR
        message = f"sandbox refused to start the command: cannot enter {result.cwd}"
    elif (own := _EXEC_FAILED.match(first)) is None or own["cmd"] != result.argv[0]:
        pass  # not the sandbox's shell failing to become the command
    elif result.exit_code == 127 and own["why"] != "Permission denied":
        failure = StartFailure.NOT_FOUND
        message = f"{result.argv[0]}: not found in the sandbox" + _through_a_link(result)
    elif result.exit_code == 126 and own["why"].endswith("Permission denied"):
        failure = StartFailure.PERMISSION_DENIED
        message = f"{result.argv[0]}: permission denied in the sandbox"
    if failure is None:
        return _signal_of(result)
    return dataclasses.replace(result, exit_code=None, start_failure=failure, start_error=message)


def _through_a_link(result: ProcessResult) -> str:
    """Why a command of the tree's is not there, when a directory on its way from the
    command's directory is a link (a `.venv` linked to an environment elsewhere): a
    sandbox follows none a run could have made, so what it names is not shown."""
    command, cwd = result.argv[0], result.cwd or ""
    if not cwd or not command.startswith(cwd.rstrip("/") + "/"):
        return ""
    rel = command[len(cwd.rstrip("/")) + 1 :]
    parts = rel.split("/")
    for end in range(1, len(parts)):
        name = "/".join(parts[:end])
        try:
            target = os.readlink(os.path.join(cwd, name))
        except OSError:
            continue
        return (
            f": {name} is a link, to {target[:160]!r}, and a sandbox shows nothing a link in"
            " the tree names, which could be any of the host's directories; make it a real"
            " directory there, or verify with --sandbox local"
        )
    return ""


def _signal_of(result: ProcessResult) -> ProcessResult:
    """bwrap's init exits 128+N when the command died of signal N: say it was a signal, as
    it would be seen unsandboxed. (A command that itself exits 128+N is then reported as
    killed; either way it is not a pass.)"""
    code = result.exit_code
    if code is None or not 128 < code < 128 + signal.NSIG:
        return result
    return dataclasses.replace(result, exit_code=None, signal=code - 128)


@dataclass(slots=True)
class _Ahead:
    """A cgroup made before its command came, and a standby (`stand_by`) when the last run
    in place said what its sandbox was. No launch: one started before its sandbox is known
    holds none of its binds' sources (`BwrapSandbox._launched`), and no command could
    take it."""

    limits: Limits
    inherited: tuple[object, ...]
    """What this process would hand a process it starts (`_inherited`) when it was made."""
    group: cgroup.RunCgroup
    sandbox: BwrapSandbox
    standby: standby.Standby | None = None
    identity: identity.SandboxIdentity | None = None
    """The uid slot the standby runs as, until a sandbox takes it (`_ahead_identity`)."""


def _inherited() -> tuple[object, ...]:
    """What a process started now inherits from this one besides its environment: the
    umask and every resource limit (a warm worker takes its client's after it made its
    cgroup and standby ahead; a standby that inherited the server's is no run of the
    client's)."""
    from assay.inherited import current_umask, resource_limits

    return current_umask(), tuple(sorted(resource_limits().items()))


_ahead_lock = threading.Lock()
_ahead: list[_Ahead] = []
#: What the sandbox of this process's last command in place was made of (`standby_hint`).
_last_in_place: dict[str, object] | None = None


def start_ahead() -> None:
    """Make now what a command run in place under bubblewrap (`assay run`) would first
    wait for: its cgroup. A warm worker does this while it waits for its request; the
    session that comes next takes it if its limits are the same (`_take_ahead`), and
    `drop_ahead` removes it if not."""
    sandbox = BwrapSandbox()
    try:
        sandbox.ensure_available()
    except SandboxError:
        return  # the request's own session says why
    group, _ = sandbox._make_cgroup()
    if group is None:
        return
    with _ahead_lock:
        _ahead.append(_Ahead(sandbox._limits, _inherited(), group, sandbox))


def standby_hint() -> dict[str, object] | None:
    """What the sandbox of this process's last command in place was made of, for the next
    warm worker to build ahead (`stand_by`); None when it ran none."""
    return _last_in_place


def stand_by(hint: Mapping[str, object]) -> None:
    """Build the sandbox `hint` (`standby_hint`) describes beside what `start_ahead` made,
    with this process's own uid and scratch directories in place of the last run's: the
    next run in the same place then finds it built (`assay.sandbox.standby`). One only:
    a hint that comes after it was built is not followed."""
    late, writable = _words(hint.get("late")), _words(hint.get("writable"))
    account = _words(hint.get("account"))
    if late is None or writable is None or (account is None and hint.get("account")):
        return
    with _ahead_lock:
        ahead = _ahead[0] if _ahead and _ahead[0].standby is None else None
    if ahead is None:
        return
    sandbox = ahead.sandbox
    own = _account(sandbox._identity)
    if (account is None) != (own is None):
        return  # not the same kind of run (as root with a uid of its own, or not)
    renamed = dict(zip(account or (), own or (), strict=True))
    for path in writable:
        # The last run's own directories (its reports), made anew for the next one.
        made = make_like(path)
        if made is not None:
            renamed[path] = made
    placeholder = Workspace(run_id=new_run_id(), path=Path("/"), owned=False)
    sandbox._cgroups[placeholder.run_id] = ahead.group
    template, env = sandbox._launch_template(placeholder), sandbox._env()
    rlimits = sandbox._rlimits(placeholder.run_id)
    late = [renamed.get(word, word) for word in late]
    trust = sandbox._trust()
    ahead.standby = standby.start(template, env, "/", rlimits, late, trust)
    ahead.identity = sandbox._identity
    for option, path in itertools.pairwise(late):
        if option == "--ro-bind":
            try:
                _, fd = nofollow.open_directory(path, trust)
            except OSError:
                continue
            try:
                _credentials_in(path, fd)  # read now, what the next run's root will look for
            finally:
                os.close(fd)


def _words(value: object) -> list[str] | None:
    """`value` when it is a list of strings (as a hint gives them), else None."""
    if isinstance(value, list) and all(isinstance(word, str) for word in value):
        return value
    return None


def _account(held: identity.SandboxIdentity | None) -> list[str] | None:
    """The words a late part names a uid slot by: the uid, its passwd and group files."""
    if held is None:
        return None
    return [str(held.uid), str(held.passwd), str(held.group)]


def drop_ahead() -> None:
    """End what `start_ahead` made and no session took."""
    with _ahead_lock:
        left = list(_ahead)
        _ahead.clear()
    for ahead in left:
        if ahead.standby is not None:
            ahead.standby.discard()
        with contextlib.suppress(OSError):
            ahead.group.remove()
    drop_made_ahead()


def _take_ahead(sandbox: BwrapSandbox) -> _Ahead | None:
    """What `start_ahead` made, when its cgroup has the limits `sandbox` asks for and its
    launch inherited what a launch started now would."""
    with _ahead_lock:
        if not _ahead:
            return None
        inherited = _inherited()
        for index, ahead in enumerate(_ahead):
            if ahead.limits == sandbox._limits and ahead.inherited == inherited:
                return _ahead.pop(index)
    return None


def _ahead_identity() -> identity.SandboxIdentity | None:
    """The uid slot a standby made ahead runs as, for the sandbox made next: its commands
    can then take that standby (the uid is in its late part)."""
    with _ahead_lock:
        for ahead in _ahead:
            if ahead.identity is not None:
                held, ahead.identity = ahead.identity, None
                return held
    return None


_seccomp_lock = threading.Lock()
#: Held while a root is built (`BwrapSandbox._built_root`). The module's, not a sandbox's:
#: a sandbox is pickled to run on another machine (`assay eval --executor ray`).
_roots_lock = threading.Lock()
_seccomp_fd: dict[int, int] = {}


def _seccomp_program_fd() -> int:
    """The seccomp program in a memory file, made once per process and shared by every
    sandbox (it never changes); bwrap's launcher opens it through /proc."""
    with _seccomp_lock:
        if not _seccomp_fd:
            program = seccomp.filter_program()
            fd = os.memfd_create("assay-seccomp", os.MFD_CLOEXEC)
            os.write(fd, program)
            _seccomp_fd[0] = fd
        return _seccomp_fd[0]


def _source_of(workspace: Workspace) -> str | None:
    """The source directory `workspace` was made from, as recorded when it was provisioned.

    Never read back from the workspace: the code under test can repoint its links.
    """
    record = workspace.provisioned
    if record is None or not os.path.isdir(record.source):
        return None
    return record.source


def _in_any(path: str, places: Sequence[str]) -> bool:
    return any(_within(path, place) for place in places)


def _host_toolchain_places(named: Sequence[str], homes: Sequence[str]) -> list[str]:
    """Where the host's toolchains live, as far as a link in the tree may lead: the system
    directories, the toolchain places `named` (a home's `.pyenv`, `CARGO_HOME` ...), each
    directory on assay's own PATH, and the installation that directory belongs to
    (Homebrew's `opt/python@3.12` beside its `bin`), unless that is `/` or in a home."""
    on_path = [p for p in os.environ.get("PATH", "").split(os.pathsep) if os.path.isabs(p)]
    prefixes = [_install_prefix(os.path.join(p, "tool")) for p in on_path]
    installs = [p for p in prefixes if p != "/" and not any(_within(p, home) for home in homes)]
    return [os.path.normpath(p) for p in (*SYSTEM_DIRS, *named, *on_path, *installs)]


def _toolchain_dirs(binary: str, shown: Sequence[str]) -> list[str]:
    """What to bind so that the toolchain binary at `binary` runs inside (see
    `BwrapSandbox._toolchain_binds`): its installation prefix, unless a directory shown
    anyway holds it (`~/.local/bin/x` is shown as part of `~/.local/bin`, never by its
    prefix `~/.local`)."""
    if any(_within(binary, d) for d in shown if os.path.isdir(d)):
        return []
    return [_install_prefix(binary)]


def _link_chain(path: str, trust: nofollow.Trust, limit: int = 40) -> list[str]:
    """`path` and every link it goes through on the way to its file, each absolute: a
    `.venv/bin/python` that links to a uv-managed interpreter that links on to /usr/bin
    needs every hop to exist inside. Each hop's directory is resolved following only the
    links `trust` follows, and each link read from the directory so reached: the chain
    ends before a hop reached through any other link (a run may have made it)."""
    chain: list[str] = []
    hop = os.path.abspath(path)
    for _ in range(limit):
        head, name = os.path.split(hop)
        try:
            where, fd = nofollow.open_directory(head, trust)
        except OSError:
            break  # a link to nothing, or through one a run could make: not followed
        try:
            if name in ("", ".", ".."):
                chain.append(os.path.normpath(os.path.join(where, name)))
                break
            chain.append(os.path.join(where, name))
            try:
                target = os.readlink(name, dir_fd=fd)
            except OSError:
                break
        finally:
            os.close(fd)
        hop = os.path.join(where, target)
    return list(dict.fromkeys(chain))


def _is_directory_in(fd: int, name: str) -> bool:
    """Whether `name` in the directory `fd` holds is a directory (a link is not)."""
    try:
        return stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _may_show(path: str, homes: Sequence[str]) -> bool:
    """Never the root or a home itself (a file named in a home as a "tool" shows nothing),
    nor anything through a credential name."""
    return not (path == "/" or path in homes or _names_credential(path, "/"))


def _names_credential(path: str, below: str) -> bool:
    parts = Path(os.path.relpath(path, below)).parts
    return any(_is_credential(part) for part in parts)


def _is_credential(name: str) -> bool:
    return (
        name in _CREDENTIAL_EXACT
        or name.startswith(_CREDENTIAL_PREFIXES)
        or name.endswith(_CREDENTIAL_SUFFIXES)
        or any(fnmatch.fnmatchcase(name, pattern) for pattern in _CREDENTIAL_OTHER)
    )


def _shape(pattern: str) -> str:
    """How a name pattern is tested: `exact`, `prefix` (`id_rsa*`), `suffix` (`*.pem`), or
    `glob` by fnmatch."""
    wild = sum(pattern.count(c) for c in "*?[")
    if wild == 0:
        return "exact"
    if wild == 1 and pattern.endswith("*"):
        return "prefix"
    if wild == 1 and pattern.startswith("*"):
        return "suffix"
    return "glob"


# `CREDENTIAL_NAMES` by shape, so that most are a set lookup or a string test: a sandbox's
# root checks every name in every toolchain directory it shows.
_CREDENTIAL_EXACT = frozenset(p for p in CREDENTIAL_NAMES if _shape(p) == "exact")
_CREDENTIAL_PREFIXES = tuple(p[:-1] for p in CREDENTIAL_NAMES if _shape(p) == "prefix")
_CREDENTIAL_SUFFIXES = tuple(p[1:] for p in CREDENTIAL_NAMES if _shape(p) == "suffix")
_CREDENTIAL_OTHER = tuple(p for p in CREDENTIAL_NAMES if _shape(p) == "glob")


def _names(overlay: Mapping[str, str], cache: str) -> bool:
    """Whether a command's variables name the tool cache `cache` or a directory in it."""
    inside = cache.rstrip("/") + "/"
    return any(
        (value := os.path.normpath(named)) == cache or value.startswith(inside)
        for named in overlay.values()
        if named.startswith("/")
    )


def _credentials_in(directory: str, fd: int | None = None) -> list[str]:
    """What directly inside `directory` holds a secret, to be masked: credential names, and
    configuration files that set a token or a password. Read through `fd` when given (a
    descriptor of it, `O_PATH` will do): what is read is then what that holds, whatever the
    path names now."""
    try:
        listed = os.open(
            "." if fd is not None else directory,
            os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC,
            dir_fd=fd,
        )
    except OSError:
        return []
    try:
        with os.scandir(listed) as entries:
            found = [e.name for e in entries if _is_credential(e.name) or _holds_secret(e, listed)]
    except OSError:
        return []
    finally:
        os.close(listed)
    return sorted(os.path.join(directory, name) for name in found)


#: What `_sets_secret` found in each file read, by device and inode, with the size and
#: times the file had: one unchanged since (its change time too, which nothing can set
#: back) is not read again. Reading the toolchain directories' files was 1.6 of the 2 ms
#: a sandbox's root took to build; a warm worker reads them while it waits (`stand_by`).
_secret_settings: dict[tuple[int, int], tuple[int, int, int, bool]] = {}
_SECRET_SETTINGS_KEPT = 4096


def _holds_secret(entry: os.DirEntry[str], directory: int) -> bool:
    """Whether `entry` (listed from the descriptor `directory`) is a regular file that
    assigns a secret-looking setting."""
    if not entry.is_file(follow_symlinks=False):
        return False
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return False
    key, now = (info.st_dev, info.st_ino), (info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    known = _secret_settings.get(key)
    if known is not None and known[:3] == now:
        return known[3]
    found = _sets_secret(entry.name, directory)
    if len(_secret_settings) >= _SECRET_SETTINGS_KEPT:
        _secret_settings.clear()
    _secret_settings[key] = (*now, found)
    return found


def _sets_secret(name: str, directory: int) -> bool:
    """Whether the start of the regular file `name` in the descriptor `directory` assigns
    a secret-looking setting."""
    try:
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        fd = os.open(name, flags, dir_fd=directory)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        start = os.read(fd, _CONFIG_SCAN_BYTES)
    except OSError:
        return False
    finally:
        os.close(fd)
    # Only a line holding one of the words can set a secret (the pattern ends each match
    # on such a line), so it is tried at those lines' starts rather than run through the
    # whole file: a README that mentions a token cost 0.5 ms each time a sandbox started.
    return any(_SECRET_SETTING.match(start, at) for at in _lines_with(start, _SECRET_WORDS))


def _lines_with(text: bytes, words: Sequence[bytes]) -> list[int]:
    """Where each line of `text` that holds one of the lower-case `words` starts, in any
    ASCII letter case (as a bytes pattern's IGNORECASE folds them)."""
    lowered = text.lower()
    starts: set[int] = set()
    for word in words:
        at = lowered.find(word)
        while at != -1:
            starts.add(lowered.rfind(b"\n", 0, at) + 1)
            end = lowered.find(b"\n", at)
            at = -1 if end == -1 else lowered.find(word, end + 1)
    return sorted(starts)


def _install_prefix(binary: str) -> str:
    """The installation a binary belongs to: `/x` for `/x/bin/tool` (a venv, a prefix),
    `/x/node_modules` for `/x/node_modules/.bin/tool`, else the binary's directory."""
    parent = Path(binary).parent
    return str(parent.parent if parent.name in ("bin", ".bin") else parent)


#: Package manager homes an install names by a path relative to the project: yarn's
#: Plug'n'Play map (`.pnp.cjs`) finds the global cache's zips as `../../.yarn/berry/cache`.
_RELATIVE_HOMES = ("YARN_GLOBAL_FOLDER",)


def _relative_homes(env: Mapping[str, str], source: str, workspace: str) -> list[tuple[str, str]]:
    """(host directory, where the workspace's relative path to it leads) for each home
    in `_RELATIVE_HOMES` outside the source: the project moved, so its relative paths now
    lead somewhere else, where the home is shown too."""
    pairs = []
    for var in _RELATIVE_HOMES:
        home = env.get(var, "")
        if not os.path.isabs(home) or _within(home, source):
            continue
        seen = os.path.normpath(os.path.join(workspace, os.path.relpath(home, source)))
        if seen != home:
            pairs.append((home, seen))
    return pairs


def _package_manager_homes() -> dict[str, str]:
    """Each package manager's home as the host has it (its variable, else its default place
    under a real home), named by its variable: inside, HOME is elsewhere, so the default
    would point at nothing and corepack would try to fetch pnpm again."""
    found = {}
    for var, rel in PACKAGE_MANAGER_HOMES.items():
        named = os.environ.get(var, "")
        candidates = [named] if os.path.isabs(named) else []
        candidates += [os.path.join(home, rel) for home in _real_homes()]
        home = next((c for c in candidates if os.path.isdir(c)), None)
        if home is not None and not _names_credential(home, "/"):
            found[var] = home
    return found


def _real_homes() -> list[str]:
    """The home directories to hide: $HOME and the account's home (they may differ)."""
    homes = []
    for home in (os.environ.get("HOME"), _account_home()):
        if home and os.path.isdir(home) and os.path.realpath(home) != "/":
            real = os.path.realpath(home)
            if real not in homes:
                homes.append(real)
    return homes


def _account_home() -> str | None:
    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        return None


def _describe_version(text: str) -> str:
    """`bubblewrap 0.8.0` -> `bwrap 0.8.0`."""
    match = re.search(r"(\d+(?:\.\d+)+)", text)
    return f"bwrap {match.group(1)}" if match else f"bwrap {text.strip() or 'unknown'}"


def _why(result: ProcessResult) -> str:
    if not result.started:
        return result.start_error or "did not start"
    if result.timed_out:
        return "timed out"
    detail = result.stderr.text.strip()[-400:]
    if detail:
        return detail
    return f"killed by signal {result.signal}" if result.signal else f"exit {result.exit_code}"

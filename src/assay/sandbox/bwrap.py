"""The bubblewrap backend: untrusted commands confined to a copy of the workspace.

Inside, a command sees the host read-only, its workspace read-write (with
`.git` and the environments it links to read-only, see `provision`), a private /tmp holding its HOME, no network unless asked
for, its own PID namespace (everything in it dies with the check), a cleared
environment, and resource limits. The real home directory is replaced by an
empty tmpfs, and only toolchain directories under it are bound back, read-only.

Running as root needs one extra step: the kernel does not enforce RLIMIT_NPROC
for uid 0, so a fork bomb would not be contained. As root, the command therefore
drops to an unprivileged uid (`SANDBOX_UID`) inside the sandbox, and the
workspace is handed to that uid.
"""

from __future__ import annotations

import dataclasses
import os
import pwd
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from assay.environment import EnvPolicy, build_env
from assay.process import ProcessResult, StartFailure, run_process
from assay.sandbox.base import (
    ProvisionError,
    Sandbox,
    SandboxUnavailable,
    Workspace,
    resolve_inside,
)
from assay.sandbox.provision import discard, provision_workspace, remove_workspace

#: Where HOME points inside the sandbox (on the private /tmp, so it starts empty every run).
SANDBOX_HOME = "/tmp/home"
#: The unprivileged uid/gid commands run as when assay itself runs as root (`nobody`).
SANDBOX_UID = 65534
#: Directories the sandbox replaces with fresh, empty filesystems (besides the hidden homes).
FRESH_MOUNTS: tuple[str, ...] = ("/tmp", "/run", "/dev", "/dev/shm")
#: Fresh mounts a toolchain may live under (a checkout with its venv in /tmp).
HIDDEN_TOOLCHAIN_MOUNTS: tuple[str, ...] = ("/tmp", "/run")
#: Deadline for the availability probe; a working bwrap answers in milliseconds.
PROBE_TIMEOUT_SECONDS = 20.0

#: Directories under the real home that hold toolchains and are safe to show read-only.
#: Credentials live elsewhere (.ssh, .aws, .config, .netrc, .npmrc, .m2/settings.xml).
TOOLCHAIN_HOME_DIRS: tuple[str, ...] = (
    ".pyenv",
    ".cargo",
    ".rustup",
    ".nvm",
    ".volta",
    ".bun",
    ".deno",
    "go",
    ".local/bin",
    ".local/lib",
    ".rbenv",
    ".sdkman/candidates",
    ".elan",
    ".ghcup",
)
#: Never bound back, whatever a probe resolved: these hold secrets.
SECRET_HOME_DIRS: frozenset[str] = frozenset(
    {
        ".ssh",
        ".aws",
        ".gnupg",
        ".config",
        ".docker",
        ".kube",
        ".netrc",
        ".npmrc",
        ".pypirc",
        ".git-credentials",
        ".azure",
        ".gcloud",
        ".m2",
        ".gradle",
        ".password-store",
    }
)

_BWRAP_FIX = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) and make sure user "
    "namespaces are allowed (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04+ "
    "kernel.apparmor_restrict_unprivileged_userns=0), or opt into `--sandbox local`, which "
    "runs checks in a temporary copy but is NOT a security boundary"
)

#: What the in-sandbox shell prints when the command itself cannot be executed.
_NOT_FOUND = re.compile(r"(?:exec: )?(?P<cmd>.+?): (?:not found|No such file or directory)\s*$")


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-process resource limits inside the sandbox (None: no limit)."""

    address_space_bytes: int | None = None
    """RLIMIT_AS. Default (None at construction): the machine's physical memory, so no single
    process can reserve more than exists; runtimes that reserve large virtual ranges
    (V8, the JVM) still start."""
    processes: int | None = 1024
    """RLIMIT_NPROC: contains fork bombs. Counted per uid across the host."""
    file_size_bytes: int | None = 4 * 1024**3
    """RLIMIT_FSIZE: a runaway writer gets SIGXFSZ instead of filling the disk."""

    def resolved(self) -> Limits:
        if self.address_space_bytes is not None:
            return self
        return dataclasses.replace(self, address_space_bytes=_physical_memory())


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
    """Paths the probes resolved (binaries, SDK roots). Those under the hidden home are bound
    back read-only by their top directory under it; others are visible anyway."""
    writable_paths: tuple[str, ...] = ()
    """Host directories outside the workspace the command may write (a report directory)."""
    executable: str = "bwrap"
    """The bubblewrap binary, looked up on PATH when not absolute."""


class BwrapSandbox(Sandbox):
    """Commands run under bubblewrap in a temporary copy of the source."""

    name = "bwrap"

    def __init__(self, options: BwrapOptions | None = None) -> None:
        self.options = options or BwrapOptions()
        self._limits = self.options.limits.resolved()
        self._as_root = os.geteuid() == 0
        self._probed: str | SandboxUnavailable | None = None

    def with_network(self) -> BwrapSandbox:
        """This sandbox with the host network shared; every other confinement stays."""
        return BwrapSandbox(dataclasses.replace(self.options, network=True))

    # -- availability ------------------------------------------------------------------

    def describe(self) -> str:
        self.ensure_available()
        assert isinstance(self._probed, str)
        return self._probed

    def ensure_available(self) -> None:
        """Probe once: `bwrap --version`, then a real `true` with every option a check uses.

        Also raises `CleanupError` when the probe's scratch directory cannot be removed."""
        if self._probed is None:
            try:
                self._probed = self._probe()
            except SandboxUnavailable as exc:
                self._probed = exc
        if isinstance(self._probed, SandboxUnavailable):
            raise self._probed

    def _probe(self) -> str:
        binary = shutil.which(self.options.executable)
        if binary is None:
            raise self._unavailable(f"{self.options.executable} not found on PATH")
        version = run_process([binary, "--version"], timeout=PROBE_TIMEOUT_SECONDS)
        if version.exit_code != 0:
            raise self._unavailable(f"`{binary} --version` failed: {_why(version)}")
        describe = _describe_version(version.stdout.text)
        for helper in self._helpers():
            if shutil.which(helper) is None:
                raise self._unavailable(f"{helper} (util-linux) not found on PATH")
        ws = Workspace(run_id="probe", path=Path(tempfile.mkdtemp(prefix="assay-bwrap-probe-")))
        try:
            self._hand_over(ws.path)
            result = run_process(
                self._argv(ws, binary, ["true"], str(ws.path)),
                cwd=ws.path,
                env=self._env(None),
                env_policy=EnvPolicy.MINIMAL,
                timeout=PROBE_TIMEOUT_SECONDS,
            )
        except BaseException as error:
            discard(ws.path, error)
            raise
        self.cleanup(ws)  # a leftover is reported (CleanupError), never left behind silently
        if result.exit_code != 0:
            raise self._unavailable(f"`bwrap ... true` failed: {_why(result)}")
        self._binary = binary
        return describe

    def _unavailable(self, reason: str) -> SandboxUnavailable:
        return SandboxUnavailable(
            f"bubblewrap sandbox unavailable: {reason}", backend=self.name, note=_BWRAP_FIX
        )

    def _helpers(self) -> tuple[str, ...]:
        return ("prlimit", "setpriv") if self._as_root else ("prlimit",)

    # -- lifecycle -----------------------------------------------------------------------

    def provision(self, source: str | os.PathLike[str], *, commit: str | None = None) -> Workspace:
        self.ensure_available()  # never make a workspace nothing can run in
        # .git is linked, not copied: the link's target is bound read-only by `_argv`.
        ws = provision_workspace(source, commit=commit, backend=self.name, link_git=True)
        try:
            self._hand_over(ws.path, recursive=True)  # the copy only: links are not followed
            for writable in self.options.writable_paths:
                self._hand_over(Path(writable))
        except BaseException as error:
            discard(ws.path, error)
            raise
        return ws

    def runner(self, workspace: Workspace) -> _BwrapRunner:
        self.ensure_available()
        return _BwrapRunner(self, workspace)

    def reclaim(self, workspace: Workspace) -> None:
        self._hand_over(workspace.path, recursive=True)

    def write_file(self, workspace: Workspace, relpath: str, data: bytes) -> None:
        super().write_file(workspace, relpath, data)
        self.reclaim(workspace)

    def cleanup(self, workspace: Workspace) -> None:
        remove_workspace(workspace, backend=self.name)

    def _hand_over(self, path: Path, *, recursive: bool = False) -> None:
        """As root, give the sandbox uid ownership so it can write there (it is our copy)."""
        if not self._as_root:
            return
        if recursive:
            argv = ["chown", "-R", "--no-dereference", f"{SANDBOX_UID}:{SANDBOX_UID}", str(path)]
            result = run_process(argv, timeout=PROBE_TIMEOUT_SECONDS * 10)
            if result.exit_code != 0:
                raise ProvisionError(f"chown of {path} failed: {_why(result)}", backend=self.name)
        else:
            os.chown(path, SANDBOX_UID, SANDBOX_UID)

    # -- the command line ----------------------------------------------------------------

    def _argv(self, workspace: Workspace, binary: str, argv: Sequence[str], cwd: str) -> list[str]:
        ws = str(workspace.path)
        args = [binary, "--die-with-parent", "--new-session"]
        args += ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"]
        if not self.options.network:
            args.append("--unshare-net")
        if not self._as_root:
            # Unprivileged bwrap needs a user namespace; none may be nested inside it.
            args += ["--unshare-user", "--disable-userns"]
        args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        # A private /tmp (where HOME lives) and /run: host sockets there (docker, dbus) stay
        # connectable through a read-only mount, so they are hidden, not just read-only.
        args += ["--perms", "1777", "--tmpfs", "/tmp", "--tmpfs", "/run"]
        # bwrap's /dev/shm is root's and 0755: POSIX semaphores (multiprocessing) need it writable.
        args += ["--perms", "1777", "--tmpfs", "/dev/shm"]
        if self.options.network and os.path.isdir("/run/systemd/resolve"):
            args += ["--ro-bind", "/run/systemd/resolve", "/run/systemd/resolve"]
        homes = _real_homes()
        for home in homes:
            args += ["--perms", "0555", "--tmpfs", home]  # hidden, and not writable either
        for path in self._toolchain_binds():
            args += _traversable_parents(path, [*FRESH_MOUNTS, *homes])
            args += ["--ro-bind", path, path]
        for writable in self.options.writable_paths:
            args += ["--bind", writable, writable]
        source = _source_of(workspace)
        if source is not None:
            # The source tree, read-only at its own path: the workspace's links (.venv,
            # node_modules, .git) point into it, and an editable install in the project's
            # environment imports from it, even when it lies under the hidden home or /tmp.
            args += _traversable_parents(source, [*FRESH_MOUNTS, *homes])
            args += ["--ro-bind", source, source]
        args += ["--bind", ws, ws]
        args += ["--chdir", cwd]
        if self._as_root:
            args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--"]
            ids = str(SANDBOX_UID)
            args += [
                "setpriv",
                f"--reuid={ids}",
                f"--regid={ids}",
                "--clear-groups",
                "--inh-caps=-all",
                "--",
            ]
        else:
            args.append("--")
        args += ["prlimit", *self._limit_flags(), "--"]
        # The shell makes HOME and execs the command; its own "not found" is recognised below.
        args += ["/bin/sh", "-c", 'mkdir -p "$HOME" && exec "$@"', "sh", *argv]
        return args

    def _limit_flags(self) -> list[str]:
        limits = self._limits
        flags = []
        for flag, value in (
            ("--as", limits.address_space_bytes),
            ("--nproc", limits.processes),
            ("--fsize", limits.file_size_bytes),
        ):
            if value is not None:
                flags.append(f"{flag}={value}:{value}")
        return flags

    def _toolchain_binds(self) -> list[str]:
        """Toolchain directories hidden by the sandbox's fresh mounts, to bind back read-only.

        Under a hidden home: the toolchain's top directory there (`~/.pyenv`), never a
        secret one. Under /tmp or /run (a checkout or a venv made there): the binary's
        installation prefix only (`/tmp/x/.venv`), not the whole directory around it."""
        binds: list[str] = []
        homes = _real_homes()
        candidates = [os.path.join(h, rel) for h in homes for rel in TOOLCHAIN_HOME_DIRS]
        for path in self.options.toolchain_paths:
            for form in dict.fromkeys((os.path.abspath(path), os.path.realpath(path))):
                candidates.extend(_hidden_toolchain_dirs(form, homes))
        for path in candidates:
            if os.path.exists(path) and path not in binds:
                binds.append(path)
        return binds

    def _env(self, overlay: Mapping[str, str] | None) -> dict[str, str]:
        # Allowlist only, HOME pinned inside; the caller's explicit variables go on top.
        env = build_env(EnvPolicy.MINIMAL, None, home=SANDBOX_HOME)
        env.pop("USERPROFILE", None)
        env["TMPDIR"] = "/tmp"
        if overlay:
            env.update(overlay)
        return env


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
    ) -> ProcessResult:
        inner = tuple(argv)
        inside = str(resolve_inside(self.workspace, cwd))
        full = self.sandbox._argv(self.workspace, self.sandbox._binary, inner, inside)
        result = run_process(
            full,
            cwd=self.workspace.path,
            env=self.sandbox._env(env),
            env_policy=EnvPolicy.MINIMAL,
            timeout=timeout,
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
    if result.exit_code == 1 and first.startswith(("bwrap: ", "setpriv: ", "prlimit: ")):
        failure = StartFailure.OS_ERROR
        message = f"sandbox refused to start the command: {first}"
    elif result.exit_code == 127 and first.startswith("sh: ") and _NOT_FOUND.search(first):
        failure = StartFailure.NOT_FOUND
        message = f"{result.argv[0]}: not found in the sandbox"
    elif result.exit_code == 126 and first.startswith("sh: ") and "Permission denied" in first:
        failure = StartFailure.PERMISSION_DENIED
        message = f"{result.argv[0]}: permission denied in the sandbox"
    if failure is None:
        return result
    return dataclasses.replace(result, exit_code=None, start_failure=failure, start_error=message)


def _source_of(workspace: Workspace) -> str | None:
    """The source directory `workspace` was made from, as recorded when it was provisioned.

    Never read back from the workspace: the code under test can repoint its links.
    """
    record = workspace.provisioned
    if record is None or not os.path.isdir(record.source):
        return None
    return record.source


def _hidden_toolchain_dirs(path: str, homes: Sequence[str]) -> list[str]:
    """What to bind back so that the binary at `path` runs inside the sandbox (see
    `BwrapSandbox._toolchain_binds`); nothing when the path is visible anyway."""
    for home in homes:
        rel = os.path.relpath(path, home)
        if not rel.startswith(".."):
            top = rel.split(os.sep)[0]
            # A probe never legitimately resolves into a secret directory.
            return [] if top in SECRET_HOME_DIRS else [os.path.join(home, top)]
    if any(path.startswith(m.rstrip("/") + "/") for m in HIDDEN_TOOLCHAIN_MOUNTS):
        return [_install_prefix(path)]
    return []


def _install_prefix(binary: str) -> str:
    """The installation a binary belongs to: `/x` for `/x/bin/tool` (a venv, a prefix),
    `/x/node_modules` for `/x/node_modules/.bin/tool`, else the binary's directory."""
    parent = Path(binary).parent
    return str(parent.parent if parent.name in ("bin", ".bin") else parent)


def _traversable_parents(path: str, fresh_mounts: Sequence[str]) -> list[str]:
    """bwrap arguments creating `path`'s parents inside the fresh mount that covers it, mode 0755.

    bwrap makes missing parents of a mount point 0700, owned by root, which would close
    them to `SANDBOX_UID`. They are empty apart from the mount, so 0755 shows nothing.
    """
    covering = [m for m in fresh_mounts if path.startswith(m.rstrip("/") + "/")]
    if not covering:
        return []
    current = max(covering, key=len)
    args: list[str] = []
    for part in Path(os.path.relpath(os.path.dirname(path), current)).parts:
        if part != ".":
            current = os.path.join(current, part)
            args += ["--perms", "0755", "--dir", current]
    return args


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

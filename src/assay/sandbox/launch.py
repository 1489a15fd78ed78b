"""Starting bubblewrap before its command is known, so that a command waits for less.

A sandboxed command starts as a chain: a host-side shell joins the run's cgroup and execs
bubblewrap, which builds the sandbox and runs the in-sandbox shell that becomes the
command. The join is the slow link: every move between cgroups takes the kernel's
`cgroup_threadgroup_rwsem` for writing, and after a quiet spell that waits out an RCU
grace period (about 10 ms here, against 5 ms for all of bubblewrap's own work).

So the chain is split where bubblewrap allows it. A *launch* is its first part: the
shell, bubblewrap, and everything that is the same for every command of a workspace (the
namespaces, the seccomp filter, `--die-with-parent`, the resource limits, the shell
inside), with `--args FD`: bubblewrap reads its remaining options from a pipe and waits
until the pipe is closed. The *late* part (`feed`) is the command's own: the mounts, the
uid, the working directory, and the command and its variables, handed to the shell
inside as `--setenv`s. A workspace's first command goes further ahead: its whole
sandbox is built while the workspace is provisioned, a launch fed its late part whose
shell waits for the command (`assay.sandbox.standby`).

What comes late cannot weaken what came first, and a late part cut short runs nothing:
the confinement is all in the launch's own argv, and the shell inside runs the command
only when the last word of the late part arrived.

A late part names no bind's source by its path: bubblewrap resolves a path as it mounts
it, and a run in place that can write beside a directory could swap it for a link and
back in between. Each source is a descriptor the launch inherited (`--ro-bind-fd`), so a
launch is started for the mounts it will be fed.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from assay.environment import EnvPolicy, sandbox_shell_name
from assay.process import InvalidRun, Started, start_process

#: Stands for the pipe's descriptor in a launch's argv until it is started.
FD_PLACEHOLDER = "{args-fd}"
#: The lowest descriptor the pipe is given: below it, the launcher's shell opens the
#: seccomp program as descriptor 9.
_LOWEST_FD = 10
#: The variables that carry the command's variables to the shell inside (`COMMAND_SHELL`).
EXPORT_VAR = "_ASSAY_EXPORT_"
EXPORTS_VAR = "_ASSAY_EXPORTS"
#: Set last, to one character, which a late part cut short cannot hold only part of.
DONE_VAR = "_ASSAY_DONE"
#: What the shell inside says when the late part did not all arrive.
NO_COMMAND = "assay-sandbox: no command arrived"
#: How a launch whose resource limits could not be set says it could not start.
NO_LIMITS = "assay-sandbox: cannot set the resource limits"
#: The shell inside the sandbox: makes HOME where bubblewrap did not; once the late part
#: has arrived whole (`DONE_VAR`, set last), exports the check's variables
#: (`late_variables`), then becomes the command, whose words it was started with. The
#: repository's variables enter no environment before this point, and none of them can
#: be one of these (`reserved`).
COMMAND_SHELL = (
    '[ -d "$HOME" ] || mkdir -p "$HOME" || exit 125; '
    f'[ "${{{DONE_VAR}-}}" = 1 ] || {{ echo "{NO_COMMAND}" >&2; exit 125; }}; '
    f'_i=0; while [ "$_i" -lt "${EXPORTS_VAR}" ]; do '
    f'eval "export \\"\\${{{EXPORT_VAR}$_i?}}\\""; unset "{EXPORT_VAR}$_i"; _i=$((_i+1)); done; '
    f'unset {EXPORTS_VAR} {DONE_VAR} _i; exec "$@"'
)


def reserved(name: str) -> bool:
    """Whether a variable of this name would be taken for one of the shell's own (the plan
    refuses them from a repository, with why: this drops any that come another way)."""
    return sandbox_shell_name(name)


def late_variables(exports: Mapping[str, str]) -> list[str]:
    """bubblewrap options that hand `COMMAND_SHELL` the variables to export; `DONE_VAR` last."""
    kept = [(name, value) for name, value in exports.items() if not reserved(name)]
    late: list[str] = []
    for index, (name, value) in enumerate(kept):
        late += ["--setenv", f"{EXPORT_VAR}{index}", f"{name}={value}"]
    return [*late, "--setenv", EXPORTS_VAR, str(len(kept)), "--setenv", DONE_VAR, "1"]


@dataclass(slots=True)
class Launch:
    """A started launch, waiting for its late part on `args_fd` (the pipe's write end)."""

    template: tuple[str, ...]
    """The argv it was started with, its descriptor as `FD_PLACEHOLDER`."""
    env: dict[str, str]
    """The variables it was started with, laid over the host's allowlist."""
    rlimits: tuple[tuple[int, int], ...]
    """The resource limits set on it (`start`)."""
    started: Started
    args_fd: int | None

    def feed(self, late: Sequence[str]) -> Started:
        """Send the late part and close the pipe: bubblewrap goes on. A launch that died
        before reading it (its join refused) says why in its own output. Raises
        `InvalidRun`, the launch killed, for a word holding a NUL byte: bubblewrap splits
        the part at each one, and a variable's value would become options of its own
        (`--share-net`, a mount of the host's root)."""
        if any("\0" in word for word in late):
            self.discard()
            raise InvalidRun("a word of the command or of its variables holds a NUL byte")
        try:
            # As the OS names files: a name that is no UTF-8 (`p\xff`) comes back as it was.
            data = b"".join(os.fsencode(word) + b"\0" for word in late)
        except UnicodeEncodeError as exc:
            self.discard()
            raise InvalidRun(f"a word of the command or of its variables cannot be encoded: {exc}")
        fd, self.args_fd = self.args_fd, None
        if fd is None:
            return self.started
        try:
            with contextlib.suppress(BrokenPipeError):
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        return self.started

    def discard(self) -> None:
        """Kill it. Unfed, it ran nothing, and bubblewrap built nothing yet: bubblewrap,
        waiting for its late part, is all there is (its process group)."""
        # Before its pipe closes: it must never read an empty part.
        self.started.discard(alone=self.args_fd is not None)
        if self.args_fd is not None:
            os.close(self.args_fd)
            self.args_fd = None


def start(
    template: Sequence[str],
    env: dict[str, str],
    cwd: str,
    rlimits: Sequence[tuple[int, int]],
    words: Sequence[str] = (),
    *,
    stdin: int | None = None,
    keep_fds: Sequence[int] = (),
) -> Launch:
    """Start `template` (an argv naming the pipe as `FD_PLACEHOLDER`), then `words` (the
    command's, when it is known), with a pipe for its late part, in the host's allowlisted
    environment with `env` laid over it, and each resource limit of `rlimits` set on it
    before it reads that part (so on everything the sandbox starts): a launch whose limits
    could not be set is killed, and says so as a start that failed. `stdin`: what it reads
    in place of /dev/null (`assay.sandbox.standby`); `keep_fds`: descriptors it inherits
    besides the pipe (its binds' sources, `--ro-bind-fd`)."""
    read_end, write_end = os.pipe()
    try:
        inherited = fcntl.fcntl(read_end, fcntl.F_DUPFD_CLOEXEC, _LOWEST_FD)
    finally:
        os.close(read_end)
    try:
        with contextlib.suppress(OSError):  # a roomy pipe: the late part is never waited on
            fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 1024 * 1024)
        argv = [str(inherited) if word == FD_PLACEHOLDER else word for word in template]
        argv += words
        started = start_process(
            argv,
            cwd=cwd,
            env=env,
            env_policy=EnvPolicy.MINIMAL,
            pass_fds=(inherited, *keep_fds),
            stdin=stdin,
        )
    except BaseException:
        os.close(write_end)
        raise
    finally:
        os.close(inherited)
    made = Launch(tuple(template), dict(env), tuple(rlimits), started, write_end)
    if started.proc is None:
        made.discard()
        return made
    try:
        _limit(started.proc.pid, rlimits)
    except OSError as exc:
        made.discard()
        refused = OSError(exc.errno, f"{NO_LIMITS}: {exc.strerror or exc}")
        return Launch(
            made.template,
            made.env,
            made.rlimits,
            replace(started, proc=None, failure=refused),
            None,
        )
    return made


def _limit(pid: int, rlimits: Sequence[tuple[int, int]]) -> None:
    """Set each limit on process `pid`, soft and hard; never above the hard limit it has
    (a lower one there is already stricter). A process gone already is left to say why."""
    import resource

    for which, wanted in rlimits:
        try:
            _, hard = resource.prlimit(pid, which)
            value = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
            resource.prlimit(pid, which, (value, value))
        except ProcessLookupError:
            return

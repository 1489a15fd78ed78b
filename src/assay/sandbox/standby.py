"""A sandbox built before its command comes: for the next `assay run` in the same place.

A launch (`assay.sandbox.launch`) starts bubblewrap before its command, but bubblewrap
still makes its namespaces and mounts, and starts the shell inside, once the command has
come: about 7 ms of a warm `assay run -- true`'s 45. A *standby* is a launch fed its late
part ahead, the one the last run in the same place was fed (a warm server's worker passes
it on to the next, `assay.warm_worker`): its sandbox is built, and the shell inside waits
for a script on its standard input. The command comes as that script: the directory to
enter, the variables to export, and the words to become.

A standby is used only by a command whose own start would have been the same one: the
same launch (argv, variables, limits), the same late part word for word, and each path it
mounts still the file or directory it mounted (by device and inode: a tree removed and made
again at the same path since would be shown as it was). Anything else discards it, and
the command starts as it would have without it.

The script is one brace group, so a script cut short is a syntax error and runs nothing,
and the command reads /dev/null, as every sandboxed command does.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from assay.process import InvalidRun, Started
from assay.sandbox import launch

#: The shell inside a standby: once its late part arrived whole, it reads the command's
#: script from its standard input and runs it; a script that did not `exec` (none came)
#: leaves it saying so.
STANDBY_SHELL = (
    '[ -d "$HOME" ] || mkdir -p "$HOME" || exit 125; '
    f'[ "${{{launch.DONE_VAR}-}}" = 1 ] || {{ echo "{launch.NO_COMMAND}" >&2; exit 125; }}; '
    f'unset {launch.DONE_VAR}; . /dev/stdin; echo "{launch.NO_COMMAND}" >&2; exit 125'
)
#: What the shell inside says when the command's directory cannot be entered.
NO_DIRECTORY = "assay-sandbox: cannot enter the working directory"
#: bubblewrap's options that mount a host path (the word after each).
_MOUNT_OPTIONS = frozenset(
    {"--bind", "--ro-bind", "--dev-bind", "--bind-try", "--ro-bind-try", "--dev-bind-try"}
)


def standby_form(template: Sequence[str]) -> tuple[str, ...]:
    """`template` (a launch's argv, ending with the shell inside and its `$0`) with the
    standby's shell inside."""
    if len(template) < 2 or template[-2] != launch.COMMAND_SHELL:
        raise ValueError("not a launch's template: it does not end with the shell inside")
    return (*template[:-2], STANDBY_SHELL, template[-1])


def command_script(cwd: str, exports: Mapping[str, str], argv: Sequence[str]) -> bytes:
    """The script that makes the shell inside a standby the command `argv`, in `cwd`, with
    `exports` exported (as `launch.COMMAND_SHELL` does with the same words). Raises
    `InvalidRun` for a word that holds a NUL byte or cannot be encoded."""
    kept = [f"{name}={value}" for name, value in exports.items() if not launch.reserved(name)]
    entered = f' 2>/dev/null || {{ echo "{NO_DIRECTORY}" >&2; exit 125; }}'.encode()
    lines = [b"{ cd -- " + _quoted(cwd) + entered]
    if kept:
        lines.append(b"export " + b" ".join(_quoted(word) for word in kept))
    lines.append(b"exec " + b" ".join(_quoted(word) for word in argv) + b" </dev/null")
    return b"\n".join([*lines, b"}", b""])


def _quoted(word: str) -> bytes:
    """`word` as one single-quoted shell word (any byte but NUL stands for itself there)."""
    if "\0" in word:
        raise InvalidRun("a word of the command or of its variables holds a NUL byte")
    try:
        # As the OS names files: a name that is no UTF-8 (`p\xff`) comes back as it was.
        raw = os.fsencode(word)
    except UnicodeEncodeError as exc:
        raise InvalidRun(f"a word of the command or of its variables cannot be encoded: {exc}")
    return b"'" + raw.replace(b"'", b"'\\''") + b"'"


def mounted(late: Sequence[str]) -> tuple[tuple[str, int, int] | tuple[str], ...]:
    """Each host path the late part `late` mounts, with the device and inode it names now
    (the path alone when it names nothing)."""
    found: list[tuple[str, int, int] | tuple[str]] = []
    for option, path in itertools.pairwise(late):
        if option in _MOUNT_OPTIONS:
            try:
                info = os.stat(path)
            except OSError:
                found.append((path,))
                continue
            found.append((path, info.st_dev, info.st_ino))
    return tuple(found)


@dataclass(slots=True)
class Standby:
    """A launch fed its late part: its sandbox built, its shell waiting on `script_fd`."""

    launch: launch.Launch
    late: tuple[str, ...]
    """The late part it was fed."""
    mounts: tuple[tuple[str, int, int] | tuple[str], ...]
    """What each host path it mounts named as it was fed (`mounted`)."""
    script_fd: int | None

    def fits(
        self,
        template: Sequence[str],
        env: Mapping[str, str],
        rlimits: Sequence[tuple[int, int]],
        late: Sequence[str],
    ) -> bool:
        """Whether a command started as `template`, `env`, `rlimits` and fed `late` would
        get this very sandbox, and it still waits."""
        proc = self.launch.started.proc
        return (
            proc is not None
            and proc.poll() is None
            and self.launch.template == standby_form(template)
            and self.launch.env == env
            and self.launch.rlimits == tuple(rlimits)
            and self.late == tuple(late)
            and mounted(self.late) == self.mounts
        )

    def command(self, cwd: str, exports: Mapping[str, str], argv: Sequence[str]) -> Started:
        """Hand the shell inside its command; the standby is then the command's process.
        Raises `InvalidRun` (the standby discarded) for words no script can carry."""
        try:
            script = command_script(cwd, exports, argv)
        except InvalidRun:
            self.discard()
            raise
        fd, self.script_fd = self.script_fd, None
        if fd is not None:
            try:
                view = memoryview(script)
                while view:
                    view = view[os.write(fd, view) :]
            except BrokenPipeError:
                pass  # the shell is gone: its run says how it ended
            finally:
                os.close(fd)
        return self.launch.started

    def discard(self) -> None:
        """Kill it: it ran nothing."""
        self.launch.discard()
        if self.script_fd is not None:
            os.close(self.script_fd)
            self.script_fd = None


def start(
    template: Sequence[str],
    env: dict[str, str],
    cwd: str,
    rlimits: Sequence[tuple[int, int]],
    late: Sequence[str],
) -> Standby | None:
    """A standby for commands started as `template`, `env`, `rlimits` and fed `late`; None
    when its launch could not start."""
    read_end, write_end = os.pipe()
    try:
        made = launch.start(standby_form(template), env, cwd, rlimits, stdin=read_end)
    except BaseException:
        os.close(write_end)
        raise
    finally:
        os.close(read_end)
    if made.started.proc is None:
        os.close(write_end)
        return None
    mounts = mounted(late)
    made.feed([*late, "--setenv", launch.DONE_VAR, "1"])
    return Standby(made, tuple(late), mounts, write_end)


class Standbys:
    """The standby of each workspace (by run id), taken by the first command it fits."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_run: dict[str, Standby] = {}

    def add(self, run_id: str, standby: Standby) -> None:
        with self._lock:
            self._by_run[run_id] = standby

    def has(self, run_id: str) -> bool:
        with self._lock:
            return run_id in self._by_run

    def take(
        self,
        run_id: str,
        template: Sequence[str],
        env: Mapping[str, str],
        rlimits: Sequence[tuple[int, int]],
        late: Sequence[str],
    ) -> Standby | None:
        """`run_id`'s standby when it fits this command (`Standby.fits`); one that does not
        is discarded, so that no later command takes a sandbox this one would not."""
        with self._lock:
            standby = self._by_run.pop(run_id, None)
        if standby is None:
            return None
        if standby.fits(template, env, rlimits, late):
            return standby
        standby.discard()
        return None

    def discard(self, run_id: str) -> None:
        with self._lock:
            left = self._by_run.pop(run_id, None)
        if left is not None:
            left.discard()


STANDBYS = Standbys()

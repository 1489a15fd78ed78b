"""A sandbox built before its command comes: for the next `assay run` in the same place.

A launch (`assay.sandbox.launch`) starts bubblewrap before its command, but bubblewrap
still makes its namespaces and mounts, and starts the shell inside, once the command has
come (in process, `run -- true` took 16.2 ms so, 9.5 ms with its sandbox built ahead:
`bench_sandbox.py --join-only`). A *standby* is a launch fed its late
part ahead, the one the last run in the same place was fed (a warm server's worker passes
it on to the next, `assay.warm_worker`): its sandbox is built, and the shell inside waits
for a script on its standard input. The command comes as that script: the directory to
enter, the variables to export, and the words to become.

A standby is used only by a command whose own start would have been the same one: the
same launch (argv, variables, limits), the same late part word for word, and each path it
names still the file or directory it named (by device and inode: a tree removed and made
again at the same path since would be shown as it was). That is every path, not only what
it mounts: a mount is made *at* a path too, and one made over a file that was replaced
since (a credential beside a toolchain, masked, then written anew and renamed into place)
is no longer there, where a fresh start masks the new file. The standby holds each path
open while it waits, so that no other file or directory is given its number; a file's
change time is compared too, as a link made again to the same file is a path the mount is
not on. Anything else discards it, and the command starts as it would have without it.
Each bind's source is handed to bubblewrap as the descriptor that holds it
(`--ro-bind-fd`), never as its path: bubblewrap would resolve a path as it mounts it,
after the pin, and a path swapped for a link and back in between (by a run in place that
can write beside it) would show the link's target under a path that still compares equal.

The script is one brace group, so a script cut short is a syntax error and runs nothing,
and the command reads /dev/null, as every sandboxed command does.
"""

from __future__ import annotations

import fcntl
import os
import stat
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from assay.process import InvalidRun, Started
from assay.sandbox import launch, nofollow

#: The shell inside a standby: once its late part arrived whole, it reads the command's
#: script from its standard input and runs it; a script that did not `exec` (none came)
#: leaves it saying so.
STANDBY_SHELL = (
    '[ -d "$HOME" ] || mkdir -p "$HOME" || exit 125; '
    f'[ "${{{launch.DONE_VAR}-}}" = 1 ] || {{ echo "{launch.NO_COMMAND}" >&2; exit 125; }}; '
    f'unset {launch.DONE_VAR}; eval "$(cat)"; echo "{launch.NO_COMMAND}" >&2; exit 125'
)
#: What the shell inside says when the command's directory cannot be entered.
NO_DIRECTORY = "assay-sandbox: cannot enter the working directory"


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
    # `cd` leaves OLDPWD behind, which no fresh start gives a command (its variables are
    # bubblewrap's and the command's own): unset, before the command's own are exported.
    lines = [b"{ cd -- " + _quoted(cwd) + entered, b"unset OLDPWD"]
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


#: What a path a standby names was: its device and inode (and a file's change time), or
#: the path alone when it named nothing.
Identity = tuple[str, int, int] | tuple[str, int, int, int] | tuple[str]


def named(late: Sequence[str]) -> tuple[str, ...]:
    """Each host path the late part `late` names: what it mounts, where it mounts it, the
    directories it makes, the directory it enters (every absolute word, once)."""
    return tuple(dict.fromkeys(word for word in late if os.path.isabs(word)))


def _identity(path: str, info: os.stat_result) -> Identity:
    if stat.S_ISDIR(info.st_mode):
        return (path, info.st_dev, info.st_ino)
    return (path, info.st_dev, info.st_ino, info.st_ctime_ns)


def mounted(late: Sequence[str]) -> tuple[Identity, ...]:
    """What each host path the late part `late` names (`named`) is now."""
    found: list[Identity] = []
    for path in named(late):
        try:
            found.append(_identity(path, os.stat(path)))
        except OSError:
            found.append((path,))
    return tuple(found)


def pinned(
    late: Sequence[str], trust: nofollow.Trust
) -> tuple[tuple[Identity, ...], tuple[int, ...]]:
    """`mounted(late)`, and a descriptor holding each path that named something: while it
    is held, no file or directory made since can have the number of the one it named. A
    path reached through a link `trust` does not follow names nothing here (`nofollow`)."""
    found: list[Identity] = []
    held: list[int] = []
    try:
        for path in named(late):
            try:
                _, fd = nofollow.open_path(path, trust)
            except OSError:
                found.append((path,))
                continue
            held.append(fd)
            found.append(_identity(path, os.fstat(fd)))
    except BaseException:
        close_all(held)
        raise
    return tuple(found), tuple(held)


def pinned_sources(
    late: Sequence[str], trust: nofollow.Trust, held: Mapping[str, int] | None = None
) -> dict[str, int] | None:
    """A descriptor holding what each bind's source in `late` names now, by path: the one
    `held` has for it (opened as the source was chosen), else one opened now following
    only the links `trust` follows (`nofollow`); None when `late` holds an option this does
    not know the words of. Raises `OSError` for a source that names nothing, or is reached
    through a link a project could have made: bubblewrap would be handed its path, to
    resolve later, or the link's target. Each of `held` not returned is closed."""
    held = dict(held or {})
    sources = bind_sources(late)
    if sources is None:
        close_all(list(held.values()))
        return None
    pins: dict[str, int] = {}
    try:
        for path in dict.fromkeys(sources):
            pin = held.pop(path, None)
            pins[path] = pin if pin is not None else nofollow.open_path(path, trust)[1]
    except BaseException:
        close_all(list(pins.values()))
        raise
    finally:
        close_all(list(held.values()))
    return pins


def close_all(fds: Sequence[int]) -> None:
    """Close each of `fds` (descriptors this process holds)."""
    for fd in fds:
        os.close(fd)


@dataclass(slots=True)
class Standby:
    """A launch fed its late part: its sandbox built, its shell waiting on `script_fd`."""

    launch: launch.Launch
    late: tuple[str, ...]
    """The late part it was fed."""
    mounts: tuple[Identity, ...]
    """What each host path it names was as it was fed (`pinned`)."""
    script_fd: int | None
    pins: tuple[int, ...] = ()
    """A descriptor holding each of those paths, until it is taken or discarded."""

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
        self._unpin()
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
        self._unpin()
        if self.script_fd is not None:
            os.close(self.script_fd)
            self.script_fd = None

    def _unpin(self) -> None:
        pins, self.pins = self.pins, ()
        close_all(pins)


def start(
    template: Sequence[str],
    env: dict[str, str],
    cwd: str,
    rlimits: Sequence[tuple[int, int]],
    late: Sequence[str],
    trust: nofollow.Trust,
) -> Standby | None:
    """A standby for commands started as `template`, `env`, `rlimits` and fed `late`; None
    when its launch could not start, or `late` is not a sandbox's late part as it knows one."""
    # Pinned before bubblewrap starts, and each bind's source handed to it as the pinned
    # descriptor (`by_pins`): a path bubblewrap resolved itself as it mounted could have
    # been swapped for a link and back in between (by a run in place that can write
    # there), and the sandbox would show the link's target where the path, compared again
    # when a command comes, names what was pinned.
    mounts, pins = pinned(late, trust)
    try:
        handed = by_pins(late, mounts, pins)
    except BaseException:
        close_all(pins)
        raise
    if handed is None:
        close_all(pins)
        return None
    fed, passed = handed
    try:
        read_end, write_end = os.pipe()
    except BaseException:
        close_all([*pins, *passed])
        raise
    try:
        made = launch.start(
            standby_form(template), env, cwd, rlimits, stdin=read_end, keep_fds=passed
        )
    except BaseException:
        os.close(write_end)
        close_all(pins)
        raise
    finally:
        os.close(read_end)
        close_all(passed)  # bubblewrap has its own, and closes each once it has mounted it
    if made.started.proc is None:
        os.close(write_end)
        close_all(pins)
        return None
    made.feed([*fed, "--setenv", launch.DONE_VAR, "1"])
    return Standby(made, tuple(late), mounts, write_end, pins)


#: bubblewrap's bind options, and each one's form that takes an open descriptor.
_BY_DESCRIPTOR = {"--bind": "--bind-fd", "--ro-bind": "--ro-bind-fd"}
#: How many words follow each option a sandbox's late part holds (`_sandbox_args`): a bind
#: is found by its place among options, never by a word that only reads like one (a link's
#: target may be any text).
_ARITY = {
    "--bind": 2,
    "--ro-bind": 2,
    "--symlink": 2,
    "--uid": 1,
    "--gid": 1,
    "--dev": 1,
    "--proc": 1,
    "--tmpfs": 1,
    "--dir": 1,
    "--perms": 1,
    "--size": 1,
    "--remount-ro": 1,
    "--chdir": 1,
}
#: The lowest descriptor a bind's source is handed over as: below it, the launcher's
#: shell opens the seccomp program (`launch._LOWEST_FD`).
_LOWEST_FD = 10


def by_pins(
    late: Sequence[str], mounts: Sequence[Identity], pins: Sequence[int]
) -> tuple[list[str], list[int]] | None:
    """`late` with each bind whose source was pinned (`pinned`: `mounts` and `pins`) made
    a bind of a copy of its descriptor, and those copies (`by_descriptors`). None when
    `late` holds an option this does not know the words of (no standby is built)."""
    held = dict(zip((found[0] for found in mounts if len(found) > 1), pins, strict=True))
    return by_descriptors(late, held)


def by_descriptors(
    late: Sequence[str], held: Mapping[str, int]
) -> tuple[list[str], list[int]] | None:
    """`late` with each bind whose source `held` holds (by path) made a bind of a copy of
    its descriptor, and those copies, to be inherited by bubblewrap (which mounts what the
    descriptor holds, checks that the mount is that, and closes it: each copy must be
    mounted, or the command would inherit it). A source `held` lacks stays a path. None
    when `late` holds an option this does not know the words of."""
    fed: list[str] = []
    passed: list[int] = []
    at = 0
    try:
        while at < len(late):
            option = late[at]
            arity = _ARITY.get(option)
            if arity is None or at + arity >= len(late):
                close_all(passed)
                return None
            words = list(late[at + 1 : at + 1 + arity])
            at += 1 + arity
            pin = held.get(words[0]) if option in _BY_DESCRIPTOR else None
            if pin is None:
                fed += [option, *words]
                continue
            # One copy for each bind: bubblewrap closes each once it has mounted it.
            passed.append(fcntl.fcntl(pin, fcntl.F_DUPFD_CLOEXEC, _LOWEST_FD))
            fed += [_BY_DESCRIPTOR[option], str(passed[-1]), words[1]]
    except BaseException:
        close_all(passed)
        raise
    return fed, passed


def bind_sources(late: Sequence[str]) -> list[str] | None:
    """The source of each bind of `late`, in order; None when `late` holds an option this
    does not know the words of."""
    sources: list[str] = []
    at = 0
    while at < len(late):
        arity = _ARITY.get(late[at])
        if arity is None or at + arity >= len(late):
            return None
        if late[at] in _BY_DESCRIPTOR:
            sources.append(late[at + 1])
        at += 1 + arity
    return sources


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

    def waiting(self, run_id: str) -> Standby | None:
        """`run_id`'s standby, left where it is; None when it has none (taken, or none made)."""
        with self._lock:
            return self._by_run.get(run_id)

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

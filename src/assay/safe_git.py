"""Running git, on the host, on a repository assay does not trust.

A repository's own configuration (`.git/config` and every file it includes) can name
programs for git to run: clean, smudge and process filters, textconv and external diff
drivers, an fsmonitor hook, hooks, askpass and ssh programs, and remotes whose transports
run programs (an `ext::` URL, an upload-pack command) - which a partial clone fetches from
on its own the moment an object it lacks is read. The repository under verification is
hostile and git runs as the user, so every git command assay runs goes through here:

- only plumbing is used (`rev-parse`, `ls-tree`, `cat-file` without `--filters` or
  `--textconv`, `ls-files`, `config`): none of them converts content or runs a hook;
- and, in depth, git is configured so that nothing the repository names can run:

  - no system or global configuration (nor, so, a user's `safe.directory`: a repository
    another user owns is refused), and an environment holding only harmless variables
    (no `GIT_DIR` or `GIT_CONFIG_PARAMETERS` from a hook assay runs under);
  - command-line configuration, which git reads last, so it wins over the repository's:
    fsmonitor off, hooks looked up under /dev/null (there are none), no credential
    helper, no excludes or attributes file named by the repository, and every filter and
    diff driver the repository defines emptied (git skips an empty command);
  - no transport at all: `GIT_ALLOW_PROTOCOL` naming none overrides a repository's
    `protocol.<name>.allow`, which `protocol.allow=never` alone does not, so a lazy fetch
    fails instead of running a remote's program; askpass, ssh and editor are `false`;
  - replace refs are ignored, so a commit id names the tree it was made with.

Processes are bounded like every other process assay runs (own session, one deadline for
all the commands of one `Repository`, the whole tree killed at it), but output is read
here as raw bytes, streamed: `run_process` keeps decoded text within a bound, and a
tree's blobs are neither text nor small.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeVar

from assay import reaper
from assay.environment import EnvPolicy, build_env
from assay.errors import AssayError
from assay.git_objects import Hasher, ObjectMismatch, commit_tree, parse_tree

#: Added to a minimal environment for every git command.
SAFE_ENV: Mapping[str, str] = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_SYSTEM": os.devnull,
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "false",
    "SSH_ASKPASS": "false",
    "GIT_SSH_COMMAND": "false",
    "GIT_EDITOR": "false",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_ALLOW_PROTOCOL": "none",
    "GIT_PROTOCOL_FROM_USER": "0",
    "GIT_NO_LAZY_FETCH": "1",  # recent gits and security releases; GIT_ALLOW_PROTOCOL: all
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_OPTIONAL_LOCKS": "0",
}

#: Command-line configuration for every git command: it wins over the repository's.
SAFE_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.untrackedCache", "false"),
    ("core.excludesFile", os.devnull),
    ("core.attributesFile", os.devnull),
    ("credential.helper", ""),  # an empty value clears the list of helpers
    ("diff.external", ""),  # git then fails to run "", instead of the repository's
    ("protocol.allow", "never"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
)

#: Keys emptied for every driver the repository's configuration defines, by section.
DRIVER_OVERRIDES: Mapping[str, tuple[tuple[str, str], ...]] = {
    "filter": (("smudge", ""), ("clean", ""), ("process", ""), ("required", "false")),
    "diff": (("textconv", ""), ("command", "")),
}

#: Bound on the configuration listing, which is read whole.
CONFIG_LIMIT_BYTES = 16 * 1024 * 1024
#: Bytes per read when streaming an object to a file.
STREAM_CHUNK = 1024 * 1024
#: Bounds on a commit object, and on one tree object, read whole.
_HEADER_OBJECT_LIMIT = 16 * 1024 * 1024
_TREE_OBJECT_LIMIT = 64 * 1024 * 1024
_TREE_MODE, _GITLINK_MODE = 0o040000, 0o160000
_T = TypeVar("_T")
#: How much of git's stderr an error quotes (its last bytes: git dies with the reason).
STDERR_QUOTE_BYTES = 1000


class GitError(AssayError):
    """A git command failed, timed out or said something unexpected."""


@dataclass(frozen=True, slots=True)
class TreeEntry:
    """One entry of `git ls-tree -r -t`: a blob, a tree or a submodule's commit."""

    mode: int
    kind: str
    """`blob`, `tree` or `commit` (a submodule)."""
    oid: str
    path: str
    """`/`-separated, relative, decoded with `os.fsdecode` (undecodable bytes kept)."""


@dataclass(frozen=True, slots=True)
class ObjectHeader:
    """What `cat-file --batch` says about one object before its bytes."""

    oid: str
    kind: str
    size: int


@dataclass(frozen=True, slots=True)
class Repository:
    """Safe git commands on one repository, all bounded by one deadline.

    Use `open_repository` to make one: it reads which drivers the repository defines.
    """

    path: Path
    deadline: float
    """`time.monotonic()` by which every command must have ended."""
    overrides: tuple[tuple[str, str], ...] = ()
    """Configuration emptying the repository's own drivers (`driver_overrides`)."""
    variables: tuple[tuple[str, str], ...] = ()
    """Git variables of assay's own choosing (`GIT_INDEX_FILE`, an identity), set last."""

    def argv(self, *args: str) -> list[str]:
        """The full argv of `git ARGS` on this repository, safety configuration included."""
        config = [arg for key, value in SAFE_CONFIG for arg in ("-c", f"{key}={value}")]
        return ["git", "--no-pager", "-C", str(self.path), *config, *args]

    def env(self) -> dict[str, str]:
        """The environment: a minimal one, the safety variables, and the driver overrides.

        The overrides go in `GIT_CONFIG_KEY_<n>` variables, not `-c`: a driver's name may
        hold `=`, which `-c` would split at.
        """
        env = build_env(EnvPolicy.MINIMAL, SAFE_ENV)
        env["GIT_CONFIG_COUNT"] = str(len(self.overrides))
        for index, (key, value) in enumerate(self.overrides):
            env[f"GIT_CONFIG_KEY_{index}"] = key
            env[f"GIT_CONFIG_VALUE_{index}"] = value
        env.update(self.variables)
        return env

    def output(self, *args: str, limit: int, stdin: IO[bytes] | None = None) -> bytes:
        """Run `git ARGS` to completion (reading `stdin`, a file, when given); its stdout,
        raw. Raises `GitError` on a non-zero exit, the deadline, or more than `limit`
        bytes of output."""
        with self._spawn(args, stdin=stdin) as child:
            data = child.stdout.read(limit + 1)
            if len(data) > limit:
                raise GitError(f"git {args[0]} wrote more than {limit} bytes")
        return data

    def resolve_commit(self, ref: str) -> str:
        """The full id of the commit `ref` names; `GitError` when it names none."""
        if ref.startswith("-"):  # no ref does; rev-parse would read it as an option
            raise GitError(f"a ref does not start with '-': {ref!r}")
        out = self.output("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", limit=256)
        oid = out.decode("ascii", "replace").strip()
        if not is_oid(oid):
            raise GitError(f"git rev-parse answered {out[:100]!r}, not a commit id")
        return oid

    def project_tree(self, commit: str) -> str:
        """The id of the tree that is the project at this repository's path in `commit`:
        the commit's root tree at the top of the working tree, else the tree at that path
        in it (a package of a monorepo). Every object on the way is checked
        (`read_object`). `GitError` when the commit has no such directory."""
        prefix = self.output("rev-parse", "--show-prefix", limit=64 * 1024)
        at = os.fsencode(os.fsdecode(prefix).strip()).strip(b"/")
        kind, data = self.read_object(commit, limit=_HEADER_OBJECT_LIMIT)
        if kind != "commit":
            raise GitError(f"{commit} is a {kind}, not a commit")
        tree = _checked(commit_tree, data)
        for part in at.split(b"/") if at else ():
            found = self._entry(tree, part)
            if found is None or found[0] != _TREE_MODE:
                raise GitError(f"{commit} has no directory {os.fsdecode(at)!r}")
            tree = found[1]
        return tree

    def read_object(self, oid: str, *, limit: int) -> tuple[str, bytes]:
        """The kind and bytes of object `oid`, checked to hash to `oid`: git serves a
        rewritten loose object under its old name (`assay.git_objects`)."""
        with self.objects([oid]) as stream:
            header = stream.header(oid)
            return header.kind, stream.read(header, limit=limit)

    def tree(self, tree: str, *, limit: int) -> list[TreeEntry]:
        """Every entry of `tree` (a tree id), directories before what they hold, each
        tree read as checked bytes (`read_object`), at most `limit` bytes of them."""
        entries: list[TreeEntry] = []
        level: list[tuple[str, str]] = [(tree, "")]
        budget = limit
        while level:
            below: list[tuple[str, str]] = []
            with self.objects(oid for oid, _ in level) as stream:
                for oid, prefix in level:
                    header = stream.header(oid)
                    if header.kind != "tree":
                        raise GitError(f"{prefix or oid!r} names a {header.kind}, not a tree")
                    if header.size > budget:
                        raise GitError(f"the trees of {tree} hold more than {limit} bytes")
                    budget -= header.size
                    data = stream.read(header, limit=header.size)
                    for mode, name, child in _checked(parse_tree, data, len(oid)):
                        path = prefix + os.fsdecode(name)
                        entries.append(TreeEntry(mode, _kind_of(mode), child, path))
                        if mode == _TREE_MODE:
                            below.append((child, path + "/"))
            level = below
        return entries

    def names(self, tree: str, directory: str = "") -> list[str] | None:
        """The names in `directory` (`/`-separated) of `tree`; None if it has none."""
        for part in (p for p in directory.split("/") if p):
            found = self._entry(tree, os.fsencode(part))
            if found is None or found[0] != _TREE_MODE:
                return None
            tree = found[1]
        _, data = self._tree_object(tree)
        return [os.fsdecode(name) for _, name, _ in _checked(parse_tree, data, len(tree))]

    def blob_at(self, tree: str, path: str, *, limit: int) -> bytes | None:
        """The bytes of the file at `path` in `tree`, checked; None when there is none."""
        *dirs, leaf = path.split("/")
        for part in dirs:
            found = self._entry(tree, os.fsencode(part))
            if found is None or found[0] != _TREE_MODE:
                return None
            tree = found[1]
        found = self._entry(tree, os.fsencode(leaf))
        if found is None or found[0] & 0o170000 not in (0o100000, 0o120000):
            return None
        kind, data = self.read_object(found[1], limit=limit)
        if kind != "blob":
            raise GitError(f"{path!r} names a {kind}, not a blob")
        return data

    def _entry(self, tree: str, name: bytes) -> tuple[int, str] | None:
        _, data = self._tree_object(tree)
        for mode, entry, oid in _checked(parse_tree, data, len(tree)):
            if entry == name:
                return mode, oid
        return None

    def _tree_object(self, tree: str) -> tuple[str, bytes]:
        kind, data = self.read_object(tree, limit=_TREE_OBJECT_LIMIT)
        if kind != "tree":
            raise GitError(f"{tree} is a {kind}, not a tree")
        return kind, data

    @contextlib.contextmanager
    def objects(self, oids: Iterable[str]) -> Iterator[ObjectStream]:
        """Stream the raw bytes of `oids`, in order, from one `git cat-file --batch`.

        Raw: `--batch` applies no filter, conversion or textconv (`--filters` would).
        """
        with tempfile.TemporaryFile() as requests:
            for oid in oids:
                requests.write(oid.encode("ascii") + b"\n")
            requests.seek(0)
            with self._spawn(("cat-file", "--batch"), stdin=requests) as child:
                yield ObjectStream(child.stdout)

    @contextlib.contextmanager
    def _spawn(self, args: Sequence[str], *, stdin: IO[bytes] | None) -> Iterator[_Child]:
        argv, env = self.argv(*args), self.env()
        with _spawn(argv, env, self.deadline, stdin=stdin, name=args[0]) as child:
            yield child


class ObjectStream:
    """The output of `git cat-file --batch`: for each object asked, a header line, its
    bytes and a newline."""

    def __init__(self, stdout: IO[bytes]) -> None:
        self._out = stdout

    def header(self, oid: str) -> ObjectHeader:
        """The header of the next object, which must be `oid`."""
        line = self._out.readline(1024)
        if not line:
            raise GitError(f"git cat-file ended before object {oid}")
        fields = line.decode("ascii", "replace").split()
        if len(fields) == 2 and fields[1] == "missing":
            raise GitError(f"object {oid} is missing from the repository")
        if len(fields) != 3 or fields[0] != oid or not fields[2].isdigit():
            raise GitError(f"git cat-file answered {line[:200]!r} when asked for {oid}")
        return ObjectHeader(fields[0], fields[1], int(fields[2]))

    def read(self, header: ObjectHeader, *, limit: int) -> bytes:
        """The object's bytes, in memory: for small objects (a symlink's target), so one
        larger than `limit` bytes is an error."""
        if header.size > limit:
            raise GitError(f"object {header.oid} has {header.size} bytes, over {limit}")
        data = self._out.read(header.size)
        if len(data) != header.size:
            raise GitError(f"git cat-file stopped inside object {header.oid}")
        hasher = _hasher(header)
        hasher.update(data)
        self._end(header, hasher)
        return data

    def write_to(self, header: ObjectHeader, fd: int) -> None:
        """Copy the object's bytes into the open file `fd`, a chunk at a time."""
        remaining = header.size
        hasher = _hasher(header)
        while remaining:
            chunk = self._out.read(min(remaining, STREAM_CHUNK))
            if not chunk:
                raise GitError(f"git cat-file stopped inside object {header.oid}")
            hasher.update(chunk)
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view) :]
            remaining -= len(chunk)
        self._end(header, hasher)

    def _end(self, header: ObjectHeader, hasher: Hasher) -> None:
        if self._out.read(1) != b"\n":
            raise GitError(f"git cat-file did not end object {header.oid} where it said")
        _checked(hasher.check)


def _hasher(header: ObjectHeader) -> Hasher:
    return _checked(Hasher, header.oid, header.kind, header.size)


def _checked(function: Callable[..., _T], *args: Any) -> _T:
    """`function(*args)`, an object that is not what its id names raised as a `GitError`."""
    try:
        return function(*args)
    except ObjectMismatch as exc:
        raise GitError(str(exc)) from None


def _kind_of(mode: int) -> str:
    return {_TREE_MODE: "tree", _GITLINK_MODE: "commit"}.get(mode, "blob")


class _Child:
    """A running git process and its deadline."""

    def __init__(self, proc: subprocess.Popen[bytes], marker: str, deadline: float) -> None:
        assert proc.stdout is not None
        self.proc = proc
        self.stdout: IO[bytes] = proc.stdout
        self.marker = marker
        self.expired = threading.Event()
        # A timer, not a polling read: a blocked read ends when the killed process closes
        # its end of the pipe.
        self._timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._expire)
        self._timer.daemon = True
        self._timer.start()

    def _expire(self) -> None:
        self.expired.set()
        reaper.kill_run(self.proc.pid, self.marker, keep=self.proc.pid)

    def finish(self) -> int:
        """Wait for the process to exit on its own (the timer still bounds that), kill
        anything it left behind, reap it; its return code."""
        # WNOWAIT: not reaped yet, so its process group id cannot be reused while the
        # group is swept.
        os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOWAIT)
        return self._end()

    def stop(self) -> None:
        """Kill the process tree now (the caller gave up on it) and reap it."""
        reaper.kill_run(self.proc.pid, self.marker, keep=self.proc.pid)
        self._end()

    def _end(self) -> int:
        self._timer.cancel()
        self._timer.join()
        reaper.kill_run(self.proc.pid, self.marker, keep=self.proc.pid)
        self.stdout.close()
        return self.proc.wait()


@contextlib.contextmanager
def _spawn(
    argv: list[str],
    env: Mapping[str, str],
    deadline: float,
    *,
    stdin: IO[bytes] | None,
    name: str,
) -> Iterator[_Child]:
    """One git process (`name` says which, in errors): started in its own session, killed
    with everything it started at the deadline or when the caller stops early, and checked
    when the caller is done."""
    marker = os.urandom(16).hex()
    reaper.ensure_subreaper()
    with tempfile.TemporaryFile() as stderr:
        try:
            proc = subprocess.Popen(
                argv,
                env={**env, reaper.MARKER_VAR: marker},
                stdin=subprocess.DEVNULL if stdin is None else stdin,
                stdout=subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            raise GitError(f"git could not be started: {exc.strerror or exc}") from exc
        child = _Child(proc, marker, deadline)
        try:
            yield child
        except GitError as exc:
            child.stop()
            raise GitError(f"{exc}{_why(child, stderr)}") from None
        except BaseException:
            child.stop()
            raise
        if child.stdout.read(1):
            child.stop()
            raise GitError(f"git {name} wrote more than was asked for")
        status = child.finish()
        if status != 0:
            raise GitError(f"git {name} failed{_why(child, stderr)}")


def open_repository(path: str | os.PathLike[str], *, timeout: float) -> Repository:
    """A `Repository` for the git repository at (or above) `path`, every command of which
    must end within `timeout` seconds from now.

    Reads the repository's configuration, as git resolves it (includes too), for the names
    of the drivers it defines, so that each can be emptied. Reading configuration runs
    nothing. Raises `GitError` when git cannot read it.
    """
    deadline = time.monotonic() + timeout
    # First, so that the listing reads the same repository configuration every later
    # command does: a repository git would refuse lists none.
    vouched = users_safe_directories(deadline)
    plain = Repository(Path(path), deadline, vouched)
    refuse_foreign_storage(plain)
    listing = plain.output("config", "--list", "--name-only", "-z", limit=CONFIG_LIMIT_BYTES)
    overrides = vouched + tuple(driver_overrides(listing.split(b"\0")))
    return Repository(plain.path, deadline, overrides)


#: Bound on what `rev-parse` says of where a repository keeps its objects.
_LOCATION_LIMIT_BYTES = 3 * 4096 + 16
#: Bound on a worktree's back-link file (`<gitdir>/gitdir`), a path.
_BACKLINK_LIMIT_BYTES = 4096


def refuse_foreign_storage(repo: Repository) -> None:
    """`GitError` when the repository of a working tree keeps its objects or refs in
    another repository of the host that does not vouch for this working tree.

    The working tree's `.git` is the tree's own, and so hostile: a `.git` file naming
    another repository's directory (`gitdir: /home/u/private/.git`), a `.git` directory
    whose `commondir` names one, or links inside it into one, each make every git
    command here read that repository's commits, which `--base HEAD --protect` then
    writes into the hostile tree's workspace (its test files restored "from the base").
    A linked worktree and a submodule are the legitimate cases of a git directory
    outside the tree, and each is vouched for by the repository it lives in: a
    worktree's `<gitdir>/gitdir` names this tree's `.git`, a submodule's `core.worktree`
    names this tree. A repository with no working tree (bare) is not checked."""
    try:
        out = repo.output(
            "rev-parse",
            "--show-toplevel",
            "--absolute-git-dir",
            "--git-common-dir",
            limit=_LOCATION_LIMIT_BYTES,
        )
    except GitError:
        return  # no working tree: nothing of one is checked out here
    lines = os.fsdecode(out).split("\n")
    if len(lines) < 3 or not lines[0] or not lines[1] or not lines[2]:
        raise GitError(f"git rev-parse answered {out[:200]!r} about where objects are kept")
    top = os.path.realpath(lines[0])
    gitdir = os.path.realpath(lines[1])
    common = os.path.realpath(os.path.join(str(repo.path), lines[2]))
    if not _beneath(gitdir, top) and not _vouched(repo, top, gitdir, common):
        raise GitError(
            f"the repository's git directory {gitdir} lies outside its working tree {top} "
            "and does not name this tree as its worktree: refused, it may be another "
            "repository's"
        )
    if _beneath(gitdir, top) and not _beneath(common, top):
        raise GitError(
            f"the git directory {gitdir} takes its objects and refs from {common}, outside "
            "the working tree (commondir): refused, it may be another repository's"
        )
    places = [top] if _beneath(gitdir, top) else [top, gitdir, common]
    for directory in dict.fromkeys((gitdir, common)):
        if (leak := _link_out_of(directory, places)) is not None:
            raise GitError(
                f"{leak} in the git directory is a link out of the repository: refused, "
                "it may lead into another repository"
            )
    if (borrowed := _alternate_out_of(common, places)) is not None:
        raise GitError(
            f"the repository borrows objects from {borrowed} (objects/info/alternates), "
            "outside its working tree: refused, it may be another repository's"
        )


#: The most of `objects/info/alternates` read: past it, the repository is refused.
_ALTERNATES_LIMIT_BYTES = 64 * 1024


def _alternate_out_of(common: str, places: Sequence[str]) -> str | None:
    """The first object directory `<common>/objects/info/alternates` borrows from that
    lies in none of `places` (the file itself unreadable or too long: its path). git reads
    every object of those directories as the repository's own, so a base named by a
    commit of another repository of the host would be read, and its files restored into
    the workspace, as a link or a `commondir` would. Alternates of an alternate are only
    reached through one outside `places`, which is refused already."""
    info = os.path.join(common, "objects", "info")
    path = os.path.join(info, "alternates")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError:
        return path
    try:
        data = os.read(fd, _ALTERNATES_LIMIT_BYTES + 1)
    except OSError:
        return path
    finally:
        os.close(fd)
    if len(data) > _ALTERNATES_LIMIT_BYTES:
        return path
    objects = os.path.join(common, "objects")
    for raw in data.split(b"\n"):
        line = os.fsdecode(raw).strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith('"'):
            return line  # a quoted (C-style) path: not unquoted here, so not trusted
        target = os.path.realpath(os.path.join(objects, line))
        if not any(_beneath(target, p) for p in places):
            return target
    return None


def _beneath(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def _vouched(repo: Repository, top: str, gitdir: str, common: str) -> bool:
    """Whether the git directory outside the tree names the tree back: as a linked
    worktree's does (`<common>/worktrees/<id>/gitdir` holds the tree's `.git`), or a
    submodule's (`core.worktree` names the tree)."""
    if _beneath(gitdir, os.path.join(common, "worktrees")) and gitdir != common:
        try:
            fd = os.open(
                os.path.join(gitdir, "gitdir"), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
            )
            try:
                backlink = os.fsdecode(os.read(fd, _BACKLINK_LIMIT_BYTES).strip())
            finally:
                os.close(fd)
        except OSError:
            return False
        return os.path.realpath(backlink) == os.path.realpath(os.path.join(top, ".git"))
    try:
        value = repo.output("config", "--get", "core.worktree", limit=_BACKLINK_LIMIT_BYTES)
    except GitError:
        return False
    worktree = os.fsdecode(value).strip()
    return bool(worktree) and os.path.realpath(os.path.join(gitdir, worktree)) == top


def _link_out_of(directory: str, places: Sequence[str]) -> str | None:
    """The first link beneath `directory` whose target lies in none of `places`."""
    stack = [directory]
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as entries:
                listing = list(entries)
        except OSError:
            continue
        for entry in listing:
            if entry.is_symlink():
                if not any(_beneath(os.path.realpath(entry.path), p) for p in places):
                    return entry.path
            elif entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
    return None


def users_safe_directories(deadline: float) -> tuple[tuple[str, str], ...]:
    """The user's own `safe.directory` entries, as configuration to hand on.

    Git reads no global configuration here, but a user (a CI job whose checkout another
    uid owns) may have vouched for a repository there. Only system and global entries
    count, as in git itself: a repository cannot vouch for itself. None when git has none
    or cannot say (a refused repository is then refused with git's own reason).
    """
    argv = ["git", "-C", os.sep, "config", "--show-scope", "-z", "--get-all", "safe.directory"]
    env = build_env(EnvPolicy.MINIMAL, {"GIT_CONFIG_COUNT": "0", "GIT_TERMINAL_PROMPT": "0"})
    try:
        with _spawn(argv, env, deadline, stdin=None, name="config") as child:
            out = child.stdout.read(CONFIG_LIMIT_BYTES + 1)
            if len(out) > CONFIG_LIMIT_BYTES:
                raise GitError("safe.directory lists too much")
    except GitError:
        return ()
    fields = out.split(b"\0")
    return tuple(
        ("safe.directory", os.fsdecode(value))
        for scope, value in zip(fields[::2], fields[1::2], strict=False)
        if scope in (b"system", b"global")
    )


def driver_overrides(names: Iterable[bytes]) -> list[tuple[str, str]]:
    """For each `filter.<driver>.*` and `diff.<driver>.*` key in `names`, the keys that
    make that driver do nothing (each driver once, in the order first seen)."""
    drivers: dict[tuple[str, str], None] = {}
    for raw in names:
        name = os.fsdecode(raw)
        section, _, rest = name.partition(".")
        driver, dot, _variable = rest.rpartition(".")
        if section.lower() in DRIVER_OVERRIDES and dot:
            drivers[(section.lower(), driver)] = None
    return [
        (f"{section}.{driver}.{key}", value)
        for section, driver in drivers
        for key, value in DRIVER_OVERRIDES[section]
    ]


def _why(child: _Child, stderr: IO[bytes]) -> str:
    """The reason to add to an error: the deadline, or the end of what git said."""
    if child.expired.is_set():
        return ": timed out (killed at its deadline)"
    stderr.seek(0, os.SEEK_END)
    stderr.seek(max(0, stderr.tell() - STDERR_QUOTE_BYTES))
    said = stderr.read().decode("utf-8", "replace").strip()
    if said:
        return f": {said}"
    code = child.proc.returncode
    return f" (exit {code})" if code is not None else ""


def is_oid(text: str) -> bool:
    """A full object id: 40 (SHA-1) or 64 (SHA-256) lowercase hex digits."""
    return _OID.fullmatch(text) is not None


_OID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")

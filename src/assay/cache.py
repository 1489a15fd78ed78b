"""The verdict cache: a report for a workspace state, reused while nothing that decided it changed.

The key (`cache_key`) is made of exactly these:

- every file and directory the workspace will hold, as `source_layout.scan_source` lists it
  (ignored by git or not): its path, kind, executable bit and bytes; a link by its target,
  never followed. Left out, as the workspace leaves them out: `.git`, caches
  (`__pycache__`, `.mypy_cache`, `.pytest_cache`, `.ruff_cache`) and build output
  (`target`) at the root and at package roots;
- each installed environment the workspace links instead of copying (`.venv`, `venv`,
  `node_modules`, `.tox`, `.nox`), by a fingerprint of what is installed
  (`environment_fingerprint`: every entry's stat identity, the small files that record
  installs, a virtualenv's interpreter);
- the plan, every checker's identity and version, the sandbox backend and assay's version;
- the host's variables the checks see (a bubblewrap check sees `TZ`, `LANG`, `LC_*` and a
  few more of them: `environment.inherited_by_checks`).

Nothing else is: a change on the host beyond the checkers' probed identities (a shared
library, a tool's plugin installed outside the workspace) is not seen. Only terminal,
trustworthy reports are stored (`cacheable`): an `inconclusive` check, a missing tool or
a misbehaving verifier might come out differently next time, so those are always
recomputed. A run with `--base`, `--protect` or `--install` does not use the cache.

A verify asks first under a second name, the early key (`assay.early_key`), made before
any sandbox exists from the same tree digest and from what decides every checker's
version instead of the version itself; it names a stored report only once a session
found that key's inputs unchanged (`put_alias`), so a hit under it copies, starts and
probes nothing.

Storage is SQLite in WAL mode in assay's per-user state directory (`assay.state_dir`),
so concurrent runs can read and write safely; it is bounded in bytes, evicting the
oldest entries first. The same database remembers each file's digest by its stat
identity, so that keying an unchanged repository reads no file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import operator
import os
import sqlite3
import stat
import time
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.build_identity import assay_build
from assay.errors import AssayError
from assay.evidence import CheckerId
from assay.mapped_writes import SyncedStats
from assay.source_layout import FileIdentity, SourceLayout, file_identity, scan_source
from assay.state_dir import default_cache_dir
from assay.untrusted_files import Link, OpenFile, Refused, chunks, open_untrusted
from assay.verdict import VERIFIER_FAULTS, Cause, Status, Verdict

#: Bound on the stored reports' total size; oldest entries are evicted past it.
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
#: How long a writer waits for another process's transaction before giving up.
BUSY_TIMEOUT_SECONDS = 30.0
#: Version of the key derivation; bump it when the key's inputs change meaning.
KEY_SCHEMA = "assay.cache-key/2"
#: Repositories whose files' digests are remembered (`workspace_digest`'s memo); the
#: least recently keyed are forgotten past it.
MEMO_MAX_ROOTS = 32

#: Statuses worth reusing: the code was judged. UNVERIFIED and INDETERMINATE are not.
_CACHEABLE_STATUS: dict[Status, bool] = {
    Status.VERIFIED: True,
    Status.FAILED: True,
    Status.INDETERMINATE: False,
    Status.UNVERIFIED: False,
}


class CacheError(AssayError):
    """The cache could not be read or written. Treat as a miss; never as a verdict."""


@dataclass(frozen=True, slots=True)
class CachedReport:
    """A report found in the cache."""

    report: dict[str, Any]
    """The report as it was stored."""
    stored_at: float
    """When it was stored (seconds since the epoch)."""
    key: str


# -- the key -------------------------------------------------------------------------------


def workspace_digest(
    root: str | os.PathLike[str],
    *,
    memo: VerdictCache | None = None,
    times: bool = True,
    copied_as: Mapping[str, FileIdentity | None] | None = None,
) -> str:
    """Digest of everything a workspace of `root` will hold: every file's path, kind,
    permission bits and bytes, with `times` the order of their modification times, and a
    fingerprint of each environment it links.

    A workspace keeps each file's mode and its times shifted by one random amount
    (`provision.workspace_age_ns`): a check sees them, so they count (a test that reads a
    file `chmod 000` made unreadable; make, which rebuilds what is older than its source,
    after a `touch`). Not their values: those are the workspace's own. A tree checked out
    by git for a base has times of no one's choosing: `times=False` leaves them out.

    `copied_as`: what a workspace copied of `root` found each file to be as it copied it
    (`provision.copy_layout`). The digest then names that workspace only if it holds the
    very files keyed, each as listed here, or raises `CacheError`: digests taken before
    and after the copy agree when a directory renamed during it is renamed back (each
    file's own stat unchanged), while the copy took the other one's files.

    The files are `source_layout.scan_source`'s own listing, so the key and the workspace can
    never disagree about what is in it: ignored files are copied, so they count (a
    gitignored `conftest.py` changes what runs); only caches and build output are left
    out. `.git`, which the workspace links, counts by the stat identity of its every
    entry, as an environment does (`environment_fingerprint`). With a `memo` (the cache
    that will hold the verdict), a file whose stat identity is unchanged since it was last
    hashed is not read again:
    a cached verify costs a stat per file, not a read; and when no file changed at all,
    one memo row for the whole listing stands for the per-file rows. Raises `CacheError`
    when an entry cannot be keyed safely.
    """
    root_path = Path(root)
    try:
        layout = scan_source(root_path, link_git=True)
    except OSError as exc:
        raise CacheError(f"the workspace cannot be keyed: {exc}") from exc
    if copied_as is not None:
        _held_as_keyed(layout, copied_as)
    memo_root = str(root_path.resolve())
    settled_before = time.time_ns() - int(RACY_SECONDS * 1e9)
    listing = _tree_listing(layout)
    remembered = _remembered_tree(memo, memo_root)
    if remembered is not None and remembered[0] == listing:
        files = remembered[1]  # every entry as it was: not one memo row is read
    else:
        files = _files_digest(root_path, layout, memo, memo_root, listing, settled_before)
    digest = hashlib.sha256(b"assay-workspace/4\0" + files)
    if times:
        digest.update(_times_digest(layout))
    for rel in layout.linked:
        # `.git` too: every check can read it (a test through a link into it, `git
        # describe` in a version module), so what is in it is part of what decides.
        fingerprint = environment_fingerprint(root_path, rel, memo=memo)
        digest.update(b"env\0" + _encode(rel) + b"\0" + fingerprint + b"\0")
    return digest.hexdigest()


def _files_digest(
    root: Path,
    layout: SourceLayout,
    memo: VerdictCache | None,
    memo_root: str,
    listing: bytes,
    settled_before: int,
) -> bytes:
    """The digest of the tree's directories and files, each file from the per-file memo
    when its stat identity is the one it was hashed with; then what was learnt is kept:
    the files' digests, and, when every file had settled and was hashed as listed, the
    whole `listing` as a name for the result."""
    known = _memoised(memo, memo_root)
    fresh: dict[str, tuple[str, bytes]] = {}
    synced = SyncedStats()
    digest = hashlib.sha256()
    for rel in sorted(layout.dirs):
        digest.update(b"dir\0" + _encode(rel) + b"\0")
    for rel in sorted(layout.files):
        value = _file_digest(root, rel, layout.stats[rel], known, fresh, settled_before, synced)
        digest.update(b"file\0" + _encode(rel) + b"\0" + value + b"\0")
    files = digest.digest()
    if memo is not None:
        # Named by its listing only when each entry's digest is one its listed identity
        # vouches for: every file settled and hashed as listed. A link is its target,
        # which no write changes in place: a new target is a new link.
        whole = all(
            stat.S_ISLNK(layout.stats[rel].st_mode)
            or (rel in fresh and fresh[rel][0] == _stat_identity(layout.stats[rel]))
            for rel in layout.files
        )
        with contextlib.suppress(CacheError):  # a memo that cannot be written costs time only
            memo.remember_files(
                memo_root, fresh, previous=known, tree=(listing, files) if whole else None
            )
    return files


def _held_as_keyed(layout: SourceLayout, copied_as: Mapping[str, FileIdentity | None]) -> None:
    """`CacheError` unless the workspace copied exactly the files listed, each as listed."""
    if set(copied_as) != set(layout.files) or any(
        copied_as[rel] != file_identity(layout.stats[rel]) for rel in layout.files
    ):
        raise CacheError("the tree changed while its workspace was made: nothing is cached")


def _times_digest(layout: SourceLayout) -> bytes:
    """The order of the files' modification times (each file's rank among them, ties
    kept): what a workspace copy keeps of them, and what make goes by. Not the distances:
    a file written again as the newest, as it was, is the tree it was. Directories' are
    left out: an editor's swap file come and gone moves them, and no check goes by them."""
    files = sorted(layout.files)
    times = [layout.stats[rel].st_mtime_ns for rel in files]
    rank = {t: at for at, t in enumerate(sorted(set(times)))}
    return hashlib.sha256(",".join(str(rank[t]) for t in times).encode()).digest()


def _tree_listing(layout: SourceLayout) -> bytes:
    """A digest of every directory's name and every file's name and stat identity: it
    changes whenever any file's content does (`_stat_identity`). Packed as arrays, not one
    string per file: a cache hit on a large tree spends its time here."""
    dirs = sorted(layout.dirs)
    files = sorted(layout.files)
    stats = [layout.stats[rel] for rel in files]
    listing = hashlib.sha256(b"assay-listing/4\0%d\0%d\0" % (len(dirs), len(files)))
    listing.update(_encode("\0".join(dirs)) + b"\0")
    listing.update(_encode("\0".join(files)) + b"\0")
    # The fields of `_stat_identity`; times can be negative, the rest cannot.
    listing.update(array("Q", [v for info in stats for v in _UNSIGNED_IDENTITY(info)]).tobytes())
    listing.update(array("q", [v for info in stats for v in _SIGNED_IDENTITY(info)]).tobytes())
    return listing.digest()


def _remembered_tree(memo: VerdictCache | None, root: str) -> tuple[bytes, bytes] | None:
    if memo is None:
        return None
    try:
        return memo.remembered_tree(root)
    except CacheError:
        return None


#: A file changed less than this long ago is hashed again next time rather than trusted by
#: its stat: a second write within one tick of the filesystem's clock could leave every
#: field of the stat as it was. Later writes always move its change time past the memo's.
RACY_SECONDS = 3.0


def _memoised(memo: VerdictCache | None, root: str) -> dict[str, tuple[str, bytes]]:
    if memo is None:
        return {}
    try:
        return memo.remembered_files(root)
    except CacheError:
        return {}  # every file is hashed: slower, never wrong


def _file_digest(
    root: Path,
    rel: str,
    listed: os.stat_result,
    known: dict[str, tuple[str, bytes]],
    fresh: dict[str, tuple[str, bytes]],
    settled_before: int,
    synced: SyncedStats,
) -> bytes:
    """One entry's digest, from the memo when the file's stat identity (`listed`: as the
    walk that listed it saw it) is the one it was hashed with. The change time cannot be
    set by anyone but the kernel, so content that changed has a new identity, even with
    its size and mtime put back."""
    remembered = known.get(rel)
    if remembered is not None and _stat_identity(listed) == remembered[0]:
        fresh[rel] = remembered
        return remembered[1]
    value, identity = _entry_digest(root, rel, synced)
    if identity is not None and identity[1] < settled_before:
        fresh[rel] = (identity[0], value)
    return value


_UNSIGNED_IDENTITY = operator.attrgetter("st_dev", "st_ino", "st_mode", "st_size")
_SIGNED_IDENTITY = operator.attrgetter("st_mtime_ns", "st_ctime_ns")


def _stat_identity(info: os.stat_result) -> str:
    """What changes whenever a file's content does: the change time cannot be set by
    anyone but the kernel, and a file replaced is a new inode."""
    # `3:`: a digest remembered before the permission bits counted, or before a file's
    # pages were written back as it was looked at (`assay.mapped_writes`), is not used.
    return (
        f"3:{info.st_dev}:{info.st_ino}:{info.st_mode}:{info.st_size}"
        f":{info.st_mtime_ns}:{info.st_ctime_ns}"
    )


def _entry_digest(
    root: Path, rel: str, synced: SyncedStats
) -> tuple[bytes, tuple[str, int] | None]:
    """One entry's kind and content, reached without following any link: a link is its
    target, never what it points at. What cannot be hashed safely (a FIFO, a device, a
    path through a link) raises `CacheError`: the key could not vouch for it, and two
    trees that differ there must not share a key. For a regular file that did not change
    while it was read, and whose stat vouches for its bytes (`assay.mapped_writes`: a
    page written through a shared mapping and not yet written back takes further writes
    without a trace), also its stat identity and change time (for the memo)."""
    with open_untrusted(root, rel, single_link=False) as found:
        if found is None:
            return b"missing", None  # deleted while being listed: a state of its own
        if isinstance(found, Link):
            return b"link:" + _encode(found.target), None
        if isinstance(found, Refused):
            raise CacheError(f"the workspace cannot be keyed: {found.reason}")
        try:
            vouched = synced.vouch(found.fd)  # before the stat: later writes move it
            before = os.fstat(found.fd)
            file_hash = _hash_open(found)
            after = os.fstat(found.fd)
        except OSError as exc:
            raise CacheError(f"the workspace cannot be keyed: {rel}: {exc.strerror}") from exc
        identity = _stat_identity(before)
        steady = vouched and identity == _stat_identity(after)
        # The permission bits: set-id bits do not survive the copy's change of owner.
        permissions = b"%03o:" % (before.st_mode & 0o777)
        return permissions + file_hash, (identity, before.st_ctime_ns) if steady else None


def _hash_open(found: OpenFile) -> bytes:
    info = os.fstat(found.fd)
    if info.st_blocks * 512 < info.st_size:
        return _hash_sparse(found.fd, info.st_size)
    file_hash = hashlib.sha256()
    for chunk in chunks(found):  # streamed: any size of regular file is fine
        file_hash.update(chunk)
    return file_hash.digest()


def _hash_sparse(fd: int, size: int) -> bytes:
    """A sparse file by its size and each extent of data with its offset (the holes
    between read as zeros): a `truncate -s 10G` file took 30 s of reading zeros to key.
    Another layout of the same bytes is another digest: a miss, never a false hit."""
    from assay.extents import data_extents

    file_hash = hashlib.sha256(b"sparse\0%d\0" % size)
    for start, end in data_extents(fd, size):
        file_hash.update(b"extent\0%d\0%d\0" % (start, end))
        at = start
        while at < end and (chunk := os.pread(fd, min(1 << 20, end - at), at)):
            file_hash.update(chunk)
            at += len(chunk)
    return file_hash.digest()


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


# -- installed environments ----------------------------------------------------------------

#: Files in an environment whose bytes are part of its fingerprint, not only their stat:
#: small, and each says what is installed or where code is loaded from (an editable
#: install's `.pth` or `direct_url.json`, a distribution's RECORD of its files' hashes,
#: the list npm keeps of what it installed).
_CONTENT_NAMES = frozenset(
    {"pyvenv.cfg", "RECORD", "direct_url.json", "installer", ".package-lock.json"}
)
_CONTENT_SUFFIXES = (".pth", ".egg-link")
#: Interpreter links of a virtualenv, whose target's identity is part of its fingerprint.
_INTERPRETERS = ("bin/python", "bin/python3")


def environment_fingerprint(
    root: str | os.PathLike[str], rel: str, *, memo: VerdictCache | None = None
) -> bytes:
    """A fingerprint of the installed environment at `rel` beneath `root` (a `.venv`,
    `node_modules`, `.tox`), cheap enough to take on every verify.

    Entries are keyed by their stat identity, change time and inode included: npm
    extracts every file with one fixed mtime, so an upgrade can keep sizes and mtimes,
    but no write keeps a change time, and a reinstalled package is a new inode. A link is
    keyed by its target and never followed.

    Every environment is walked whole, node_modules too: a file its checks load, edited
    in place inside an installed package, is a different tree (a stat per entry: about
    a second for a node_modules of a hundred thousand files).

    On top, the bytes of the small files that say what is installed (`_CONTENT_NAMES`:
    npm's `.package-lock.json`, a `.pth` or `direct_url.json` of an editable install,
    RECORD), and, for a virtualenv, the stat identity of the interpreter its
    `bin/python` leads to (an upgraded base Python changes what runs). The walk goes
    from directory descriptors and follows no link, so an environment cannot lead it
    out of the tree; nothing but those small regular files is opened. Raises
    `CacheError` when the environment cannot be walked.

    With a `memo` (the cache the verdict goes to), an environment in which nothing
    changed since it was last fingerprinted costs a stat per entry and nothing more: no
    file is read, nothing hashed (see `_unchanged_since`).
    """
    memo_root = str(Path(root).resolve())
    remembered = _remembered_environment(memo, memo_root, rel)
    started_ns = time.time_ns()
    try:
        top = _open_beneath(Path(root), rel)
        try:
            if not SyncedStats().stats_can_vouch(top):
                # Keyed by its entries' stats, which do not show every write there.
                raise CacheError(f"the environment {rel} is on tmpfs, where no stat is proof")
            since = None
            if remembered is not None:
                interpreters = _unchanged_since(top, remembered.settled_ns)
                if interpreters == remembered.interpreters:
                    return remembered.fingerprint
                if interpreters is None:  # not a memo of an older identity's: see below
                    since = remembered.settled_ns
                os.lseek(top, 0, os.SEEK_SET)  # walked again, from the start
            fingerprint = hashlib.sha256(b"assay-environment/2\0")
            walk = _EnvironmentWalk(Path(root), rel, fingerprint.update)
            if memo is not None:
                # What changed since the last walk (all, without one) is written back, so
                # that its stat moves with every later write (`assay.mapped_writes`); the
                # rest was written back by that walk.
                walk.write_back = _WriteBack(since)
            walk.tree(top, "")
        finally:
            os.close(top)
    except RecursionError as exc:
        raise CacheError(f"the environment {rel} is nested too deeply to be keyed") from exc
    except OSError as exc:
        raise CacheError(f"the environment {rel} cannot be keyed: {exc}") from exc
    digest = fingerprint.digest()
    if memo is not None and walk.write_back is not None and walk.write_back.vouched:
        settled_ns = started_ns - int(RACY_SECONDS * 1e9)
        remember = _RememberedEnvironment(digest, settled_ns, walk.interpreters.digest())
        with contextlib.suppress(CacheError):  # not remembering costs time only
            memo.remember_environment(memo_root, rel, remember)
    return digest


@dataclass(frozen=True, slots=True)
class _RememberedEnvironment:
    """An environment's fingerprint, and what says it still holds."""

    fingerprint: bytes
    settled_ns: int
    """Every entry then changed before this time (a walk's start, less `RACY_SECONDS`)."""
    interpreters: bytes
    """The digest of its virtualenvs' interpreters' identities (they live outside it)."""


def _remembered_environment(
    memo: VerdictCache | None, root: str, rel: str
) -> _RememberedEnvironment | None:
    if memo is None:
        return None
    try:
        return memo.remembered_environment(root, rel)
    except CacheError:
        return None  # walked and hashed in full: slower, never wrong


def _unchanged_since(top: int, settled_ns: int) -> bytes | None:
    """The digest of the interpreters the environment's virtualenvs lead to, if no entry
    beneath `top` (nor `top`) changed at or after `settled_ns`; else None.

    Why a change time is enough: the kernel sets it, to the current time, on every write
    to a file, every change of its mode, owner or links, and on a directory whenever an
    entry is added, removed or renamed in it, and nothing can set it back. So an edit
    in place, a package installed, removed or moved in whole each leave at least one
    entry whose change time is later than a fingerprint taken before them. (Only the
    system clock set back could hide a change; git's index makes the same assumption.)"""
    interpreters = hashlib.sha256()
    stack = [os.dup(top)]
    try:
        if os.fstat(top).st_ctime_ns >= settled_ns:
            return None
        while stack:
            fd = stack[-1]
            stack.pop()
            try:
                with os.scandir(fd) as listing:
                    entries = list(listing)
                names = set()
                for entry in entries:
                    names.add(entry.name)
                    info = entry.stat(follow_symlinks=False)
                    if info.st_ctime_ns >= settled_ns:
                        return None
                    if stat.S_ISDIR(info.st_mode):
                        stack.append(os.open(entry.name, _DIR_FLAGS, dir_fd=fd))
                if "pyvenv.cfg" in names:
                    for link in _INTERPRETERS:
                        interpreters.update(_interpreter_identity(fd, link) + b"\0")
            finally:
                os.close(fd)
    finally:
        for fd in stack:
            os.close(fd)
    return interpreters.digest()


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_beneath(root: Path, rel: str) -> int:
    """A descriptor of the directory `rel` beneath `root`, entered one component at a time
    without following a link."""
    fd = os.open(root, _DIR_FLAGS & ~os.O_NOFOLLOW)
    for part in rel.split("/"):
        try:
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
        finally:
            os.close(fd)
        fd = child
    return fd


@dataclass(slots=True)
class _EnvironmentWalk:
    """One environment's walk, feeding what it sees into `into`, one directory at a time."""

    root: Path
    env: str
    into: Callable[[bytes], None]
    interpreters: Any = field(default_factory=hashlib.sha256)
    """The identities of the interpreters its virtualenvs lead to (`_unchanged_since`)."""
    write_back: _WriteBack | None = None

    def tree(self, fd: int, prefix: str) -> None:
        """Every entry beneath `fd`, files by their stat identity."""
        seen: list[bytes] = []
        names = []
        for entry in _listing(fd):
            path = prefix + entry.name
            names.append(entry.name)
            if entry.is_symlink():
                seen.append(_link(fd, entry.name, path))
                continue
            info = entry.stat(follow_symlinks=False)
            seen.append(_described(path, info))
            if self.write_back is not None and stat.S_ISREG(info.st_mode):
                self.write_back.file(fd, entry.name, info)
            if stat.S_ISDIR(info.st_mode):
                with _entered(fd, entry.name) as child:
                    self.tree(child, path + "/")
            elif stat.S_ISREG(info.st_mode) and (
                entry.name in _CONTENT_NAMES or entry.name.endswith(_CONTENT_SUFFIXES)
            ):
                seen.append(_content(self.root, f"{self.env}/{path}"))
        if "pyvenv.cfg" in names:
            for link in _INTERPRETERS:
                identity = _interpreter_identity(fd, link)
                seen.append(identity)
                self.interpreters.update(identity + b"\0")
        self.into(b"\0".join(seen) + b"\0")


@dataclass(slots=True)
class _WriteBack:
    """Writes back the files of an environment changed at or after `since` (every file,
    with None), so that no page a mapping wrote stays writable without a trace."""

    since: int | None
    synced: SyncedStats = field(default_factory=SyncedStats)
    vouched: bool = True
    """Whether every file's stat now moves with each write to it."""

    def file(self, fd: int, name: str, info: os.stat_result) -> None:
        if self.since is not None and info.st_ctime_ns < self.since:
            return
        try:
            opened = os.open(name, _FILE_FLAGS, dir_fd=fd)
        except OSError:
            self.vouched = False
            return
        try:
            self.vouched = self.synced.vouch(opened) and self.vouched
        finally:
            os.close(opened)


_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


def _listing(fd: int) -> list[os.DirEntry[str]]:
    with os.scandir(fd) as listing:
        return sorted(listing, key=lambda entry: entry.name)


@contextlib.contextmanager
def _entered(fd: int, name: str) -> Iterator[int]:
    child = os.open(name, _DIR_FLAGS, dir_fd=fd)
    try:
        yield child
    finally:
        os.close(child)


def _link(fd: int, name: str, path: str) -> bytes:
    return b"L\0" + _encode(path) + b"\0" + _encode(os.readlink(name, dir_fd=fd))


def _described(path: str, info: os.stat_result) -> bytes:
    return b"E\0" + _encode(path) + b"\0" + _stat_identity(info).encode()


def _content(root: Path, rel: str) -> bytes:
    with open_untrusted(root, rel, single_link=False) as found:
        if not isinstance(found, OpenFile):
            return b"unreadable"  # changed while walked; its stat is in the fingerprint
        return _hash_open(found)


def _interpreter_identity(venv: int, link: str) -> bytes:
    """The stat identity of what a virtualenv's interpreter link leads to. The link is
    followed here, out of the tree too, but only to be looked at: nothing is opened."""
    try:
        return _stat_identity(os.stat(link, dir_fd=venv)).encode()
    except OSError as exc:
        return f"interpreter {link}: errno {exc.errno}".encode()


def cache_key(
    workspace: str,
    plan: Any,
    checkers: Iterable[CheckerId],
    sandbox: str,
    *,
    workspace_path: str | os.PathLike[str] | None = None,
    assay_version: str | None = None,
    host_env: Mapping[str, str] | None = None,
) -> str:
    """The cache key: `workspace` is a `workspace_digest`, `plan` any JSON-able value,
    `sandbox` the evidence string of the backend (`bwrap 0.8.0`).

    `workspace_path`: the directory the checkers were identified in. A checker found
    there (`.venv/bin/pytest`) is keyed by its path inside it: each run's workspace has a
    new name, and what is installed there is in `workspace` already. `host_env`: the
    host's variables the checks see (`environment.inherited_by_checks`). `assay_version`:
    the assay keyed, this build of it (`assay.build_identity`) by default."""
    material = {
        "schema": KEY_SCHEMA,
        "workspace": workspace,
        "plan": plan,
        "checkers": sorted(
            (c.tool, c.version, _checker_path(c.path, workspace_path)) for c in checkers
        ),
        "sandbox": sandbox,
        "assay": assay_version or assay_build(),
        # Only when given: the keys of callers that do not pass it stay as they were.
        **({"host_env": dict(host_env)} if host_env is not None else {}),
    }
    encoded = json.dumps(material, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(encoded.encode()).hexdigest()


def _checker_path(path: str | None, workspace: str | os.PathLike[str] | None) -> str:
    if not path or workspace is None:
        return path or ""
    inside = os.path.relpath(path, workspace)
    if inside == os.curdir or inside.startswith(os.pardir + os.sep) or inside == os.pardir:
        return path
    return f"<workspace>/{inside}"


def cacheable(status: Status | str, checks: Iterable[Any]) -> bool:
    """Whether a report may be reused: a judged status and no check that could come out
    differently on a rerun (inconclusive, unverified, or a verifier that misbehaved).

    `checks` are `Evidence` objects or their JSON dicts.
    """
    if not _CACHEABLE_STATUS[Status(status)]:
        return False
    for check in checks:
        verdict = Verdict(_field(check, "verdict"))
        if verdict in (Verdict.INCONCLUSIVE, Verdict.UNVERIFIED):
            return False
        cause = _field(check, "cause")
        if cause is not None and Cause(cause) in VERIFIER_FAULTS:
            return False
    return True


def _field(check: Any, name: str) -> Any:
    return check.get(name) if isinstance(check, Mapping) else getattr(check, name, None)


# -- the store -----------------------------------------------------------------------------


class VerdictCache:
    """Reports by cache key, in SQLite under `directory` (default: `default_cache_dir()`)."""

    def __init__(
        self, directory: str | os.PathLike[str] | None = None, *, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.path = self.directory / "verdicts.sqlite3"
        self.max_bytes = max_bytes
        self._initialised = False

    def get(self, key: str) -> CachedReport | None:
        """The stored report for `key`, or None. Raises `CacheError` if the store is unusable."""
        try:
            with self._connect() as db:
                row = db.execute(
                    "SELECT report, stored_at FROM verdicts WHERE key = ?", (key,)
                ).fetchone()
        except sqlite3.Error as exc:
            raise CacheError(f"reading {self.path}: {exc}") from exc
        if row is None:
            return None
        return _decoded(key, row[0], row[1])

    def put(self, key: str, report: Mapping[str, Any]) -> None:
        """Store `report` under `key` (replacing any), then evict the oldest past the bound.

        The caller decides what is worth storing (`cacheable`)."""
        encoded = json.dumps(report, sort_keys=True, default=str)
        try:
            with self._connect() as db:
                db.execute("BEGIN IMMEDIATE")
                db.execute(
                    "INSERT OR REPLACE INTO verdicts (key, report, stored_at, size) VALUES (?, ?, ?, ?)",
                    (key, encoded, time.time(), len(encoded)),
                )
                self._evict(db)
                db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise CacheError(f"writing {self.path}: {exc}") from exc

    def get_by_alias(self, alias: str) -> CachedReport | None:
        """The report stored under the key `alias` names (`put_alias`), or None."""
        try:
            with self._connect() as db:
                row = db.execute(
                    "SELECT v.key, v.report, v.stored_at FROM key_aliases a"
                    " JOIN verdicts v ON v.key = a.key WHERE a.alias = ?",
                    (alias,),
                ).fetchone()
        except sqlite3.Error as exc:
            raise CacheError(f"reading {self.path}: {exc}") from exc
        if row is None:
            return None
        return _decoded(row[0], row[1], row[2])

    def put_alias(self, alias: str, key: str) -> None:
        """Let `alias` (`assay.early_key`) name the report stored under `key`; an alias
        whose report is evicted is a miss."""
        try:
            with self._connect() as db:
                db.execute(
                    "INSERT OR REPLACE INTO key_aliases (alias, key) VALUES (?, ?)", (alias, key)
                )
        except sqlite3.Error as exc:
            raise CacheError(f"writing {self.path}: {exc}") from exc

    def remembered_plan(self, key: str) -> str | None:
        """The plan stored under the memo key `key` (`assay.plan_memo`), or None."""
        try:
            with self._connect() as db:
                row = db.execute("SELECT plan FROM plan_memo WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as exc:
            raise CacheError(f"reading {self.path}: {exc}") from exc
        return None if row is None else str(row[0])

    def remember_plan(self, key: str, plan: str, *, verdict_key: str) -> None:
        """Store `plan` under the memo key `key`, for as long as the verdict stored under
        `verdict_key` is kept."""
        try:
            with self._connect() as db:
                db.execute(
                    "INSERT OR REPLACE INTO plan_memo (key, plan, verdict_key) VALUES (?, ?, ?)",
                    (key, plan, verdict_key),
                )
        except sqlite3.Error as exc:
            raise CacheError(f"writing {self.path}: {exc}") from exc

    def remembered_environment(self, root: str, rel: str) -> _RememberedEnvironment | None:
        """What `remember_environment` kept for the environment `rel` of `root`, or None."""
        try:
            with self._connect() as db:
                row = db.execute(
                    "SELECT fingerprint, settled_ns, interpreters FROM environment_memo"
                    " WHERE root = ? AND rel = ?",
                    (root, rel),
                ).fetchone()
        except (sqlite3.Error, UnicodeEncodeError) as exc:
            raise CacheError(f"reading {self.path}: {exc}") from exc
        if row is None:
            return None
        return _RememberedEnvironment(bytes(row[0]), int(row[1]), bytes(row[2]))

    def remember_environment(self, root: str, rel: str, value: _RememberedEnvironment) -> None:
        """Remember an environment's fingerprint (forgotten with its root's file digests)."""
        try:
            with self._connect() as db:
                db.execute(
                    "INSERT OR REPLACE INTO environment_memo"
                    " (root, rel, fingerprint, settled_ns, interpreters) VALUES (?, ?, ?, ?, ?)",
                    (root, rel, value.fingerprint, value.settled_ns, value.interpreters),
                )
        except (sqlite3.Error, UnicodeEncodeError) as exc:
            raise CacheError(f"writing {self.path}: {exc}") from exc

    def remembered_files(self, root: str) -> dict[str, tuple[str, bytes]]:
        """The digests remembered for the files of `root`: path -> (stat identity, digest)."""
        try:
            with self._connect() as db:
                rows = db.execute(
                    "SELECT rel, identity, digest FROM file_digests WHERE root = ?", (root,)
                ).fetchall()
        except (sqlite3.Error, UnicodeEncodeError) as exc:  # a name that is not UTF-8
            raise CacheError(f"reading {self.path}: {exc}") from exc
        return {rel: (identity, bytes(digest)) for rel, identity, digest in rows}

    def remembered_tree(self, root: str) -> tuple[bytes, bytes] | None:
        """The listing of `root`'s whole tree last remembered, with the digest of its files."""
        try:
            with self._connect() as db:
                row = db.execute(
                    "SELECT listing, digest FROM tree_memo WHERE root = ?", (root,)
                ).fetchone()
        except (sqlite3.Error, UnicodeEncodeError) as exc:
            raise CacheError(f"reading {self.path}: {exc}") from exc
        return None if row is None else (bytes(row[0]), bytes(row[1]))

    def remember_files(
        self,
        root: str,
        digests: Mapping[str, tuple[str, bytes]],
        *,
        previous: Mapping[str, tuple[str, bytes]],
        tree: tuple[bytes, bytes] | None = None,
    ) -> None:
        """Remember `digests` as what `root`'s files are now (`previous`: what was remembered
        before, as `remembered_files` gave it; only the difference is written) and `tree`,
        a listing of the whole tree with the digest it stands for (None: forget it), and
        forget the least recently written roots past `MEMO_MAX_ROOTS`.

        A remembered digest is only ever used for a file whose stat identity is the one it
        was stored with, so a row another run wrote meanwhile is never wrong, only useless."""
        gone = [(root, rel) for rel in previous.keys() - digests.keys()]
        changed = [(root, rel, *v) for rel, v in digests.items() if previous.get(rel) != v]
        try:
            with self._connect() as db:
                db.execute("BEGIN IMMEDIATE")
                db.executemany("DELETE FROM file_digests WHERE root = ? AND rel = ?", gone)
                db.executemany(
                    "INSERT OR REPLACE INTO file_digests (root, rel, identity, digest)"
                    " VALUES (?, ?, ?, ?)",
                    changed,
                )
                db.execute("DELETE FROM tree_memo WHERE root = ?", (root,))
                if tree is not None:
                    db.execute(
                        "INSERT INTO tree_memo (root, listing, digest) VALUES (?, ?, ?)",
                        (root, *tree),
                    )
                db.execute(
                    "INSERT OR REPLACE INTO digest_roots (root, used_at) VALUES (?, ?)",
                    (root, time.time()),
                )
                forgotten = db.execute(
                    "SELECT root FROM digest_roots ORDER BY used_at DESC LIMIT -1 OFFSET ?",
                    (MEMO_MAX_ROOTS,),
                ).fetchall()
                db.executemany("DELETE FROM file_digests WHERE root = ?", forgotten)
                db.executemany("DELETE FROM environment_memo WHERE root = ?", forgotten)
                db.executemany("DELETE FROM tree_memo WHERE root = ?", forgotten)
                db.executemany("DELETE FROM digest_roots WHERE root = ?", forgotten)
                db.execute("COMMIT")
        except (sqlite3.Error, UnicodeEncodeError) as exc:  # a name that is not UTF-8
            raise CacheError(f"writing {self.path}: {exc}") from exc

    def __len__(self) -> int:
        with self._connect() as db:
            return int(db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0])

    def _evict(self, db: sqlite3.Connection) -> None:
        total = db.execute("SELECT COALESCE(SUM(size), 0) FROM verdicts").fetchone()[0]
        if total <= self.max_bytes:
            return
        excess = total - self.max_bytes
        freed = 0
        doomed = []
        for key, size in db.execute("SELECT key, size FROM verdicts ORDER BY stored_at ASC"):
            if freed >= excess:
                break
            doomed.append((key,))
            freed += size
        db.executemany("DELETE FROM verdicts WHERE key = ?", doomed)
        db.executemany("DELETE FROM key_aliases WHERE key = ?", doomed)
        db.executemany("DELETE FROM plan_memo WHERE verdict_key = ?", doomed)

    def _connect(self) -> _Connection:
        self.directory.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
        # In WAL mode this cannot corrupt the store; a power cut may lose the last entries,
        # which are misses. It spares every verify an fsync for the memo's write.
        db.execute("PRAGMA synchronous=NORMAL")
        if not self._initialised:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS verdicts ("
                " key TEXT PRIMARY KEY, report TEXT NOT NULL,"
                " stored_at REAL NOT NULL, size INTEGER NOT NULL)"
            )
            db.execute("CREATE INDEX IF NOT EXISTS verdicts_age ON verdicts (stored_at)")
            db.execute(
                "CREATE TABLE IF NOT EXISTS file_digests ("
                " root TEXT NOT NULL, rel TEXT NOT NULL, identity TEXT NOT NULL,"
                " digest BLOB NOT NULL, PRIMARY KEY (root, rel))"
            )
            db.execute(
                "CREATE TABLE IF NOT EXISTS digest_roots (root TEXT PRIMARY KEY, used_at REAL NOT NULL)"
            )
            db.execute(
                "CREATE TABLE IF NOT EXISTS key_aliases (alias TEXT PRIMARY KEY, key TEXT NOT NULL)"
            )
            db.execute(
                "CREATE TABLE IF NOT EXISTS environment_memo ("
                " root TEXT NOT NULL, rel TEXT NOT NULL, fingerprint BLOB NOT NULL,"
                " settled_ns INTEGER NOT NULL, interpreters BLOB NOT NULL,"
                " PRIMARY KEY (root, rel))"
            )
            db.execute(
                "CREATE TABLE IF NOT EXISTS tree_memo ("
                " root TEXT PRIMARY KEY, listing BLOB NOT NULL, digest BLOB NOT NULL)"
            )
            db.execute("CREATE INDEX IF NOT EXISTS key_aliases_key ON key_aliases (key)")
            db.execute(
                "CREATE TABLE IF NOT EXISTS plan_memo ("
                " key TEXT PRIMARY KEY, plan TEXT NOT NULL, verdict_key TEXT NOT NULL)"
            )
            db.execute("CREATE INDEX IF NOT EXISTS plan_memo_verdict ON plan_memo (verdict_key)")
            self._initialised = True
        return _Connection(db)


def _decoded(key: str, text: str, stored_at: float) -> CachedReport | None:
    try:
        report = json.loads(text)
    except ValueError:
        return None  # an unreadable entry is a miss; the next put replaces it
    if not isinstance(report, dict):
        return None
    return CachedReport(report=report, stored_at=float(stored_at), key=key)


class _Connection:
    """A connection that is closed (and rolled back if left mid-transaction) on exit."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        return self.db

    def __exit__(self, *exc: object) -> None:
        try:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
        finally:
            self.db.close()

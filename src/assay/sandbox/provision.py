"""Making workspaces fast: copy the project's source, link its environments, on a fast disk.

What a workspace gets from its source is `assay.source_layout`'s rule (`scan_source`).

Files are copy-on-write clones where the filesystem pair supports them, per-file kernel
copies otherwise. Hard links are deliberately not used for read-write workspaces: a
hard-linked file is the same inode as the source, so code under test that writes a file in
place would write straight through into the tree it was copied from.

Workspaces go on a RAM-backed scratch filesystem when one has room (`scratch_dir`): creating
thousands of files there costs a fraction of what it costs on a journaled disk.
"""

from __future__ import annotations

import enum
import fcntl
import os
import posixpath
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from assay.deep_removal import remove_deep
from assay.errors import AssayError
from assay.sandbox.base import CleanupError, ProvisionError, Workspace, new_run_id
from assay.scratch import make_scratch
from assay.source_layout import GIT_DIR, FileIdentity, SourceLayout, file_identity, scan_source
from assay.untrusted_files import file_kind

if TYPE_CHECKING:
    from assay.process import ProcessResult
    from assay.safe_git import ObjectHeader, ObjectStream, Repository, TreeEntry

#: Deadline for one copy or one git export; a workspace that takes longer is not worth waiting for.
COPY_TIMEOUT_SECONDS = 600.0

#: Names a directory to make workspaces in, overriding the choice `scratch_dir` makes.
WORKSPACE_DIR_ENV = "ASSAY_WORKSPACE_DIR"
#: A tmpfs is used only with this many times the bytes to copy free (tests write files too)...
SCRATCH_HEADROOM = 4
#: ...and never with less than this free: it is RAM, shared with everything else.
SCRATCH_MIN_FREE_BYTES = 1024**3
#: Where mounted filesystems and their types are listed.
MOUNTS_FILE = "/proc/self/mounts"

#: Threads issuing file copies; the work is in the kernel, so more threads than cores helps.
COPY_THREADS = 8
#: Trees of at most this many files are copied by this thread alone.
SMALL_TREE_FILES = 64
#: ioctl(2) request that makes one file share another's extents (Linux `FICLONE`).
FICLONE = 0x40049409


class CopyMethod(enum.StrEnum):
    """How a workspace's files were made."""

    REFLINK = "reflink"
    """Copy-on-write clones (`FICLONE`): near-instant, fully independent."""
    PARALLEL = "parallel"
    """Per-file kernel copies (sendfile) issued from a thread pool: the cost is syscalls
    per file, and those overlap."""
    GIT_ARCHIVE = "git-archive"
    """The tree of a commit, its blobs read from git's object store and written as they are
    (`export_commit`; the name stays for records that already carry it)."""


class CopyFailed(AssayError, OSError):
    """A copy or export did not complete; carries the process result when one ran."""

    def __init__(self, message: str, result: ProcessResult | None = None) -> None:
        super().__init__(message)
        self.result = result


# --------------------------------------------------------------------------- what to copy


# --------------------------------------------------------------------------- copying


def copy_tree(
    source: str | os.PathLike[str], dest: str | os.PathLike[str], *, link_git: bool = False
) -> CopyMethod:
    """Make `dest` (created if missing) a workspace of `source` by the module's rule.

    Modes and times are preserved. Returns the method that made the files.
    """
    src = Path(source).resolve()
    if not src.is_dir():
        raise CopyFailed(f"source is not a directory: {src}")
    return copy_layout(src, Path(dest), scan_source(src, link_git=link_git))[0]


#: What each file copied was as it was copied (`file_identity`); None for one that changed
#: while it was being copied.
CopiedAs = dict[str, FileIdentity | None]


def copy_layout(
    src: Path, dst: Path, layout: SourceLayout, *, age_ns: int = 0
) -> tuple[CopyMethod, CopiedAs]:
    """Create `layout`'s directories, files and links under `dst`; returns how files were
    made, and what each was as it was copied (the tree may change meanwhile: the verdict
    cache keys only a workspace that holds what it keyed). Every time is kept, made
    `age_ns` older (see `workspace_age_ns`)."""
    dst.mkdir(parents=True, exist_ok=True)
    for rel in layout.dirs:
        (dst / rel).mkdir()
    clone = _clone_works(src, dst, layout.files)
    copied: CopiedAs = {}
    files, names = _other_names(layout)
    if len(files) <= SMALL_TREE_FILES:
        # A few files copy faster than a thread pool (and `logging`, which it brings) loads.
        copied.update(_copy_files(src, dst, files, clone, age_ns))
    else:
        # One chunk per thread, not one task per file: a task costs more than copying a small file.
        chunks = [files[i::COPY_THREADS] for i in range(COPY_THREADS)]
        import concurrent.futures  # here: it brings `logging`, which a cache hit never needs

        from assay.signal_waits import results_of

        with concurrent.futures.ThreadPoolExecutor(COPY_THREADS) as pool:
            # Every result is asked for: the first copy error is raised here, not dropped.
            for done in results_of(
                [pool.submit(_copy_files, src, dst, chunk, clone, age_ns) for chunk in chunks]
            ):
                copied.update(done)
    for rel, first in names.items():
        copied[rel] = _link_name(src, dst, rel, first, copied.get(first), clone, age_ns)
    link_entries(src, dst, layout.linked)
    # Children first: creating an entry changes its parent's times.
    for rel in (*reversed(layout.dirs), "."):
        shutil.copystat(src / rel, dst / rel)
        if age_ns:
            made = os.stat(dst / rel)
            os.utime(dst / rel, ns=(made.st_atime_ns - age_ns, made.st_mtime_ns - age_ns))
    return CopyMethod.REFLINK if clone else CopyMethod.PARALLEL, copied


def _other_names(layout: SourceLayout) -> tuple[tuple[str, ...], dict[str, str]]:
    """The files to copy, and each other name of a file the tree holds under several
    (hard links) with the first of its names: copied once and linked, the workspace takes
    its bytes once, as the tree does. Copied per name, a 20 MB file linked 50 times made
    1 GB in RAM, and enough names sent the workspace to disk, where nothing bounds what
    the checks write."""
    first: dict[tuple[int, int], str] = {}
    names: dict[str, str] = {}
    files = []
    for rel in layout.files:
        info = layout.stats[rel]
        if info.st_nlink > 1 and stat.S_ISREG(info.st_mode):
            inode = (info.st_dev, info.st_ino)
            if inode in first:
                names[rel] = first[inode]
                continue
            first[inode] = rel
        files.append(rel)
    return tuple(files), names


def _link_name(
    src: Path,
    dst: Path,
    rel: str,
    first: str,
    copied: FileIdentity | None,
    clone: bool,
    age_ns: int,
) -> FileIdentity | None:
    """`rel` made another name of the copy of `first` when, in the source, it still is the
    very file copied there; else copied on its own."""
    try:
        now = file_identity(os.lstat(src / rel))
    except OSError:
        now = None
    if copied is not None and now == copied:
        os.link(dst / first, dst / rel, follow_symlinks=False)
        return copied
    return copy_entry(src / rel, dst / rel, clone=clone, age_ns=age_ns)


def workspace_age_ns() -> int:
    """How much older than its source a workspace copy's times are made: a random 1 to 30
    days, new for each copy. Their order, which make and autotools' sanity check go by, is
    kept; their values are not. mypy takes a module from its cache, unchecked, when the
    file's size and whole-second mtime are those it recorded: a change of the same size
    with its old mtime put back (`touch -d`) read as the checked file on a warm run, and
    passed with a type error."""
    from random import SystemRandom  # `secrets`' own source, without what `secrets` loads

    draw = SystemRandom().randrange
    return (86_400 + draw(29 * 86_400)) * 1_000_000_000 + draw(10**9)


def link_entries(src: Path, dst: Path, linked: tuple[str, ...]) -> tuple[str, ...]:
    """Symlink each `dst/rel` to `src/rel` (absolute) where its parent exists; returns those made."""
    made = []
    for rel in linked:
        target = dst / rel
        if target.parent.is_dir() and not os.path.lexists(target):
            os.symlink(src / rel, target)
            made.append(rel)
    return tuple(made)


def _copy_files(
    src: Path, dst: Path, rels: tuple[str, ...], clone: bool, age_ns: int
) -> list[tuple[str, FileIdentity | None]]:
    return [(rel, copy_entry(src / rel, dst / rel, clone=clone, age_ns=age_ns)) for rel in rels]


def copy_entry(
    source: Path, target: Path, *, clone: bool = False, age_ns: int = 0
) -> FileIdentity | None:
    """Copy one non-directory: a file's bytes (cloned when `clone`), mode and times (made
    `age_ns` older); a link as a link. Returns what the copied file was as it was copied
    (`file_identity`), None when it changed while being copied.

    Owners and extended attributes are not copied. Special files (fifos, sockets, devices)
    are refused (`shutil.SpecialFileError`) without being opened: a workspace never silently
    lacks a file, and the host never reads what a device node of the tree stands for (a
    disk, memory, an endless `/dev/zero`) nor waits on a fifo.
    """
    info = os.lstat(source)
    if stat.S_ISLNK(info.st_mode):
        os.symlink(os.readlink(source), target)
        times = (info.st_atime_ns - age_ns, info.st_mtime_ns - age_ns)
        os.utime(target, ns=times, follow_symlinks=False)
    elif stat.S_ISREG(info.st_mode):
        return _copy_regular(source, target, clone=clone, age_ns=age_ns)
    else:
        raise shutil.SpecialFileError(f"{source} is {file_kind(info.st_mode)}, not a regular file")
    return file_identity(info)


def _copy_regular(
    source: Path, target: Path, *, clone: bool, age_ns: int = 0
) -> FileIdentity | None:
    """A regular file's bytes, mode and times, in as few system calls as the kernel allows;
    what it was as it was copied (the file opened, not the path: a directory renamed
    meanwhile puts another file there), None when it changed meanwhile."""
    # Without blocking: a fifo put in the file's place since it was looked at is not waited on.
    fd_in = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY)
    try:
        info = os.fstat(fd_in)
        if not stat.S_ISREG(info.st_mode):
            raise shutil.SpecialFileError(
                f"{source} is {file_kind(info.st_mode)}, not a regular file"
            )
        fd_out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            if clone and _clone(fd_in, fd_out):
                pass
            elif info.st_blocks * 512 < info.st_size:
                _send_extents(fd_in, fd_out, info.st_size)
            else:
                _send_all(fd_in, fd_out, info.st_size)
            os.fchmod(fd_out, stat.S_IMODE(info.st_mode))
            os.utime(fd_out, ns=(info.st_atime_ns - age_ns, info.st_mtime_ns - age_ns))
        finally:
            os.close(fd_out)
        copied = file_identity(info)
        return copied if file_identity(os.fstat(fd_in)) == copied else None
    finally:
        os.close(fd_in)


def _clone(fd_in: int, fd_out: int) -> bool:
    """Make `fd_out` share `fd_in`'s extents (copy-on-write); False where the filesystem cannot."""
    try:
        fcntl.ioctl(fd_out, FICLONE, fd_in)
    except OSError:
        return False  # e.g. a file on another filesystem mounted inside the tree
    return True


def _send_all(fd_in: int, fd_out: int, size: int) -> None:
    """Copy `size` bytes in the kernel; sendfile may move fewer than asked, so loop."""
    offset = 0
    while offset < size:
        sent = os.sendfile(fd_out, fd_in, offset, size - offset)
        if sent == 0:
            break  # the file shrank while being copied: what was there is copied
        offset += sent


def _send_extents(fd_in: int, fd_out: int, size: int) -> None:
    """Copy a sparse file's data and leave its holes holes: a tree's `truncate -s 10G` file
    was written out whole, 10 GB of zeros onto the host's disk, before any deadline ran."""
    from assay.extents import data_extents

    for start, end in data_extents(fd_in, size):
        os.lseek(fd_out, start, os.SEEK_SET)
        at = start
        while at < end:
            sent = os.sendfile(fd_out, fd_in, at, end - at)
            if sent == 0:
                return  # the file shrank while being copied: what was there is copied
            at += sent
    os.ftruncate(fd_out, size)


def _clone_works(src: Path, dst: Path, files: tuple[str, ...]) -> bool:
    """Clone the first regular file to learn whether this filesystem pair supports it.

    Trying (and failing) a clone per file would cost a system call each for nothing.
    """
    regular = (src / rel for rel in files if stat.S_ISREG(os.lstat(src / rel).st_mode))
    sample = next(regular, None)
    if sample is None:
        return False
    probe = dst / ".assay-clone-probe"
    try:
        with open(sample, "rb") as source, open(probe, "wb") as target:
            return _clone(source.fileno(), target.fileno())
    finally:
        probe.unlink(missing_ok=True)


# --------------------------------------------------------------------------- where to copy


@dataclass(frozen=True, slots=True)
class Scratch:
    """The directory workspaces are made in, and why it was chosen."""

    path: Path
    reason: str


def scratch_dir(size: int, *, ram_ok: bool = True) -> Scratch:
    """Where to make a workspace of `size` bytes: `$ASSAY_WORKSPACE_DIR`, else a tmpfs
    (/dev/shm, `$XDG_RUNTIME_DIR`) with room, else the system temp dir.

    `ram_ok=False`: what the checks write there would not count against any memory limit
    of theirs, so a test could fill the machine's RAM; the workspace goes to disk."""
    override = os.environ.get(WORKSPACE_DIR_ENV)
    if override:
        return Scratch(Path(override), f"${WORKSPACE_DIR_ENV}")
    if not ram_ok:
        return Scratch(Path(tempfile.gettempdir()), "system temp dir: writes to RAM unbounded")
    needed = max(SCRATCH_HEADROOM * size, SCRATCH_MIN_FREE_BYTES)
    for candidate in ("/dev/shm", os.environ.get("XDG_RUNTIME_DIR")):
        if candidate and _tmpfs_with_room(candidate, needed):
            return Scratch(Path(candidate), f"tmpfs with more than {needed} bytes free")
    return Scratch(Path(tempfile.gettempdir()), "system temp dir: no tmpfs with room")


def _check_room(size: int, place: Path) -> None:
    """`CopyFailed` when a copy of `size` bytes would take more than half of what is free
    at `place`: what a tree holds (ignored files too) must not fill the host's disk."""
    try:
        free = shutil.disk_usage(place).free
    except OSError:
        return  # the copy itself will say what is wrong with the place
    if size > free // 2:
        raise CopyFailed(
            f"a copy of the tree takes {size:,} bytes and {place} has {free:,} free: remove "
            f"what the checks do not need (ignored files are copied too), or set "
            f"${WORKSPACE_DIR_ENV} to a place with room"
        )


def _tmpfs_with_room(path: str, needed: int) -> bool:
    if not os.path.isdir(path) or not os.access(path, os.W_OK | os.X_OK):
        return False
    try:
        return filesystem_type(path) == "tmpfs" and shutil.disk_usage(path).free > needed
    except OSError:
        return False


def filesystem_type(path: str, mounts: str | None = None) -> str | None:
    """The type of the filesystem `path` lies on, from the mount table (`mounts`: its text)."""
    if mounts is None:
        with open(MOUNTS_FILE, encoding="utf-8", errors="replace") as table:
            mounts = table.read()
    real = os.path.realpath(path)
    best, kind = "", None
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        point = _unescape_mount(fields[1])
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        # The longest mount point wins; on a tie the later mount is the one on top.
        if inside and len(point) >= len(best):
            best, kind = point, fields[2]
    return kind


def _unescape_mount(field: str) -> str:
    """Mount tables write space, tab, newline and backslash as octal escapes (`\\040`)."""
    return _MOUNT_ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), field)


_MOUNT_ESCAPE = re.compile(r"\\([0-7]{3})")


def export_commit(repo: str | os.PathLike[str], ref: str, dest: str | os.PathLike[str]) -> str:
    """Write the tree of `ref` in the git repository `repo` into `dest`; return the commit id.

    The files hold the blobs' bytes exactly: the trees and blobs are read with `git
    cat-file --batch`, plumbing that applies no filter, end-of-line or ident conversion,
    export attribute or hook, so nothing the repository's configuration or attributes name
    runs (see `assay.safe_git`), and each object is hashed again, so one rewritten in the
    object store is refused (`assay.git_objects`). Files are written here,
    never through a symlink; the repository's index, worktree and HEAD are never touched.
    """
    from assay.safe_git import GitError

    git = _open_repository(repo)
    commit = _resolve(git, repo, ref)
    dst = Path(dest)
    dst.mkdir(parents=True, exist_ok=True)
    try:
        # At `repo`'s own path in the commit: a package of a monorepo is verified alone.
        entries = git.tree(git.project_tree(commit), limit=TREE_LISTING_LIMIT_BYTES)
        paths = [_tree_path(entry.path, commit) for entry in entries]
        _write_tree(git, dst, entries, paths)
    except GitError as exc:
        raise CopyFailed(f"reading {commit} from {repo} failed: {exc}") from exc
    return commit


def resolve_commit(repo: str | os.PathLike[str], ref: str) -> str:
    """The full commit id `ref` names in `repo`; raises `CopyFailed` if it names none."""
    return _resolve(_open_repository(repo), repo, ref)


#: Bound on the listing of one commit's tree (about 100 bytes a file).
TREE_LISTING_LIMIT_BYTES = 256 * 1024 * 1024
#: Bound on a symlink's target (Linux's PATH_MAX): a larger "link" is no link.
SYMLINK_TARGET_LIMIT_BYTES = 4096
#: A tree entry's mode says what it is: these bits, and the executable bit.
_MODE_TYPE, _MODE_REGULAR, _MODE_SYMLINK, _MODE_GITLINK, _MODE_TREE = (
    0o170000,
    0o100000,
    0o120000,
    0o160000,
    0o040000,
)


def _open_repository(repo: str | os.PathLike[str]) -> Repository:
    # Imported here: a copy of a working tree, or a cache key, never reads git objects.
    from assay.safe_git import GitError, open_repository

    try:
        return open_repository(repo, timeout=COPY_TIMEOUT_SECONDS)
    except GitError as exc:
        raise CopyFailed(f"{repo} could not be read as a git repository: {exc}") from exc


def _resolve(git: Repository, repo: str | os.PathLike[str], ref: str) -> str:
    from assay.safe_git import GitError

    try:
        return git.resolve_commit(ref)
    except GitError as exc:
        raise CopyFailed(f"{ref!r} is not a commit in {repo}: {exc}") from exc


def _tree_path(path: str, commit: str) -> str:
    """`path` when every part of it stays inside the tree and out of git's own state.

    Git refuses to check such paths out, but a tree object can hold them: one made by
    hand is refused here rather than written somewhere else.
    """
    parts = path.split("/")
    if any(part in ("", ".", "..") or part.casefold() == GIT_DIR for part in parts):
        raise CopyFailed(f"{commit} holds a path that cannot be written safely: {path!r}")
    return path


def _write_tree(git: Repository, dst: Path, entries: list[TreeEntry], paths: list[str]) -> None:
    """Create `entries` under `dst`: directories, files with their bytes and executable
    bit, symlinks as symlinks (their target never followed), submodules as empty
    directories, as a checkout (and `git archive`) would."""
    made = {""}  # directories this export created: the only ones anything is written into
    blobs = [entry.oid for entry in entries if entry.kind == "blob"]
    with git.objects(blobs) as objects:
        for entry, rel in zip(entries, paths, strict=True):
            what = (entry.mode & _MODE_TYPE, entry.kind)
            if what in ((_MODE_TREE, "tree"), (_MODE_GITLINK, "commit")):
                _make_dirs(dst, rel, made)
                continue
            if what not in ((_MODE_REGULAR, "blob"), (_MODE_SYMLINK, "blob")):
                raise CopyFailed(f"{rel!r} is a {entry.kind} git does not write: {entry.mode:o}")
            _make_dirs(dst, posixpath.dirname(rel), made)
            header = objects.header(entry.oid)
            if header.kind != "blob":
                raise CopyFailed(f"{rel!r} names a {header.kind}, not a blob")
            target = os.path.join(dst, rel)
            if what[0] == _MODE_SYMLINK:
                _write_symlink(target, objects.read(header, limit=SYMLINK_TARGET_LIMIT_BYTES))
            else:
                _write_file(target, objects, header, executable=bool(entry.mode & 0o100))


def _make_dirs(dst: Path, rel: str, made: set[str]) -> None:
    """Create `rel` and any missing parents, each inside one this export made.

    A name already taken (by a symlink or a file of the same tree) is an error, so no
    write ever goes through something the tree put there.
    """
    missing = []
    while rel not in made:
        missing.append(rel)
        rel = posixpath.dirname(rel)
    for rel in reversed(missing):
        try:
            os.mkdir(os.path.join(dst, rel))
        except OSError as exc:
            raise CopyFailed(f"creating directory {rel!r} failed: {exc}") from exc
        made.add(rel)


def _write_symlink(target: str, link: bytes) -> None:
    """A symlink to `link`, wherever it points: it is made, never followed."""
    if not link or b"\0" in link:
        raise CopyFailed(f"{target} would be a symlink to nothing a link can hold: {link[:100]!r}")
    try:
        os.symlink(os.fsdecode(link), target)
    except OSError as exc:
        raise CopyFailed(f"creating symlink {target} failed: {exc}") from exc


def _write_file(
    target: str, objects: ObjectStream, header: ObjectHeader, *, executable: bool
) -> None:
    """A new regular file (never an existing name or a link) holding the blob's bytes; its
    mode is a checkout's: 0666 or 0777 less the umask."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(target, flags, 0o777 if executable else 0o666)
    except OSError as exc:
        raise CopyFailed(f"creating {target} failed: {exc}") from exc
    try:
        objects.write_to(header, fd)
    except OSError as exc:
        raise CopyFailed(f"writing {target} failed: {exc}") from exc
    finally:
        os.close(fd)


@dataclass(frozen=True, slots=True)
class ProvisionRecord:
    """How a workspace was made, for evidence: where, how, and what was not copied."""

    source: str
    """The source directory, resolved."""
    location: str
    """The directory the workspace was made in."""
    location_reason: str
    method: CopyMethod
    copied_files: int | None
    """Files and links copied; None for a git export."""
    copied_bytes: int | None
    linked: tuple[str, ...]
    """Relative paths that are symlinks to the source's own directories (environments, `.git`)."""
    skipped: tuple[str, ...]
    """Relative paths left out (caches, build output)."""
    copied_as: Mapping[str, FileIdentity | None] = field(
        default_factory=dict, compare=False, repr=False
    )
    """What each file copied was as it was copied (`copy_layout`); for the verdict cache,
    not the evidence."""

    def to_dict(self) -> dict[str, object]:
        return {
            "source": self.source,
            "location": self.location,
            "location_reason": self.location_reason,
            "method": self.method.value,
            "copied_files": self.copied_files,
            "copied_bytes": self.copied_bytes,
            "linked": list(self.linked),
            "skipped": list(self.skipped),
        }


def provision_copy(
    source: str | os.PathLike[str],
    *,
    commit: str | None,
    backend: str,
    run_id: str,
    link_git: bool = False,
    ram_ok: bool = True,
) -> tuple[Path, str | None, ProvisionRecord]:
    """A fresh directory holding `source` (or its tree at `commit`) by the module's rule.

    `link_git`: link `.git` instead of copying it (for a backend that makes it read-only;
    a commit's tree never gets one). Returns the directory, the resolved commit and how it
    was made. The caller owns the directory.
    """
    root = Path(source).resolve()
    if not root.is_dir():
        raise CopyFailed(f"source is not a directory: {root}")
    # For a commit too: its environments are the working tree's, and its size is near enough.
    layout = scan_source(root, link_git=link_git and commit is None)
    scratch = scratch_dir(layout.size, ram_ok=ram_ok)
    _check_room(layout.size, scratch.path)
    path = make_scratch(f"{backend}-{run_id}", dir=scratch.path)
    try:
        if commit is not None:
            resolved = export_commit(root, commit, path)
            # The commit's tree runs against today's environments, where that tree has a place.
            linked = link_entries(root, path, layout.linked)
            return path, resolved, _record(root, scratch, CopyMethod.GIT_ARCHIVE, linked, None)
        method, copied_as = copy_layout(root, path, layout, age_ns=workspace_age_ns())
        record = _record(root, scratch, method, layout.linked, layout)
        return path, None, replace(record, copied_as=copied_as)
    except BaseException as error:
        discard(path, error)
        raise


def provision_workspace(
    source: str | os.PathLike[str],
    *,
    commit: str | None,
    backend: str,
    link_git: bool,
    ram_ok: bool = True,
) -> Workspace:
    """`provision_copy` for a backend: a `Workspace`, or `ProvisionError` naming `backend`."""
    run_id = new_run_id()
    try:
        path, base_commit, record = provision_copy(
            source, commit=commit, backend=backend, run_id=run_id, link_git=link_git, ram_ok=ram_ok
        )
    except OSError as exc:  # CopyFailed included
        raise ProvisionError(f"could not copy {source}: {exc}", backend=backend) from exc
    return Workspace(run_id=run_id, path=path, base_commit=base_commit, provisioned=record)


def remove_workspace(workspace: Workspace, *, backend: str) -> None:
    """`remove_tree` for a backend: `CleanupError` naming `backend` when anything is left."""
    try:
        remove_tree(workspace.path)
    except OSError as exc:
        raise CleanupError(str(exc), backend=backend) from exc


def discard(path: Path, error: BaseException) -> None:
    """Remove a workspace that failed half-made; a removal failure is noted on `error`,
    which the caller re-raises, so it is reported without masking why provisioning failed."""
    try:
        remove_tree(path)
    except OSError as cleanup_error:
        error.add_note(f"and removing {path} failed: {cleanup_error}")


def _record(
    root: Path,
    scratch: Scratch,
    method: CopyMethod,
    linked: tuple[str, ...],
    copied: SourceLayout | None,
) -> ProvisionRecord:
    """The record of one workspace; `copied` is None for a git export (git chose the files)."""
    return ProvisionRecord(
        source=str(root),
        location=str(scratch.path),
        location_reason=scratch.reason,
        method=method,
        copied_files=len(copied.files) if copied else None,
        copied_bytes=copied.size if copied else None,
        linked=linked,
        skipped=copied.skipped if copied else (),
    )


def remove_tree(path: str | os.PathLike[str]) -> None:
    """Remove `path` completely; raises OSError with the first failure (nothing swallowed)."""
    errors: list[str] = []

    def on_error(_func: object, failed: str, exc: BaseException) -> None:
        # Read-only directories (a .git made read-only, a test's chmod) block removal of
        # their entries: make the parent writable and retry once before giving up.
        try:
            os.chmod(os.path.dirname(failed), 0o700)
            if os.path.isdir(failed) and not os.path.islink(failed):
                shutil.rmtree(failed)
            else:
                os.unlink(failed)
        except OSError as retry_exc:
            errors.append(f"{failed}: {retry_exc.strerror or retry_exc}")

    try:
        if sys.version_info >= (3, 12):  # onerror is deprecated there
            shutil.rmtree(path, onexc=on_error)
        else:
            shutil.rmtree(path, onerror=lambda func, failed, info: on_error(func, failed, info[1]))
    except RecursionError:
        remove_deep(path)
        return
    if errors:
        raise OSError(f"could not remove {len(errors)} path(s) under {path}: {errors[0]}")
    if os.path.lexists(path):
        raise OSError(f"{path} still exists after removal")

"""The verdict cache: a report for a workspace state, reused while nothing that decided it changed.

The key covers every input of a verdict: the content of the workspace (tracked and
untracked-but-not-ignored files), the plan, every checker's identity and version,
the sandbox backend and assay's own version. Only terminal, trustworthy reports
are stored (`cacheable`): an `inconclusive` check, a missing tool or a misbehaving
verifier might come out differently next time, so those are always recomputed.

Storage is SQLite in WAL mode in a per-user directory, so concurrent runs can read
and write safely; it is bounded in bytes, evicting the oldest entries first.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay._version import __version__
from assay.evidence import CheckerId
from assay.filetree import walk_files
from assay.safe_git import GitError, open_repository
from assay.untrusted_files import Link, Refused, chunks, open_untrusted
from assay.verdict import VERIFIER_FAULTS, Cause, Status, Verdict

#: Environment variable naming the cache directory (overrides the XDG default).
CACHE_DIR_VAR = "ASSAY_CACHE_DIR"
#: Bound on the stored reports' total size; oldest entries are evicted past it.
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
#: How long a writer waits for another process's transaction before giving up.
BUSY_TIMEOUT_SECONDS = 30.0
#: Deadline for listing a repository's files with git.
LIST_TIMEOUT_SECONDS = 60.0
#: Bound on that listing; past it the files are walked instead.
LIST_LIMIT_BYTES = 256 * 1024 * 1024
#: Version of the key derivation; bump it when the key's inputs change meaning.
KEY_SCHEMA = "assay.cache-key/1"

#: Statuses worth reusing: the code was judged. UNVERIFIED and INDETERMINATE are not.
_CACHEABLE_STATUS: dict[Status, bool] = {
    Status.VERIFIED: True,
    Status.FAILED: True,
    Status.INDETERMINATE: False,
    Status.UNVERIFIED: False,
}


class CacheError(Exception):
    """The cache could not be read or written. Treat as a miss; never as a verdict."""


@dataclass(frozen=True, slots=True)
class CachedReport:
    """A report found in the cache."""

    report: dict[str, Any]
    """The report as it was stored."""
    stored_at: float
    """When it was stored (seconds since the epoch)."""
    key: str


def default_cache_dir() -> Path:
    """`$ASSAY_CACHE_DIR`, else `$XDG_CACHE_HOME/assay`, else `~/.cache/assay`."""
    explicit = os.environ.get(CACHE_DIR_VAR)
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "assay"


# -- the key -------------------------------------------------------------------------------


def workspace_digest(root: str | os.PathLike[str]) -> str:
    """Content hash of a workspace: every file's path, kind, executable bit and bytes.

    In a git work tree the files are `git ls-files -co --exclude-standard` (tracked,
    plus untracked that are not ignored); elsewhere a walk that skips VCS state and
    installed dependencies. Raises `CacheError` when an entry cannot be hashed safely.
    """
    root_path = Path(root)
    files = _git_files(root_path)
    if files is None:
        files = walk_files(root_path)
    digest = hashlib.sha256(b"assay-workspace/1\0")
    for rel in files:
        digest.update(rel.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(_entry_digest(root_path, rel) + b"\0")
    return digest.hexdigest()


def _git_files(root: Path) -> list[str] | None:
    if not (root / ".git").exists():
        return None
    # Through safe_git: nothing the repository's config names runs or is read here. An
    # fsmonitor that lied about changed files, or an excludes file outside the repository,
    # would also hide a change from the key and turn a miss into a false hit.
    try:
        repo = open_repository(root, timeout=LIST_TIMEOUT_SECONDS)
        listing = repo.output("ls-files", "-z", "-co", "--exclude-standard", limit=LIST_LIMIT_BYTES)
    except GitError:
        return None  # a walk sees more files than git would: a miss at worst, never a false hit
    return sorted({os.fsdecode(name) for name in listing.split(b"\0") if name})


def _entry_digest(root: Path, rel: str) -> bytes:
    """One entry's kind and content, reached without following any link: a link is its
    target, never what it points at. What cannot be hashed safely (a FIFO, a device, a
    submodule, a path through a link) raises `CacheError`: the key could not vouch for it,
    and two trees that differ there must not share a key."""
    with open_untrusted(root, rel, single_link=False) as found:
        if found is None:
            return b"missing"  # tracked but deleted: a state of its own
        if isinstance(found, Link):
            return b"link:" + found.target.encode("utf-8", "surrogateescape")
        if isinstance(found, Refused):
            raise CacheError(f"the workspace cannot be keyed: {found.reason}")
        executable = b"x" if found.mode & 0o111 else b"-"
        file_hash = hashlib.sha256()
        try:
            for chunk in chunks(found):  # streamed: any size of regular file is fine
                file_hash.update(chunk)
        except OSError as exc:
            raise CacheError(f"the workspace cannot be keyed: {rel}: {exc.strerror}") from exc
        return executable + file_hash.digest()


def cache_key(
    workspace: str,
    plan: Any,
    checkers: Iterable[CheckerId],
    sandbox: str,
    *,
    assay_version: str = __version__,
) -> str:
    """The cache key: `workspace` is a `workspace_digest`, `plan` any JSON-able value,
    `sandbox` the evidence string of the backend (`bwrap 0.8.0`)."""
    material = {
        "schema": KEY_SCHEMA,
        "workspace": workspace,
        "plan": plan,
        "checkers": sorted((c.tool, c.version, c.path or "") for c in checkers),
        "sandbox": sandbox,
        "assay": assay_version,
    }
    encoded = json.dumps(material, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(encoded.encode()).hexdigest()


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
        try:
            report = json.loads(row[0])
        except ValueError:
            return None  # an unreadable entry is a miss; the next put replaces it
        if not isinstance(report, dict):
            return None
        return CachedReport(report=report, stored_at=float(row[1]), key=key)

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

    def _connect(self) -> _Connection:
        self.directory.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
        if not self._initialised:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS verdicts ("
                " key TEXT PRIMARY KEY, report TEXT NOT NULL,"
                " stored_at REAL NOT NULL, size INTEGER NOT NULL)"
            )
            db.execute("CREATE INDEX IF NOT EXISTS verdicts_age ON verdicts (stored_at)")
            self._initialised = True
        return _Connection(db)


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

"""The persistent probe record: a tool's version remembered across runs, used only while
the binary (and every file that decides its version) is provably unchanged.

A stored answer is used when every file and directory that decides the version still
has exactly the identity (device, inode, size, mtime, ctime) it had when it was probed.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import stat
import time
from collections.abc import Mapping
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

from assay.state_dir import default_cache_dir
from assay.toolchains import Toolchain
from assay.tools import steering_env_prefixes
from assay.untrusted_files import read_untrusted

if TYPE_CHECKING:
    import sqlite3


def search_path(env: Mapping[str, str] | None) -> str:
    """The PATH a child started with overlay `env` would search."""
    if env is not None and "PATH" in env:
        return env["PATH"]
    return os.environ.get("PATH", os.defpath)


#: Set to a non-empty value other than "0" to probe every tool on every run.
NO_PROBE_CACHE_VAR = "ASSAY_NO_PROBE_CACHE"
#: The probe record's file in assay's state directory (next to the verdict cache).
PROBE_STORE_NAME = "probes.sqlite3"
#: Version of the record's key and fingerprint derivation; bump it when they change meaning.
PROBE_RECORD_SCHEMA = "assay.probe-record/1"
#: How long a writer waits for another process's transaction.
PROBE_STORE_BUSY_S = 5.0
#: Entries kept; the oldest go first (binaries in deleted temp dirs never come back).
PROBE_STORE_MAX_ENTRIES = 2000
#: A file changed this recently may change again within one timestamp tick without its
#: mtime/ctime moving, so an answer depending on it is not persisted (git's "racy clean").
RACY_WINDOW_NS = 2_000_000_000
#: Bytes read from the head of a binary to find a `#!` line (Linux allows 255 after `#!`).
SHEBANG_MAX_BYTES = 512
#: The largest pyvenv.cfg read; real ones are a few hundred bytes.
PYVENV_CFG_MAX_BYTES = 64 * 1024
#: Directories walked up from a node script to find its package's package.json.
NODE_PACKAGE_MAX_DEPTH = 4
#: Launchers that pick the real tool at run time from files we do not fingerprint
#: (rustup proxies, volta, mise, asdf, pyenv...): their answers are never persisted.
DISPATCHERS = frozenset(
    {"rustup", "rustup-init", "volta-shim", "mise", "rtx", "asdf", "pyenv", "nodenv", "proto"}
)
#: A path component that marks a version manager's shim directory.
SHIM_DIR = "shims"
#: Environment variables (by prefix) that can change which tool version answers.
STEERING_ENV_PREFIXES = steering_env_prefixes()  # each ecosystem declares its own
#: Exact names of further steering variables (user site-packages, tool config dirs).
STEERING_ENV_NAMES = ("HOME", "XDG_CONFIG_HOME")
_PYTHON_NAME = re.compile(r"python(\d+(\.\d+)?)?$")
_NODE_NAMES = frozenset({"node", "nodejs"})
#: Where a Python installation keeps installed packages, relative to its prefix.
_PREFIX_PACKAGE_GLOBS = (
    "lib/python*/site-packages",
    "lib/python*/dist-packages",
    "lib/python3/dist-packages",
    "local/lib/python*/dist-packages",
)
#: The site-packages of a virtualenv, relative to its root.
_VENV_PACKAGE_GLOB = "lib/python*/site-packages"


#: One file's identity: path, device, inode, size, mtime (ns), ctime (ns).
_Part = tuple[str, int, int, int, int, int]


class _Unfingerprintable(Exception):
    """What decides the tool's version cannot be pinned down from the file system."""


def probe_cache_disabled() -> bool:
    """Whether `ASSAY_NO_PROBE_CACHE` asks for every tool to be probed on every run."""
    return os.environ.get(NO_PROBE_CACHE_VAR, "") not in ("", "0")


def _effective_env(env: Mapping[str, str] | None) -> dict[str, str]:
    """The environment the version command sees: ours with `env` laid over it."""
    return {**os.environ, **(env or {})}


def _steering_env(effective: Mapping[str, str]) -> dict[str, str]:
    """The variables of `effective` that can change which version a tool reports."""
    return {
        name: value
        for name, value in sorted(effective.items())
        if name in STEERING_ENV_NAMES or name.startswith(STEERING_ENV_PREFIXES)
    }


def _identity(path: str) -> _Part:
    """Device, inode, size, mtime and ctime of `path` (followed): changes when it is replaced.

    ctime matters: npm and `cp -p` restore old mtimes, and a freed inode is reused at
    once, but ctime cannot be set back."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise _Unfingerprintable(f"cannot stat {path}: {exc}") from exc
    return (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _is_dispatcher(invoked: str, real: str) -> bool:
    """Whether `invoked` is a version manager's launcher rather than the tool itself."""
    name = os.path.splitext(os.path.basename(real))[0]
    if name in DISPATCHERS or os.path.basename(invoked) in DISPATCHERS:
        return True
    if SHIM_DIR in Path(invoked).parts or SHIM_DIR in Path(real).parts:
        return True
    # rustup installs its proxies (cargo, rustc) as hard links next to itself.
    return os.path.exists(os.path.join(os.path.dirname(invoked), "rustup"))


def _shebang(real: str) -> list[str] | None:
    """The `#!` line of `real` split into words, or None for a binary that has none."""
    # A binary in the tree under verification is the repository's: opened without
    # blocking (a FIFO put there would hang the host) and read only if it is a regular file.
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise _Unfingerprintable(f"cannot read {real}: {exc}") from exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _Unfingerprintable(f"{real} is not a regular file")
        head = os.read(fd, SHEBANG_MAX_BYTES)
    except OSError as exc:
        raise _Unfingerprintable(f"cannot read {real}: {exc}") from exc
    finally:
        os.close(fd)
    if not head.startswith(b"#!"):
        return None
    line, newline, _ = head[2:].partition(b"\n")
    if not newline:
        raise _Unfingerprintable(f"{real}: #! line longer than {SHEBANG_MAX_BYTES} bytes")
    words = line.decode("utf-8", "replace").split()
    if not words:
        raise _Unfingerprintable(f"{real}: empty #! line")
    return words


def _interpreter(words: list[str], search: str) -> str:
    """The interpreter a `#!` line names, resolved the way the kernel and `env` would."""
    if os.path.basename(words[0]) != "env":
        return words[0]
    names = [w for w in words[1:] if not w.startswith("-")]
    if not names:
        raise _Unfingerprintable(f"#!{' '.join(words)}: no interpreter named")
    found = shutil.which(names[0], path=search)
    if found is None:
        raise _Unfingerprintable(f"#!{' '.join(words)}: {names[0]} not on PATH")
    return os.path.abspath(found)


def _python_package_dirs(interpreter: str, effective: Mapping[str, str]) -> list[str]:
    """Every directory a Python interpreter may import installed packages from, found
    without running it: its prefix's, its virtualenv's (via pyvenv.cfg), and the user's."""
    real = os.path.realpath(interpreter)
    prefixes = [os.path.dirname(os.path.dirname(real))]
    dirs: list[str] = []
    for root in (os.path.dirname(interpreter), os.path.dirname(os.path.dirname(interpreter))):
        cfg = os.path.join(root, "pyvenv.cfg")
        if os.path.isfile(cfg):
            dirs.append(cfg)  # `include-system-site-packages` and `home` live here
            dirs.extend(sorted(glob.glob(os.path.join(root, _VENV_PACKAGE_GLOB))))
            home = _pyvenv_home(cfg)
            if home:
                prefixes.append(os.path.dirname(home))
            break
    for prefix in prefixes:
        for pattern in _PREFIX_PACKAGE_GLOBS:
            dirs.extend(sorted(glob.glob(os.path.join(prefix, pattern))))
    user_base = effective.get("PYTHONUSERBASE") or os.path.join(_home(effective), ".local")
    dirs.extend(sorted(glob.glob(os.path.join(user_base, _VENV_PACKAGE_GLOB))))
    return list(dict.fromkeys(dirs))  # a venv's `home` is often the real interpreter's prefix


def _home(effective: Mapping[str, str]) -> str:
    """The home directory the version command would see."""
    return effective.get("HOME") or os.path.expanduser("~")


def _go_env_file(effective: Mapping[str, str]) -> str:
    """Where `go env -w` keeps settings such as GOTOOLCHAIN, which pick the Go that answers."""
    explicit = effective.get("GOENV")
    if explicit:
        return explicit
    config = effective.get("XDG_CONFIG_HOME") or os.path.join(_home(effective), ".config")
    return os.path.join(config, "go", "env")


def _pyvenv_home(cfg: str) -> str | None:
    """The `home` (base interpreter's directory) a pyvenv.cfg names, or None."""
    # A workspace's virtualenv was made by the code under test: its pyvenv.cfg is read
    # without following a link, blocking, or reading past a small bound.
    data = read_untrusted(os.path.dirname(cfg), os.path.basename(cfg), limit=PYVENV_CFG_MAX_BYTES)
    if not isinstance(data, bytes):
        reason = "it is not there" if data is None else data.reason
        raise _Unfingerprintable(f"cannot read {cfg}: {reason}")
    text = data.decode("utf-8", errors="replace")
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if sep and name.strip() == "home":
            return value.strip() or None
    return None


def _node_package_json(real: str) -> str | None:
    """The package.json of the npm package a node script belongs to, or None."""
    directory = os.path.dirname(real)
    for _ in range(NODE_PACKAGE_MAX_DEPTH):
        candidate = os.path.join(directory, "package.json")
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return None


def _program_parts(invoked: str, search: str, effective: Mapping[str, str]) -> list[_Part]:
    """Identities of `invoked`, its real file, and (for a script) its interpreter and the
    packages that interpreter loads: together they decide what `invoked` prints."""
    real = os.path.realpath(invoked)
    if _is_dispatcher(invoked, real):
        raise _Unfingerprintable(f"{invoked} is a version manager's launcher")
    parts = [_identity(real)]
    go_env = _go_env_file(effective)
    if os.path.basename(real) == "go" and os.path.exists(go_env):
        parts.append(_identity(go_env))
    words = _shebang(real)
    if words is None:
        return parts
    interpreter = _interpreter(words, search)
    name = os.path.basename(interpreter)
    if _PYTHON_NAME.match(name) is None and name not in _NODE_NAMES:
        # A shell wrapper may pick its tool from anything; only known interpreters are pinned.
        raise _Unfingerprintable(f"{invoked} runs under {name}")
    interpreter_real = os.path.realpath(interpreter)
    if _is_dispatcher(interpreter, interpreter_real) or _shebang(interpreter_real) is not None:
        raise _Unfingerprintable(f"{interpreter} is not a plain interpreter binary")
    parts.append(_identity(interpreter_real))
    if name in _NODE_NAMES:
        package = _node_package_json(real)
        parts.extend([_identity(package)] if package else [])
    else:
        parts.extend(_identity(d) for d in _python_package_dirs(interpreter, effective))
    return parts


def fingerprint(
    binary: str, *, env: Mapping[str, str] | None = None, module: str | None = None
) -> list[_Part] | None:
    """Identities of everything that decides what `binary` (or `binary -m module`) reports
    as its version; None when that cannot be pinned down (then always probe)."""
    effective = _effective_env(env)
    try:
        parts = _program_parts(binary, search_path(env), effective)
        if module is not None:
            parts.extend(_identity(d) for d in _python_package_dirs(binary, effective))
    except _Unfingerprintable:
        return None
    return parts


def settled(parts: list[_Part], started_ns: int) -> bool:
    """Whether every part was last changed well before `started_ns` (see `RACY_WINDOW_NS`)."""
    limit = started_ns - RACY_WINDOW_NS
    return all(max(mtime, ctime) < limit for *_, mtime, ctime in parts)


def record_key(
    tool: str, toolchain: Toolchain, binary: str, module: str | None, env: Mapping[str, str] | None
) -> str:
    """The record key: which tool, run how, from which binary, under which steering env."""
    from assay.build_identity import assay_build

    material = [
        PROBE_RECORD_SCHEMA,
        assay_build(),  # a changed assay may read versions differently
        tool,
        module,
        binary,
        list(toolchain.version_args),
        toolchain.version_pattern.pattern,
        _steering_env(_effective_env(env)),
    ]
    import hashlib  # the record is opened only when a known tool is probed
    import json

    return hashlib.sha256(json.dumps(material).encode()).hexdigest()


class PersistentProbes:
    """Versions probed by earlier runs, in SQLite (WAL) under the per-user cache directory.

    Every failure to read or write is a miss: the caller then probes, as without a record."""

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        if directory is None:
            directory = default_cache_dir()
        self.directory = Path(directory)
        self.path = self.directory / PROBE_STORE_NAME

    def lookup(self, key: str, parts: list[_Part]) -> str | None:
        """The version stored for `key` with exactly this fingerprint, or None."""
        import sqlite3

        try:
            with closing(self._connect()) as db:
                row = db.execute(
                    "SELECT version FROM probes WHERE key = ? AND fingerprint = ?",
                    (key, _encode(parts)),
                ).fetchone()
        except (sqlite3.Error, OSError):
            return None
        if row is None or not isinstance(row[0], str) or not row[0]:
            return None
        return row[0]

    def record(self, key: str, parts: list[_Part], version: str) -> None:
        """Remember `version` for `key` and this fingerprint (best effort), bounded in size."""
        import sqlite3

        try:
            with closing(self._connect()) as db, db:
                db.execute(
                    "INSERT OR REPLACE INTO probes (key, fingerprint, version, stored_at)"
                    " VALUES (?, ?, ?, ?)",
                    (key, _encode(parts), version, time.time()),
                )
                db.execute(
                    "DELETE FROM probes WHERE key NOT IN"
                    " (SELECT key FROM probes ORDER BY stored_at DESC LIMIT ?)",
                    (PROBE_STORE_MAX_ENTRIES,),
                )
        except (sqlite3.Error, OSError):
            pass  # not remembering costs one probe next run; it never costs correctness

    def _connect(self) -> sqlite3.Connection:
        """An open connection with the table in place."""
        import sqlite3  # imported where used: `assay run` on an unknown tool never opens it

        self.directory.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=PROBE_STORE_BUSY_S)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS probes (key TEXT PRIMARY KEY,"
                " fingerprint TEXT NOT NULL, version TEXT NOT NULL, stored_at REAL NOT NULL)"
            )
        except BaseException:
            db.close()
            raise
        return db


def _encode(parts: list[_Part]) -> str:
    """A fingerprint as the exact text compared on lookup."""
    import json  # only a known tool's probe is recorded: a bare run never loads it

    return json.dumps(parts, separators=(",", ":"))

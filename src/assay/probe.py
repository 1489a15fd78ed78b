"""Identifying a tool before trusting its verdict: find the binary, run its version command.

Exceptions (catch `ProbeFailure` for "no checker could be identified"):

    ProbeFailure
     +-- ToolchainError   nothing to run was found: the toolchain is missing
     +-- ProbeError       a binary was found but did not say which version it is

Both are distinct from "a step ran and failed": they mean the code under test was
never looked at, so the caller reports `unverified` / `toolchain_missing`.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import shutil
import sqlite3
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from assay.evidence import CheckerId
from assay.process import CommandRunner, InvalidRun, ProcessResult, run_process
from assay.toolchains import Language, Toolchain, generic_toolchain, toolchain_for

#: Deadline for a version command. Short: `--version` that takes longer is not identifying itself.
PROBE_TIMEOUT_S = 10.0


class ProbeFailure(Exception):
    """No checker could be identified for a tool; nothing about the code was learned."""

    tool: str
    install_hint: str


class ToolchainError(ProbeFailure):
    """None of the binaries for a tool is installed (or the explicit path does not exist)."""

    def __init__(
        self, language: Language, binary: str, candidates: Sequence[str], install_hint: str = ""
    ) -> None:
        self.language = language
        self.binary = binary
        self.tool = binary
        self.candidates = tuple(candidates)
        self.install_hint = install_hint or f"install {binary} or put it on PATH"
        tried = ", ".join(self.candidates) or binary
        super().__init__(
            f"{language.value} toolchain missing: no {binary} found (tried {tried}); "
            f"{self.install_hint}"
        )


class ProbeError(ProbeFailure):
    """A binary was found but its version command failed or printed no version."""

    def __init__(self, tool: str, path: str, detail: str, result: ProcessResult | None = None):
        self.tool = tool
        self.path = path
        self.detail = detail
        self.result = result
        self.install_hint = f"check that {path} is a working {tool}"
        super().__init__(f"could not identify {tool} at {path}: {detail}")


def search_path(env: Mapping[str, str] | None) -> str:
    """The PATH a child started with overlay `env` would search."""
    if env is not None and "PATH" in env:
        return env["PATH"]
    return os.environ.get("PATH", os.defpath)


def find_binary(toolchain: Toolchain, env: Mapping[str, str] | None = None) -> str | None:
    """The absolute path of the first candidate on PATH, or None."""
    path = search_path(env)
    for candidate in toolchain.candidates:
        found = shutil.which(candidate, path=path)
        if found is not None:
            return os.path.abspath(found)
    return None


def probe(
    tool: str,
    *,
    path: str | None = None,
    env: Mapping[str, str] | None = None,
    module: str | None = None,
) -> CheckerId:
    """Identify `tool`: the binary at `path` (or the first candidate on PATH), and its version.

    With `module`, `path` is a Python interpreter and the version comes from
    `path -m module --version` (the tool as `python -m pytest` would run it).
    Raises `ToolchainError` when there is nothing to run, `ProbeError` when what
    was found would not say its version.
    """
    known = toolchain_for(tool)
    toolchain = known or generic_toolchain(tool)
    binary = _resolve(toolchain, path, env)
    if known is None and module is None:
        return identify_by_digest(tool, binary)
    return run_version_command(tool, toolchain, binary, env=env, module=module)


def run_version_command(
    tool: str,
    toolchain: Toolchain,
    binary: str,
    *,
    env: Mapping[str, str] | None = None,
    module: str | None = None,
    confinement: Confinement | None = None,
) -> CheckerId:
    """Run `binary`'s version command (or `binary -m module --version`) and read the version.

    A binary inside `confinement.root` belongs to the code under test: its version command
    runs through the confinement's runner (the sandbox), never directly on the host."""
    argv = [binary, "-m", module, "--version"] if module else [binary, *toolchain.version_args]
    try:
        if confinement is not None and confinement.contains(binary):
            result = confinement.runner(
                argv, cwd=str(confinement.root), timeout=PROBE_TIMEOUT_S, env=env
            )
        else:
            # A neutral directory: a version command must not read (or be steered by) a workspace.
            result = run_process(argv, cwd=tempfile.gettempdir(), timeout=PROBE_TIMEOUT_S, env=env)
    except InvalidRun as exc:
        raise ProbeError(tool, binary, str(exc)) from exc
    if result.start_failure is not None:
        raise ProbeError(tool, binary, result.start_error or result.start_failure.value, result)
    if result.timed_out:
        raise ProbeError(
            tool, binary, f"version command timed out after {PROBE_TIMEOUT_S}s", result
        )
    if result.exit_code != 0:
        detail = f"{' '.join(argv[1:])} exited {result.exit_code}"
        if result.signal is not None:
            detail = f"{' '.join(argv[1:])} was killed by signal {result.signal}"
        raise ProbeError(tool, binary, detail, result)
    version = toolchain.extract_version(result.stdout.text + "\n" + result.stderr.text)
    if version is None:
        raise ProbeError(tool, binary, "version output has no version number", result)
    return CheckerId(tool=tool, version=version, path=binary)


@dataclass(frozen=True, slots=True)
class Confinement:
    """Where untrusted binaries live (a workspace) and the runner that confines them."""

    root: Path
    runner: CommandRunner

    def contains(self, binary: str) -> bool:
        """Whether `binary`, as it will be invoked (links not followed), lies under `root`."""
        path = Path(os.path.abspath(binary))
        root = Path(os.path.abspath(self.root))
        return path == root or root in path.parents


#: Bytes of a file read to identify it; beyond that, its size stands in for the rest.
DIGEST_MAX_BYTES = 64 * 1024 * 1024


def identify_by_digest(tool: str, binary: str) -> CheckerId:
    """Identify a tool assay does not know by the content of its file, not by running it:
    `X --version` on an arbitrary project script (`./test.sh`) would execute that script."""
    digest = hashlib.sha256()
    try:
        with open(binary, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            remaining = DIGEST_MAX_BYTES
            while remaining > 0 and (chunk := f.read(min(1 << 20, remaining))):
                digest.update(chunk)
                remaining -= len(chunk)
    except OSError as exc:
        raise ProbeError(tool, binary, f"could not read it to identify it: {exc.strerror or exc}") from exc
    digest.update(str(size).encode())
    return CheckerId(tool=tool, version=f"sha256:{digest.hexdigest()[:16]}", path=binary)


def _resolve(toolchain: Toolchain, path: str | None, env: Mapping[str, str] | None) -> str:
    if path is None:
        found = find_binary(toolchain, env)
        if found is None:
            raise ToolchainError(
                toolchain.language, toolchain.tool, toolchain.candidates, toolchain.install_hint
            )
        return found
    if os.sep not in path:  # a bare name: look it up the way the child would
        found = shutil.which(path, path=search_path(env))
        if found is None:
            raise ToolchainError(toolchain.language, path, (path,), toolchain.install_hint)
        return os.path.abspath(found)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise ToolchainError(toolchain.language, path, (path,), toolchain.install_hint)
    return os.path.abspath(path)


# -- the persistent probe record --------------------------------------------------------------
#
# A version is remembered across runs only for a binary that is provably unchanged: the
# stored answer is used when every file and directory that decides the version still has
# exactly the identity (device, inode, size, mtime, ctime) it had when it was probed.

#: Set to a non-empty value other than "0" to probe every tool on every run.
NO_PROBE_CACHE_VAR = "ASSAY_NO_PROBE_CACHE"
#: The probe record's file in the cache directory (next to the verdict cache).
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
STEERING_ENV_PREFIXES = (
    "PYTHON", "RUSTUP", "CARGO", "RUSTC", "GO", "NODE", "NPM_CONFIG", "VOLTA", "PYENV",
    "ASDF", "MISE", "RTX", "VIRTUAL_ENV", "LD_LIBRARY_PATH", "LD_PRELOAD",
)
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
    try:
        with open(real, "rb") as f:
            head = f.read(SHEBANG_MAX_BYTES)
    except OSError as exc:
        raise _Unfingerprintable(f"cannot read {real}: {exc}") from exc
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
    try:
        text = Path(cfg).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise _Unfingerprintable(f"cannot read {cfg}: {exc}") from exc
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


def _program_parts(
    invoked: str, search: str, effective: Mapping[str, str]
) -> list[_Part]:
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


def _settled(parts: list[_Part], started_ns: int) -> bool:
    """Whether every part was last changed well before `started_ns` (see `RACY_WINDOW_NS`)."""
    limit = started_ns - RACY_WINDOW_NS
    return all(max(mtime, ctime) < limit for *_, mtime, ctime in parts)


def _record_key(
    tool: str, toolchain: Toolchain, binary: str, module: str | None, env: Mapping[str, str] | None
) -> str:
    """The record key: which tool, run how, from which binary, under which steering env."""
    from assay._version import __version__

    material = [
        PROBE_RECORD_SCHEMA,
        __version__,  # a new assay may read versions differently
        tool,
        module,
        binary,
        list(toolchain.version_args),
        toolchain.version_pattern.pattern,
        _steering_env(_effective_env(env)),
    ]
    return hashlib.sha256(json.dumps(material).encode()).hexdigest()


class PersistentProbes:
    """Versions probed by earlier runs, in SQLite (WAL) under the per-user cache directory.

    Every failure to read or write is a miss: the caller then probes, as without a record."""

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        if directory is None:
            from assay.cache import default_cache_dir

            directory = default_cache_dir()
        self.directory = Path(directory)
        self.path = self.directory / PROBE_STORE_NAME

    def lookup(self, key: str, parts: list[_Part]) -> str | None:
        """The version stored for `key` with exactly this fingerprint, or None."""
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
    return json.dumps(parts, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class _Key:
    tool: str
    path: str | None
    module: str | None
    search_path: str


class ProbeCache:
    """Probe results for one run: each (tool, binary) is probed at most once, even when
    many threads ask at the same time; failures are cached too, so a missing tool is
    not searched for again by every check that needs it.

    With `persistent` (the default, unless `ASSAY_NO_PROBE_CACHE` is set) a version is
    also answered from the record of earlier runs when the binary is provably unchanged
    (`fingerprint`); failures are never recorded."""

    def __init__(
        self,
        persistent: bool = True,
        *,
        store: PersistentProbes | None = None,
        confinement: Confinement | None = None,
    ) -> None:
        self._confinement = confinement
        """Version commands of binaries inside it run through its runner (see `Confinement`)."""
        self._lock = threading.Lock()
        self._entries: dict[_Key, Future[CheckerId]] = {}
        self._store = None
        if persistent and not probe_cache_disabled():
            self._store = store if store is not None else PersistentProbes()
        self.probes_run = 0
        """How many distinct tools this cache identified (or failed to), from disk or not."""
        self.commands_run = 0
        """How many identifications this cache made by probing (not from the record)."""
        self.persisted_hits = 0
        """How many identifications the persistent record answered without running anything."""

    def get(
        self,
        tool: str,
        *,
        path: str | None = None,
        env: Mapping[str, str] | None = None,
        module: str | None = None,
    ) -> CheckerId:
        """Like `probe`, but answered from the cache after the first call."""
        key = _Key(tool, path, module, search_path(env))
        with self._lock:
            future = self._entries.get(key)
            owner = future is None
            if future is None:
                future = self._entries[key] = Future()
                self.probes_run += 1
        if owner:
            try:
                future.set_result(self._identify(tool, path=path, env=env, module=module))
            except BaseException as exc:
                # Waiting threads see the same failure instead of hanging on the future.
                future.set_exception(exc)
        return future.result()

    def _identify(
        self, tool: str, *, path: str | None, env: Mapping[str, str] | None, module: str | None
    ) -> CheckerId:
        """The checker for one key: from the persistent record if it can vouch, else probed."""
        known = toolchain_for(tool)
        toolchain = known or generic_toolchain(tool)
        try:
            binary = _resolve(toolchain, path, env)
        except ToolchainError:
            self._count_probe()
            raise
        if known is None and module is None:
            self._count_probe()
            return identify_by_digest(tool, binary)
        if self._store is None:
            self._count_probe()
            return run_version_command(
                tool, toolchain, binary, env=env, module=module, confinement=self._confinement
            )
        return self._identify_binary(tool, toolchain, binary, env, module, self._store)

    def _identify_binary(
        self,
        tool: str,
        toolchain: Toolchain,
        binary: str,
        env: Mapping[str, str] | None,
        module: str | None,
        store: PersistentProbes,
    ) -> CheckerId:
        """Answer from `store` when the fingerprint matches exactly; otherwise probe and
        record the answer if the binary provably stayed the same while it was probed."""
        started_ns = time.time_ns()
        before = fingerprint(binary, env=env, module=module)
        record_key = _record_key(tool, toolchain, binary, module, env)
        if before is not None:
            version = store.lookup(record_key, before)
            if version is not None:
                with self._lock:
                    self.persisted_hits += 1
                return CheckerId(tool=tool, version=version, path=binary)
        self._count_probe()
        checker = run_version_command(
            tool, toolchain, binary, env=env, module=module, confinement=self._confinement
        )
        # Recorded only if nothing changed during the probe and nothing is racily new.
        if before is None or not _settled(before, started_ns):
            return checker
        if fingerprint(binary, env=env, module=module) == before:
            store.record(record_key, before, checker.version)
        return checker

    def _count_probe(self) -> None:
        """Note one identification made by probing rather than from the record."""
        with self._lock:
            self.commands_run += 1

    def known(self) -> dict[str, CheckerId]:
        """Checkers identified so far, by tool (the last one probed wins for a tool name)."""
        with self._lock:
            done = [f for f in self._entries.values() if f.done() and f.exception() is None]
        return {c.tool: c for c in (f.result() for f in done)}


def probe_all(
    cache: ProbeCache | None = None, env: Mapping[str, str] | None = None
) -> dict[str, CheckerId | ProbeFailure]:
    """Every tool in the registry, identified or with the reason it could not be (`assay probe`)."""
    from assay.toolchains import TOOLCHAINS

    cache = cache if cache is not None else ProbeCache()
    found: dict[str, CheckerId | ProbeFailure] = {}
    for tool in TOOLCHAINS:
        try:
            found[tool] = cache.get(tool, env=env)
        except ProbeFailure as failure:
            found[tool] = failure
    return found

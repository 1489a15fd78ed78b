"""Identifying a tool before trusting its verdict: find the binary, run its version command.

Exceptions (catch `ProbeFailure` for "no checker could be identified"):

    ProbeFailure
     +-- ToolchainError   nothing to run was found: the toolchain is missing
     +-- ProbeError       a binary was found but did not say which version it is

Both are distinct from "a step ran and failed": they mean the code under test was
never looked at, so the caller reports `unverified` / `toolchain_missing`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from assay.errors import AssayError
from assay.evidence import CheckerId
from assay.probe_record import (
    PersistentProbes,
    fingerprint,
    probe_cache_disabled,
    record_key,
    search_path,
    settled,
)
from assay.pyenv_shim import resolve_shim
from assay.signal_waits import wait_for
from assay.toolchains import Toolchain, generic_toolchain, toolchain_for
from assay.tools import ecosystem_spec
from assay.tools.index import Ecosystem

if TYPE_CHECKING:
    from assay.process import CommandRunner, ProcessResult

#: Deadline for a version command. Short: `--version` that takes longer is not identifying itself.
PROBE_TIMEOUT_S = 10.0


class ProbeFailure(AssayError):
    """No checker could be identified for a tool; nothing about the code was learned."""

    tool: str
    install_hint: str


class ToolchainError(ProbeFailure):
    """None of the binaries for a tool is installed (or the explicit path does not exist)."""

    def __init__(
        self,
        ecosystem: Ecosystem,
        binary: str,
        candidates: Sequence[str],
        install_hint: str = "",
    ) -> None:
        self.ecosystem = ecosystem
        self.binary = binary
        self.tool = binary
        self.candidates = tuple(candidates)
        self.install_hint = install_hint or f"install {binary} or put it on PATH"
        tried = ", ".join(self.candidates) or binary
        label = ecosystem_spec(ecosystem).label
        whose = f"{label} toolchain missing: " if label != "unknown" else ""  # a generic tool's
        super().__init__(f"{whose}no {binary} found (tried {tried}); {self.install_hint}")


class ProbeError(ProbeFailure):
    """A binary was found but its version command failed or printed no version."""

    def __init__(self, tool: str, path: str, detail: str, result: ProcessResult | None = None):
        self.tool = tool
        self.path = path
        self.detail = detail
        self.result = result
        self.install_hint = f"check that {path} is a working {tool}"
        if result is not None and result.start_failure is not None and result.start_error:
            # It never started: what the sandbox said (not there, and why where it knows).
            self.install_hint = result.start_error
        super().__init__(f"could not identify {tool} at {path}: {detail}")


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
    cwd: str | None = None,
) -> CheckerId:
    """Identify `tool`: the binary at `path` (or the first candidate on PATH), and its version.

    With `module`, `path` is a Python interpreter and the version comes from
    `path -m module --version` (the tool as `python -m pytest` would run it).
    `cwd` is where the tool will run (a version manager's shim may choose by it; default:
    here). Raises `ToolchainError` when there is nothing to run, `ProbeError` when what
    was found would not say its version. Nothing is read from or kept in any record.
    """
    return ProbeCache(persistent=False).get(tool, path=path, env=env, module=module, cwd=cwd)


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
    # `python -m tool` as checks start it: no file of the working tree can answer for the tool.
    asked = [binary, *(("-m", module) if module else ()), *toolchain.version_args]
    argv = asked
    # Here: a cache hit finds binaries through this module and runs none.
    from assay.process import InvalidRun, run_process

    if module:
        from assay.tools.python import unshadowed  # only a module's probe needs python's tools

        argv = list(unshadowed(asked))
    try:
        if confinement is not None and confinement.contains(binary):
            result = confinement.runner(
                argv, cwd=str(confinement.root), timeout=PROBE_TIMEOUT_S, env=env
            )
        else:
            # A neutral directory and none of the check's variables: on the host, a version
            # command must not read a workspace or be steered by the repository
            # (`PYTHONPATH=src` would import the repository's own `pytest` here).
            host_env = None if confinement is not None else env
            result = run_process(
                argv, cwd=tempfile.gettempdir(), timeout=PROBE_TIMEOUT_S, env=host_env
            )
    except InvalidRun as exc:
        raise ProbeError(tool, binary, str(exc)) from exc
    if result.start_failure is not None:
        raise ProbeError(tool, binary, result.start_error or result.start_failure.value, result)
    if result.timed_out:
        raise ProbeError(
            tool, binary, f"version command timed out after {PROBE_TIMEOUT_S}s", result
        )
    if result.exit_code != 0:
        # Said as asked (`-m pytest --version`), not as the bootstrap that starts it.
        detail = f"{' '.join(asked[1:])} exited {result.exit_code}"
        if result.signal is not None:
            detail = f"{' '.join(asked[1:])} was killed by signal {result.signal}"
        if said := _last_line(result.stderr.text or result.stdout.text):
            detail = f"{detail}: {said}"
        raise ProbeError(tool, binary, detail, result)
    version = toolchain.extract_version(result.stdout.text + "\n" + result.stderr.text)
    if version is None:
        raise ProbeError(tool, binary, "version output has no version number", result)
    return CheckerId(tool=tool, version=version, path=binary)


#: Characters of a failed version command's last line quoted in its error.
QUOTED_LINE_MAX = 300


def _last_line(output: str) -> str:
    """The last non-blank line a failed version command printed (its error, usually)."""
    line = next((ln.strip() for ln in reversed(output.splitlines()) if ln.strip()), "")
    return line if len(line) <= QUOTED_LINE_MAX else line[: QUOTED_LINE_MAX - 3] + "..."


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
    import hashlib  # only unknown tools need it

    digest = hashlib.sha256()
    try:
        with open(binary, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            remaining = DIGEST_MAX_BYTES
            while remaining > 0 and (chunk := f.read(min(1 << 20, remaining))):
                digest.update(chunk)
                remaining -= len(chunk)
    except OSError as exc:
        raise ProbeError(
            tool, binary, f"could not read it to identify it: {exc.strerror or exc}"
        ) from exc
    digest.update(str(size).encode())
    return CheckerId(tool=tool, version=f"sha256:{digest.hexdigest()[:16]}", path=binary)


def _resolve(toolchain: Toolchain, path: str | None, env: Mapping[str, str] | None) -> str:
    if path is None:
        found = find_binary(toolchain, env)
        if found is None:
            raise ToolchainError(
                toolchain.ecosystem, toolchain.tool, toolchain.candidates, toolchain.install_hint
            )
        return found
    if os.sep not in path:  # a bare name: look it up the way the child would
        found = shutil.which(path, path=search_path(env))
        if found is None:
            raise ToolchainError(toolchain.ecosystem, path, (path,), toolchain.install_hint)
        return os.path.abspath(found)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise ToolchainError(toolchain.ecosystem, path, (path,), toolchain.install_hint)
    return os.path.abspath(path)


def _through_shim(binary: str, env: Mapping[str, str] | None, cwd: str | None) -> str:
    """The binary a pyenv shim would run (chosen by the files and variables it reads, read
    here; the shim itself is not run), or `binary` itself. That one is probed and recorded
    under its own identity: probing through the shim costs dozens of shell executions, and
    a shim can never vouch for a recorded answer."""
    target = resolve_shim(binary, cwd=cwd or os.getcwd(), env={**os.environ, **(env or {})})
    return binary if target is None else target.binary


class _Pending:
    """One identification, shared by every thread that asks for the same key meanwhile."""

    __slots__ = ("_done", "_error", "value")

    def __init__(self) -> None:
        self._done = threading.Event()
        self._error: BaseException | None = None
        self.value: CheckerId | None = None

    def resolve(self, checker: CheckerId) -> None:
        self.value = checker
        self._done.set()

    def fail(self, error: BaseException) -> None:
        self._error = error
        self._done.set()

    def result(self) -> CheckerId:
        wait_for(self._done)  # in slices: see `assay.signal_waits`
        if self._error is not None:
            raise self._error
        assert self.value is not None
        return self.value


@dataclass(frozen=True, slots=True)
class _Key:
    """What decides which binary answers and what it says: one identification each."""

    tool: str
    path: str | None
    module: str | None
    search_path: str
    env: tuple[tuple[str, str], ...]
    """The overlay itself: with the same PATH, a different PYTHONPATH can mean another version."""
    cwd: str | None
    """Where the tool runs: a pyenv shim picks its version by the `.python-version` above it."""


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
        self._entries: dict[_Key, _Pending] = {}
        self._persistent = persistent and not probe_cache_disabled()
        self._store = store if self._persistent else None
        """Opened on first need: identifying an unknown tool by digest never needs it."""
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
        cwd: str | None = None,
    ) -> CheckerId:
        """Like `probe`, but answered from the cache after the first call."""
        env_items = tuple(sorted((env or {}).items()))
        key = _Key(tool, path, module, search_path(env), env_items, cwd)
        with self._lock:
            pending = self._entries.get(key)
            owner = pending is None
            if pending is None:
                pending = self._entries[key] = _Pending()
                self.probes_run += 1
        if owner:
            try:
                pending.resolve(self._identify(tool, path=path, env=env, module=module, cwd=cwd))
            except BaseException as exc:
                # Waiting threads see the same failure instead of hanging on it.
                pending.fail(exc)
        return pending.result()

    def _identify(
        self,
        tool: str,
        *,
        path: str | None,
        env: Mapping[str, str] | None,
        module: str | None,
        cwd: str | None,
    ) -> CheckerId:
        """The checker for one key: from the persistent record if it can vouch, else probed."""
        known = toolchain_for(tool)
        toolchain = known or generic_toolchain(tool)
        try:
            binary = _through_shim(_resolve(toolchain, path, env), env, cwd)
        except ToolchainError:
            self._count_probe()
            raise
        if known is None and module is None:
            self._count_probe()
            return identify_by_digest(tool, binary)
        store = self._open_store()
        if store is None:
            self._count_probe()
            return run_version_command(
                tool, toolchain, binary, env=env, module=module, confinement=self._confinement
            )
        return self._identify_binary(tool, toolchain, binary, env, module, store)

    def _open_store(self) -> PersistentProbes | None:
        with self._lock:
            if self._persistent and self._store is None:
                self._store = PersistentProbes()
            return self._store

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
        key = record_key(tool, toolchain, binary, module, env)
        if before is not None:
            version = store.lookup(key, before)
            if version is not None:
                with self._lock:
                    self.persisted_hits += 1
                return CheckerId(tool=tool, version=version, path=binary)
        self._count_probe()
        checker = run_version_command(
            tool, toolchain, binary, env=env, module=module, confinement=self._confinement
        )
        # Recorded only if nothing changed during the probe and nothing is racily new.
        if before is None or not settled(before, started_ns):
            return checker
        if fingerprint(binary, env=env, module=module) == before:
            store.record(key, before, checker.version)
        return checker

    def _count_probe(self) -> None:
        """Note one identification made by probing rather than from the record."""
        with self._lock:
            self.commands_run += 1

    def known(self) -> dict[str, CheckerId]:
        """Checkers identified so far, by tool (the last one probed wins for a tool name)."""
        with self._lock:
            pending = list(self._entries.values())
        return {c.tool: c for c in (p.value for p in pending) if c is not None}


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

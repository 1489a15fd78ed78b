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
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass

from assay.evidence import CheckerId
from assay.process import InvalidRun, ProcessResult, run_process
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
    argv = [binary, "-m", module, "--version"] if module else [binary, *toolchain.version_args]
    try:
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


#: Bytes of a file read to identify it; beyond that, its size stands in for the rest.
DIGEST_MAX_BYTES = 64 * 1024 * 1024


def identify_by_digest(tool: str, binary: str) -> CheckerId:
    """Identify a tool assay does not know by the content of its file, not by running it:
    `X --version` on an arbitrary project script (`./test.sh`) would execute that script."""
    import hashlib

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


@dataclass(frozen=True, slots=True)
class _Key:
    tool: str
    path: str | None
    module: str | None
    search_path: str


class ProbeCache:
    """Probe results for one run: each (tool, binary) is probed at most once, even when
    many threads ask at the same time; failures are cached too, so a missing tool is
    not searched for again by every check that needs it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[_Key, Future[CheckerId]] = {}
        self.probes_run = 0
        """How many version commands this cache actually ran."""

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
                future.set_result(probe(tool, path=path, env=env, module=module))
            except BaseException as exc:
                # Waiting threads see the same failure instead of hanging on the future.
                future.set_exception(exc)
        return future.result()

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

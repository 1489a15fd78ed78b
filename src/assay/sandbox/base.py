"""The `Sandbox` seam: a workspace's lifecycle (provision, run, read/write, clean up).

Errors, and when to catch each::

    SandboxError                 anything this package raises; catch to degrade a run
    ├── SandboxUnavailable       the backend cannot run commands here at all (probe failed):
    │                            checks are `inconclusive` / `sandbox_unavailable`, never run
    │                            elsewhere in its place
    ├── ProvisionError           the workspace could not be made; nothing ran
    └── CleanupError             the workspace could not be removed; the run's result stays,
                                 but the run is an error

A command that ran and failed is none of these: it is a `ProcessResult`.
"""

from __future__ import annotations

import abc
import contextlib
import errno
import os
import posixpath
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from assay.errors import AssayError
from assay.untrusted_files import DEFAULT_MAX_BYTES, read_untrusted

if TYPE_CHECKING:
    from assay.process import CommandRunner, ProcessResult
    from assay.sandbox.provision import ProvisionRecord


class SandboxError(AssayError):
    """Base of every error a sandbox raises."""

    def __init__(self, message: str, *, backend: str) -> None:
        super().__init__(message)
        self.backend = backend
        """The backend that raised (`bwrap`, `local`, `none`)."""


class SandboxUnavailable(SandboxError):
    """The backend cannot run anything on this machine; commands were not run.

    `note` says how to fix it, or how to opt into a weaker backend explicitly:
    assay never downgrades on its own.
    """

    def __init__(self, message: str, *, backend: str, note: str) -> None:
        super().__init__(message, backend=backend)
        self.note = note

    def __str__(self) -> str:
        return f"{self.args[0]} -- {self.note}"


class ProvisionError(SandboxError):
    """The workspace could not be created from its source."""


class CleanupError(SandboxError):
    """The workspace could not be removed."""


@dataclass(frozen=True, slots=True)
class Workspace:
    """One provisioned sandbox instance."""

    run_id: str
    """Unique id of this instance; names its scratch directories."""
    path: Path
    """The workspace directory as the host sees it (and, for every backend, as commands do)."""
    base_commit: str | None = None
    """The commit it was made from, when the source was a git repository at a commit."""
    owned: bool = True
    """Whether cleanup removes `path` (False for `none`, which runs in place)."""
    provisioned: ProvisionRecord | None = None
    """How it was made (where, what was linked or left out); None when nothing was copied.
    Fixed at provisioning: what the code under test does to the workspace never changes it."""


def new_run_id() -> str:
    # 64 random bits, as hex: `uuid` would bring `platform`, costly on every run's start.
    return os.urandom(8).hex()


class Sandbox(abc.ABC):
    """A place to run untrusted commands against a copy of some code."""

    #: Backend name, as `--sandbox` spells it.
    name: str = "abstract"

    @abc.abstractmethod
    def describe(self) -> str:
        """Backend name and version for evidence (`bwrap 0.8.0`, `local`, `none`).

        Raises `SandboxUnavailable` when the backend cannot run here.
        """

    def with_network(self) -> Sandbox:
        """The same backend with network access, for steps that must download (installs).

        Backends without network isolation are already online and return themselves."""
        return self

    def ensure_available(self) -> None:
        """Raise `SandboxUnavailable` unless commands can run; probes at most once."""

    @abc.abstractmethod
    def provision(self, source: str | os.PathLike[str], *, commit: str | None = None) -> Workspace:
        """Make a workspace from a directory, or from a git repository at `commit`."""

    def provision_in_place(self, source: str | os.PathLike[str]) -> Workspace:
        """`source` itself as the workspace, for a command the user runs in their own
        directory (`assay run`): nothing copied, nothing removed at cleanup. A backend whose
        only confinement is its copy (`local`) makes the copy all the same."""
        return self.provision(source)

    @abc.abstractmethod
    def runner(self, workspace: Workspace) -> CommandRunner:
        """The `CommandRunner` that runs commands inside `workspace`.

        The runner never raises for what a command does; a sandbox that refuses at
        run time is reported as a start failure, never as the command's exit.
        """

    def limits_in_force(self, workspace: Workspace) -> dict[str, object]:
        """For evidence: the limits commands in `workspace` run under, and what enforces them."""
        return {"boundary": False, "note": f"the {self.name} backend is not a security boundary"}

    def reclaim(self, workspace: Workspace) -> None:
        """Make files the host wrote into `workspace` usable by its commands again."""

    def hold(self, workspace: Workspace, directories: Sequence[str]) -> bool:
        """Show each of `directories` (relative to `workspace`) read-only to every command
        run in it from now on, with the empty private caches a tool writes there
        (`source_layout.ENV_WRITABLE_CACHES`); False when this backend cannot (its commands
        see the files as the host does)."""
        return False

    @abc.abstractmethod
    def cleanup(self, workspace: Workspace) -> None:
        """Remove the workspace; raises `CleanupError` when that fails."""

    def run(
        self,
        workspace: Workspace,
        argv: Sequence[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        no_output_timeout: float | None = None,
    ) -> ProcessResult:
        """Run one command in `workspace` (`cwd` relative to it, or absolute inside it)."""
        return self.runner(workspace)(
            argv,
            cwd=str(resolve_inside(workspace, cwd)),
            env=env,
            timeout=timeout,
            no_output_timeout=no_output_timeout,
        )

    def read_file(
        self, workspace: Workspace, relpath: str, *, limit: int = DEFAULT_MAX_BYTES
    ) -> bytes:
        """The bytes of `relpath`, read as a file the code under test chose: no link on
        the way is followed, a FIFO or device is never read, nothing past `limit` bytes.

        Raises `FileNotFoundError` when nothing is there, and `ValueError` when the path
        leaves the workspace or what is there is not a plain file within `limit`.
        """
        rel = _relative_inside(workspace, relpath)
        data = read_untrusted(workspace.path, rel, limit=limit, what=relpath)
        if data is None:
            raise FileNotFoundError(errno.ENOENT, "no such file in the workspace", relpath)
        if isinstance(data, bytes):
            return data
        raise ValueError(data.reason)

    def write_file(self, workspace: Workspace, relpath: str, data: bytes) -> None:
        """Write `relpath`; a link found there is replaced, never written through.

        Only the parent is resolved: resolving the path itself would follow a link the
        code under test planted and write to wherever it points instead.
        """
        name = Path(relpath).name
        if name in ("", ".", ".."):
            raise ValueError(f"path {relpath!r} does not name a file")
        parent = resolve_inside(workspace, Path(relpath).parent)
        parent.mkdir(parents=True, exist_ok=True)
        target = parent / name
        if target.is_symlink():
            target.unlink()
        target.write_bytes(data)

    @contextlib.contextmanager
    def workspace(
        self, source: str | os.PathLike[str], *, commit: str | None = None
    ) -> Iterator[Workspace]:
        """Provision, yield, and always clean up.

        A cleanup failure raises `CleanupError` after a clean body; after a failed
        body it is attached to that error as a note instead, so it never masks it.
        """
        ws = self.provision(source, commit=commit)
        try:
            yield ws
        except BaseException as body_error:
            self.cleanup_after(ws, body_error)
            raise
        self.cleanup(ws)

    def cleanup_after(self, workspace: Workspace, error: BaseException) -> None:
        """`cleanup` while `error` propagates: a `CleanupError` becomes a note on `error`."""
        try:
            self.cleanup(workspace)
        except CleanupError as cleanup_error:
            error.add_note(f"and cleanup failed: {cleanup_error}")


def sandbox_uid(sandbox: Sandbox | None) -> int | None:
    """The uid `sandbox` runs checks as when that is a uid of their own (not this
    process's): the uid protected files are locked against. None otherwise (no sandbox)."""
    uid = getattr(sandbox, "uid", None)
    if os.geteuid() != 0 or not isinstance(uid, int) or isinstance(uid, bool) or uid <= 0:
        return None
    return uid


def _relative_inside(workspace: Workspace, relpath: str | os.PathLike[str]) -> str:
    """`relpath` as a `/`-separated path below the workspace, judged by its text alone
    (nothing on disk is looked at, so no link is followed to judge it)."""
    path = Path(relpath)
    if path.is_absolute():
        try:
            path = path.relative_to(workspace.path)
        except ValueError:
            raise ValueError(f"path {relpath!r} is outside the workspace") from None
    rel = posixpath.normpath(path.as_posix())
    if rel in (".", "..") or rel.startswith(("../", "/")):
        raise ValueError(f"path {relpath!r} is outside the workspace {workspace.path}")
    return rel


def resolve_inside(workspace: Workspace, relpath: str | os.PathLike[str] | None) -> Path:
    """`relpath` resolved against the workspace; refuses paths that leave it."""
    root = workspace.path.resolve()
    target = (root / (relpath or ".")).resolve()
    if target != root and root not in target.parents:
        raise ValueError(f"path {relpath!r} is outside the workspace {root}")
    return target

"""One sandboxed session: what `assay verify` and `assay run` both do around their checks.

    with open_session("auto", root, tool_paths=...) as session:
        evidence = session.run(checks)
    record = session.record            # complete once the block has ended

The session selects the backend (its report directory writable, the toolchains the
checks use shown to it), checks that it can run anything here, makes the workspace (a
copy of `source`, or with `restore` a copy whose protected files come from the base),
identifies tools from inside that workspace (a project's own binaries are code under
test: even their `--version` never runs on the host), runs checks through the
fail-closed runner, and always removes the workspace.

A sandbox that refuses (unavailable here, its probe could not clean up, no workspace
could be made) is not an exception: every check `run` is given comes back
`inconclusive` / `sandbox_unavailable`, saying why. A workspace that cannot be removed
is an error of the run, kept in the record's `cleanup_error`, beside evidence that stays
as it was.
"""

from __future__ import annotations

import contextlib
import functools
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from assay.environment import CHECK_ENV
from assay.evidence import Check, CheckerId, Evidence, evidence_for
from assay.progress import Progress, notify_finished, notify_started
from assay.run_record import Restored, RunRecord
from assay.scratch import temporary_scratch
from assay.verdict import Cause, Kind

if TYPE_CHECKING:
    from assay.canaries import NotPlanted, Planted
    from assay.probe import ProbeCache
    from assay.protect import ProtectedSet
    from assay.sandbox import Sandbox, Workspace


@dataclass(frozen=True, slots=True)
class Restore:
    """Restore `protected` files from the tree at `base` into the workspace (`--protect`)."""

    base: Path
    protected: ProtectedSet


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why nothing can run in this session: the reason, and what to do about it."""

    reason: str
    note: str
    sandbox: str
    """The backend as evidence names it: its description when known, else as asked."""


class Session:
    """A provisioned (or refused) sandbox, with the means to run checks in it. Made only
    by `open_session`; its `record` is final once the `with` block has ended."""

    def __init__(self, reports: Path) -> None:
        self.reports = reports
        """Where checks write their reports: outside the workspace, writable by the sandbox."""
        self.sandbox: Sandbox | None = None
        self.name = ""
        self.workspace: Workspace | None = None
        self.probes: ProbeCache | None = None
        self.refusal: Refusal | None = None
        self.unproven: dict[str, str] = {}
        """Checks not to start, by name, and why: the environment they would run in is not
        proven (`assay.environment_proof`); each comes back `inconclusive` / `start_failed`."""
        self.own_plugins: dict[str, str] = {}
        """The project's own pytest plugin files the canaries' guard may believe, with the
        SHA-256 each must have (`assay.own_plugins`)."""
        self.record = RunRecord()

    @property
    def root(self) -> Path:
        """The workspace as the host sees it (only when the session was not refused)."""
        if self.workspace is None:
            raise RuntimeError("the session was refused: it has no workspace")
        return self.workspace.path

    def run(
        self,
        checks: Sequence[Check],
        *,
        env: Mapping[str, str] | None = None,
        expires: float | None = None,
        online: bool = False,
        canaries: bool = False,
        progress: Progress | None = None,
    ) -> list[Evidence]:
        """Run `checks` side by side through the fail-closed runner; one evidence each, in order.

        `env` is laid under each check's own; `expires` (monotonic seconds) is a deadline
        over the whole run, to which each check's own is cut; `online`: the backend with
        the network on (install steps only); `canaries`: plant canary tests in each test
        check's run (`assay.canaries`); `progress` hears of each check as it starts and ends."""
        from assay.check_execution import run_check
        from assay.check_verifiers import run_checks

        if self.refusal is not None or self.sandbox is None or self.workspace is None:
            return [self._refused(check) for check in checks]
        workspace = self.workspace
        runner = (self.sandbox.with_network() if online else self.sandbox).runner(workspace)
        # Checks run as the project's CI runs them; install steps do not (`CHECK_ENV`).
        under = dict(env or {}) if online else {**CHECK_ENV, **(env or {})}

        planted: dict[str, Planted | NotPlanted] = {}

        def execute(check: Check) -> Evidence:
            notify_started(progress, check)
            done = run_one(check)
            notify_finished(progress, done)
            return done

        def run_one(check: Check) -> Evidence:
            if (why := self.unproven.get(check.name)) is not None:
                reason = "not started: the environment it would run in is not proven"
                return evidence_for(
                    check, Cause.START_FAILED, reason=reason, note=why, sandbox=self.name
                )
            if under:
                check = replace(check, env={**under, **check.env})
            cut_short = False
            if expires is not None:
                left = expires - time.monotonic()
                if left <= 0:
                    from assay.classify import not_started_by_run_deadline

                    return not_started_by_run_deadline(check, self.name)
                cut_short = check.timeout_s is None or left < check.timeout_s
                check = replace(check, timeout_s=min(check.timeout_s or left, left))
            # One report directory for all checks: reports are named after their check.
            done = run_check(
                check,
                root=workspace.path,
                runner=runner,
                probes=self.probes,
                report_dir=self.reports,
                sandbox=self.name,
                canaries=planted.get(check.name),
            )
            if cut_short and done.cause is Cause.TIMEOUT:
                from assay.classify import stopped_by_run_deadline

                done = stopped_by_run_deadline(done)
            return done

        tests = [check for check in checks if canaries and check.kind is Kind.TEST]
        if not tests:
            return run_checks(checks, execute, workdir=str(workspace.path))
        # The others first, so that no linter or formatter reads the canaries' files as the
        # project's (biome failed uuid's lint on the planted module's string concatenation).
        others = [check for check in checks if check.kind is not Kind.TEST]
        done: dict[int, Evidence] = {}
        if others:
            ran = run_checks(others, execute, workdir=str(workspace.path))
            done.update(zip(map(id, others), ran))
        # One test check at a time, with only its own canaries in the tree: a run over the
        # same tree collects every check's canaries as its own tests (ryu's `cargo test` and
        # `cargo test --features small` each failed on the other's must-fail canary).
        for test in tests:
            planted.update(self._plant([test]))
            try:
                (done[id(test)],) = run_checks([test], execute, workdir=str(workspace.path))
            finally:
                planted[test.name].remove()
        return [done[id(check)] for check in checks]

    def _plant(self, tests: Sequence[Check]) -> dict[str, Planted | NotPlanted]:
        """Canaries for every one of `tests`, all written before any of them starts."""
        from assay.canaries import NotPlanted, plant

        workspace = self.workspace
        if workspace is None or not workspace.owned:
            why = "the checks run in the tree itself: canaries are written only into a copy"
            return {check.name: NotPlanted(why) for check in tests}
        return {check.name: plant(check, workspace.path, self.own_plugins) for check in tests}

    def identify(self, checks: Sequence[Check]) -> list[CheckerId | None]:
        """Every check's tool, probed once (inside the sandbox where it is the project's
        own) and remembered for the session; None where missing or when refused. Probes
        run side by side: a slow version command should not queue the others."""
        from assay.check_execution import identify
        from assay.probe import ProbeFailure

        probes, workspace = self.probes, self.workspace
        if probes is None or workspace is None or not checks:
            return [None for _ in checks]

        def one(check: Check) -> CheckerId | None:
            # With the environment `run` gives it, so that its probe is the one `run` asks.
            as_run = replace(check, env={**CHECK_ENV, **check.env})
            try:
                return identify(as_run, root=workspace.path, probes=probes)
            except ProbeFailure:
                return None

        from assay.signal_waits import side_by_side

        return side_by_side([functools.partial(one, check) for check in checks], "probe")

    def _refused(self, check: Check) -> Evidence:
        refusal = self.refusal or Refusal(
            "no workspace", "the session has no workspace to run in", self.name
        )
        return evidence_for(
            check,
            Cause.SANDBOX_UNAVAILABLE,
            reason=refusal.reason,
            note=refusal.note,
            sandbox=refusal.sandbox,
        )


@contextlib.contextmanager
def open_session(
    backend: str,
    source: Path,
    *,
    tool_paths: Sequence[str] = (),
    restore: Restore | None = None,
    commit: str | None = None,
    in_place: bool = False,
    writable: Sequence[Path] = (),
) -> Iterator[Session]:
    """A session of `backend` over a workspace made from `source` (see the module docstring).

    `tool_paths`: binaries of toolchains the checks run, whose installations the sandbox
    shows read-only. `commit`: the workspace holds the tree of this commit of the
    repository at `source` (with its environments linked), not its working tree.
    `in_place`: `source` itself is the workspace where the backend can run there
    (`Sandbox.provision_in_place`). `writable`: host directories outside the workspace
    that checks may write besides their reports, each a warm cache of a tool's, which
    under bubblewrap only the checks whose environment names it may write. Raises
    only what making the workspace raises besides refusing (an `OSError` while restoring
    protected files); the workspace is removed in every case.
    """
    from assay.sandbox import CleanupError, ProvisionError, SandboxError, SandboxUnavailable

    with temporary_scratch("reports", dir=_outside(source, backend)) as reports:
        session = Session(Path(reports))
        sandbox = _select(backend, Path(reports), writable, tool_paths)
        session.sandbox = sandbox
        try:
            sandbox.ensure_available()
            session.name = sandbox.describe()
        except SandboxUnavailable as exc:
            session.refusal = Refusal(str(exc), exc.note, backend)
        except SandboxError as exc:  # e.g. the probe's own scratch could not be removed
            note = f"the {backend} sandbox could not be checked: {exc}"
            session.refusal = Refusal(str(exc), note, backend)
        if session.refusal is not None:
            session.name = backend
            yield session
            return
        session.record = RunRecord(sandbox=session.name)
        try:
            if in_place:
                workspace, restored = sandbox.provision_in_place(source), None
            else:
                workspace, restored = _provision(sandbox, source, restore, commit)
        except ProvisionError as exc:
            note = f"the {session.name} sandbox could not make a workspace from {source}: {exc}"
            session.refusal = Refusal(str(exc), note, session.name)
            yield session
            return
        session.workspace = workspace
        session.probes = _confined_probes(sandbox, workspace)
        record = session.record
        session.record = replace(
            record,
            protected=restored,
            workspace=workspace.provisioned.to_dict() if workspace.provisioned else None,
            limits=sandbox.limits_in_force(workspace),
        )
        try:
            yield session
        finally:
            try:
                sandbox.cleanup(workspace)
            except CleanupError as exc:
                problem = f"the workspace {workspace.path} could not be removed: {exc}"
                session.record = replace(session.record, cleanup_error=problem)


def shown_toolchains(checks: Sequence[Check], root: Path) -> tuple[str, ...]:
    """The binaries of real toolchains `checks` will run, found without running anything
    (for the sandbox to show toolchains that live outside its system directories). A
    command the repository names that is no known toolchain (`~/.vault-token`, a script)
    is never a reason to show a host directory."""
    from assay.check_execution import run_binaries
    from assay.toolchains import toolchain_for

    known = [c for c in checks if c.tool and toolchain_for(c.tool) is not None]
    found = {path for check in known for path in run_binaries(check, root=root)}
    return tuple(sorted(found))


def _select(
    backend: str, reports: Path, caches: Sequence[Path], tool_paths: Sequence[str]
) -> Sandbox:
    """The backend for this session: bubblewrap may write only the report directory (and
    each of the tools' `caches` in the checks that name it), and sees the toolchains the
    checks use even where they live under the hidden home."""
    from assay.sandbox import SandboxChoice, select_sandbox

    if backend not in (SandboxChoice.AUTO, SandboxChoice.BWRAP):
        return select_sandbox(backend)  # the options are bubblewrap's: not loaded without it
    from assay.sandbox.bwrap import BwrapOptions

    kept = tuple(str(path) for path in caches)
    options = BwrapOptions(
        toolchain_paths=tuple(tool_paths),
        writable_paths=(str(reports), *kept),
        tool_caches=kept,
    )
    return select_sandbox(backend, bwrap_options=options)


def _outside(source: Path, backend: str) -> str:
    """Where the run's reports go: a place outside `source` (a run in place from /tmp
    would have them inside the workspace). The checks may write there, as much as they
    like: under bubblewrap with a memory cap for the run, a tmpfs with room, where what
    they write counts against that cap (a test filled the host's disk through its report
    directory on /tmp); else the temp dir, else another place."""
    from assay.scratch import scratch_places

    root = source.resolve()
    places = [Path(tempfile.gettempdir()), *scratch_places()]
    if backend in ("auto", "bwrap"):
        from assay.sandbox.cgroup import can_cap_memory
        from assay.sandbox.provision import scratch_dir

        if can_cap_memory():
            places.insert(0, scratch_dir(0).path)
    for place in places:
        if place.resolve() != root and root not in place.resolve().parents:
            return str(place)
    return tempfile.gettempdir()  # every place is in it: run_check says so


def _provision(
    sandbox: Sandbox, source: Path, restore: Restore | None, commit: str | None = None
) -> tuple[Workspace, Restored | None]:
    if restore is None:
        return sandbox.provision(source, commit=commit), None
    from assay.protected_workspace import provision_protected

    workspace, result = provision_protected(sandbox, source, restore.base, restore.protected)
    return workspace, Restored(result.restored, result.removed)


def _confined_probes(sandbox: Sandbox, workspace: Workspace) -> ProbeCache:
    """Probes for this workspace: a binary inside it is identified inside the sandbox."""
    from assay.probe import Confinement, ProbeCache

    return ProbeCache(confinement=Confinement(workspace.path, sandbox.runner(workspace)))

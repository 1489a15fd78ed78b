"""Running checks through the fail-closed runner: a `Check` becomes a verifier.

Every command assay runs as a check goes through here, so `run_verifiers` is the
only path from a process to a verdict, for `assay run` and `assay verify` alike.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from assay.evidence import DEFAULT_TIMEOUT_S, Check, Evidence
from assay.runner import Isolation, VerifierContext, run_verifiers
from assay.scratch import sweep_stale, temporary_scratch
from assay.verdict import Kind

#: Extra seconds the runner allows past a check's own deadline: the process
#: runner kills at the deadline itself, so this only catches a stuck verifier.
RUNNER_SLACK_SECONDS = 15.0

CheckExecutor = Callable[[Check], Evidence]


@dataclass(frozen=True)
class CommandVerifier:
    """A verifier that runs one check's command via `execute` (assay's own trusted
    code: the untrusted part is the child process, which has its own deadline)."""

    check: Check
    execute: CheckExecutor
    isolation: Isolation = Isolation.IN_PROCESS

    @property
    def id(self) -> str:
        return self.check.name

    @property
    def kind(self) -> Kind:
        return self.check.kind

    def verify(self, ctx: VerifierContext) -> Evidence:
        return self.execute(self.check)


def run_checks(checks: Sequence[Check], execute: CheckExecutor, *, workdir: str) -> list[Evidence]:
    """Run `checks` concurrently through the runner; one Evidence each, in order."""
    if not checks:
        return []
    longest = max((c.timeout_s or 0.0) for c in checks)
    deadline = longest + RUNNER_SLACK_SECONDS if longest else None
    verifiers = [CommandVerifier(check, execute) for check in checks]
    outcomes = run_verifiers(verifiers, VerifierContext(workdir=workdir), deadline=deadline)
    return [outcome.evidence for outcome in outcomes]


def run_one(
    argv: list[str],
    *,
    cwd: str = ".",
    kind: str = "test",
    timeout: float | None = DEFAULT_TIMEOUT_S,
    sandbox: str = "auto",
) -> Evidence:
    """`assay run`: one command as one check. Raises `InvalidRun` for unusable arguments.

    The defaults are `verify`'s: a deadline, and the bubblewrap sandbox. With a sandbox
    other than `none`, the command runs in a workspace made from `cwd` (its writes never
    reach `cwd`), and the evidence names the backend.
    """
    from assay.engine import run_check
    from assay.process import InvalidRun

    if not argv:
        raise InvalidRun("no command given: put it after `--`")
    root = os.path.abspath(cwd)
    if not os.path.isdir(root):
        raise InvalidRun(f"working directory does not exist or is not a directory: {cwd}")
    check = Check(
        name=os.path.basename(argv[0]) or argv[0],
        kind=Kind(kind),
        argv=tuple(argv),
        timeout_s=timeout,
        tool=None,
        source="command line",
    )
    swept = sweep_stale()  # what runs that died left behind
    if sandbox == "none":
        evidence = run_checks(
            [check], lambda c: run_check(c, root=Path(root), sandbox="none"), workdir=root
        )[0]
    else:
        evidence = _run_sandboxed(check, Path(root), sandbox)
    return replace(evidence, extra={**evidence.extra, "swept": swept}) if swept else evidence


def _run_sandboxed(check: Check, root: Path, backend: str) -> Evidence:
    """Run `check` in a fresh workspace of `backend`; a refusing sandbox is evidence too."""
    import tempfile

    from assay.engine import locate, run_check
    from assay.evidence import evidence_for
    from assay.probe import Confinement, ProbeCache
    from assay.sandbox import (
        BwrapOptions,
        CleanupError,
        ProvisionError,
        SandboxUnavailable,
        select_sandbox,
    )
    from assay.verdict import Cause

    with temporary_scratch("reports", dir=tempfile.gettempdir()) as reports_dir:
        reports = str(reports_dir)
        # The command the user typed may live outside the system directories (a venv, a
        # toolchain under the home): show its installation, as verify does for its tools.
        tool = locate(check, root=root)
        options = BwrapOptions(writable_paths=(reports,), toolchain_paths=(tool,) if tool else ())
        sandbox = select_sandbox(backend, bwrap_options=options)
        try:
            sandbox.ensure_available()
            name = sandbox.describe()
        except SandboxUnavailable as exc:
            return evidence_for(
                check, Cause.SANDBOX_UNAVAILABLE, reason=str(exc), note=exc.note, sandbox=backend
            )
        try:
            workspace = sandbox.provision(root)
        except ProvisionError as exc:
            note = f"the {name} sandbox could not make a workspace from {root}: {exc}"
            return evidence_for(
                check, Cause.SANDBOX_UNAVAILABLE, reason=str(exc), note=note, sandbox=name
            )
        runner = sandbox.runner(workspace)
        # A binary inside the workspace is identified inside the sandbox too.
        probes = ProbeCache(confinement=Confinement(workspace.path, runner))

        def execute(c: Check) -> Evidence:
            return run_check(
                c,
                root=workspace.path,
                runner=runner,
                probes=probes,
                report_dir=Path(reports),
                sandbox=name,
            )

        try:
            evidence = run_checks([check], execute, workdir=str(workspace.path))[0]
        finally:
            try:
                sandbox.cleanup(workspace)
                problem = None
            except CleanupError as exc:
                problem = f"the workspace {workspace.path} could not be removed: {exc}"
        extra = {**evidence.extra, "limits": sandbox.limits_in_force(workspace)}
        if problem is not None:
            extra["cleanup_error"] = problem
        return replace(evidence, extra=extra)


def run_plugin(spec: str, *, cwd: str = ".", timeout: float | None = None) -> Evidence:
    """`assay run --verifier MODULE:ATTR`: one plugin verifier, in a worker process,
    importable from `cwd`. Raises `PluginSpecError` for a malformed name."""
    from assay.plugins import ImportedVerifier
    from assay.process import InvalidRun

    root = os.path.abspath(cwd)
    if not os.path.isdir(root):
        raise InvalidRun(f"working directory does not exist or is not a directory: {cwd}")
    verifier = ImportedVerifier(spec, search_path=(root,))
    (outcome,) = run_verifiers(
        [verifier], VerifierContext(workdir=root, timeout_s=timeout), deadline=timeout
    )
    return outcome.evidence

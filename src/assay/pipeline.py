"""The pipeline behind `assay verify`: discover -> plan -> sandbox -> identify -> cache -> run -> aggregate.

This module owns sequencing and failure policy only; each step is a call into
the module that does it. Whatever goes wrong inside a step becomes evidence
(a non-passing verdict with a note), never a traceback and never a pass.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from assay.errors import AssayError
from assay.evidence import Check, CheckerId, Evidence, evidence_for
from assay.plan import Plan, PlanOptions, Stage
from assay.report import Report, aggregate
from assay.sandbox import CleanupError, ProvisionError, Sandbox, SandboxUnavailable
from assay.scratch import sweep_stale, temporary_scratch
from assay.verdict import Cause, Kind, Status, Verdict


class VerifyUsageError(AssayError):
    """Nothing was run: the path or the configuration is unusable (exit code 2)."""


@dataclass(frozen=True, slots=True)
class VerifyOptions:
    """What `assay verify` was asked to do."""

    timeout_s: float | None = None
    """Per-check deadline; None: configured, else the planner's default."""
    sandbox: str = "auto"
    use_cache: bool = True
    base: str | None = None
    """A git ref to compare the change against (tampering signals)."""
    protect: bool = False
    """Run in a fresh workspace with protected files restored from `base`."""
    kinds: frozenset[Kind] | None = None
    cache_dir: str | None = None
    install: bool = False
    """Run the ecosystem's install steps first (network on for them only), for a fresh clone."""
    deadline_s: float | None = None
    """A budget for the whole verification; each check's own deadline is cut to what is left."""


def make_plan(path: str | Path, options: VerifyOptions) -> Plan:
    """Discover and plan; raises `VerifyUsageError` when nothing can be planned at all."""
    from assay.discovery import discover
    from assay.plan import plan

    # Asking for some kinds only, without tests, is asking for a verdict on those kinds.
    without_tests = options.kinds is not None and Kind.TEST not in options.kinds
    plan_options = PlanOptions(
        timeout_s=options.timeout_s,
        kinds=options.kinds,
        require_tests=False if without_tests else None,
    )
    found = plan(discover(Path(path)), plan_options)
    if found.root_problem:
        raise VerifyUsageError(found.root_problem)
    if found.config_error:
        raise VerifyUsageError(f"assay configuration error: {found.config_error}")
    return found


def verify(path: str | Path, options: VerifyOptions | None = None) -> Report:
    """Verify the repository at `path` and return the report. Raises only `VerifyUsageError`.

    First removes what runs that died left behind (`assay.scratch`); the report's
    `extra["swept"]` names it.
    """
    swept = sweep_stale()
    report = _verify(path, options)
    return replace(report, extra={**report.extra, "swept": swept}) if swept else report


def _verify(path: str | Path, options: VerifyOptions | None) -> Report:
    options = options or VerifyOptions()
    expires = None if options.deadline_s is None else time.monotonic() + options.deadline_s
    root = Path(path).resolve()
    if options.protect and not options.base:
        raise VerifyUsageError(
            "--protect needs --base REF: the protected files are restored from it"
        )
    if options.protect and options.sandbox == "none":
        # `none` runs in place: restoring the base's files would overwrite the user's tree.
        raise VerifyUsageError(
            "--protect needs a sandbox that works on a copy (auto, bwrap or local): "
            "with --sandbox none it would overwrite the files in your tree"
        )
    the_plan = make_plan(root, options)
    if not the_plan.checks:
        return aggregate([], plan=the_plan.to_dict(), empty_note=the_plan.empty_note)

    with temporary_scratch("reports", dir=tempfile.gettempdir()) as reports:
        sandbox = _sandbox(options.sandbox, Path(reports), _tool_paths(the_plan, root))
        try:
            sandbox.ensure_available()
            sandbox_name = sandbox.describe()
        except SandboxUnavailable as exc:
            refused = [
                evidence_for(
                    c,
                    Cause.SANDBOX_UNAVAILABLE,
                    reason=str(exc),
                    note=exc.note,
                    sandbox=options.sandbox,
                )
                for c in the_plan.checks
            ]
            return aggregate(refused, require_tests=the_plan.require_tests, plan=the_plan.to_dict())

        extra: dict[str, Any] = {"sandbox": sandbox_name}
        run = _Run(root, options, sandbox, sandbox_name, Path(reports), extra, expires)
        with _base_tree(root, options.base) as base_dir:
            if base_dir is not None:
                extra["tampering"] = _tampering(base_dir, root)
            try:
                with _workspace(sandbox, root, base_dir, options, extra) as workspace:
                    outcome = run.in_workspace(the_plan, workspace)
            except ProvisionError as exc:
                outcome = _Outcome(_unprovisioned(the_plan, exc, sandbox_name), [], the_plan)
    if outcome.cached is not None:
        return outcome.cached
    the_plan = outcome.plan
    report = aggregate(
        outcome.evidence, require_tests=the_plan.require_tests, plan=the_plan.to_dict()
    )
    report = _with_missing_kinds(report, the_plan)
    report = _with_config_errors(report, the_plan)
    if outcome.skipped:
        extra["skipped"] = outcome.skipped
    report = replace(report, extra=extra)
    if outcome.cache is not None and outcome.key is not None:
        _cache_store(outcome.cache, outcome.key, report)
    return report


@dataclass
class _Outcome:
    """What running in the workspace produced (or the cached report that made it unnecessary)."""

    evidence: list[Evidence]
    skipped: list[str]
    plan: Plan
    cached: Report | None = None
    cache: Any = None
    key: str | None = None


@dataclass
class _Run:
    """One verification's fixed inputs, for the steps that happen inside its workspace."""

    root: Path
    options: VerifyOptions
    sandbox: Any
    sandbox_name: str
    reports: Path
    extra: dict[str, Any]
    expires: float | None = None
    """Monotonic time at which the overall deadline passes (None: no overall deadline)."""

    def in_workspace(self, the_plan: Plan, workspace: Any) -> _Outcome:
        """Install (if asked), identify every tool, consult the cache, then run the checks.

        Tools are identified from inside the workspace, through the sandbox: a project's
        own binaries (`.venv/bin/python`, `node_modules/.bin/tsc`) are code under test,
        and even their version commands must not run on the host."""
        from assay.commands import run_checks
        from assay.engine import run_check
        from assay.probe import Confinement, ProbeCache

        runner = self.sandbox.runner(workspace)
        probes = ProbeCache(confinement=Confinement(workspace.path, runner))
        if self.options.install:
            installed = _install(self.sandbox, workspace, self.reports)
            self.extra["install"] = [e.to_dict() for e in installed]
            if not all(e.passed for e in installed):
                return _Outcome(
                    [_install_failed(e) for e in installed],
                    [c.name for c in the_plan.checks],
                    the_plan,
                )
            the_plan = make_plan(workspace.path, self.options)
        checkers = _identify_all(the_plan, workspace.path, probes)
        cache, key = _cache_lookup(self.root, the_plan, self.options, checkers, self.sandbox_name)
        if cache is not None and key is not None:
            hit = _cached_report(cache, key, the_plan.require_tests)
            if hit is not None:
                return _Outcome([], [], the_plan, cached=hit)

        def execute(check: Check) -> Evidence:
            if self.options.install:
                check = replace(check, env={**dependency_caches(workspace.path), **check.env})
            if self.expires is not None:
                left = self.expires - time.monotonic()
                if left <= 0:
                    note = (
                        "the verification's overall --deadline passed before this check could start"
                    )
                    return evidence_for(check, Cause.TIMEOUT, note=note, sandbox=self.sandbox_name)
                check = replace(check, timeout_s=min(check.timeout_s or left, left))
            # One report directory for all checks: reports are named after their check.
            return run_check(
                check,
                root=workspace.path,
                runner=runner,
                probes=probes,
                report_dir=self.reports,
                sandbox=self.sandbox_name,
            )

        evidence: list[Evidence] = []
        skipped: list[str] = []
        for wave in _waves(the_plan):
            if any(e.verdict is Verdict.FAIL for e in evidence):
                # A failed build decides the verdict; the rest would only fail after it.
                skipped.extend(c.name for c in wave)
                continue
            evidence.extend(run_checks(wave, execute, workdir=str(workspace.path)))
        return _Outcome(evidence, skipped, the_plan, cache=cache, key=key)


def _tool_paths(the_plan: Plan, root: Path) -> tuple[str, ...]:
    """The binaries of real toolchains the plan will run, found without running anything
    (for the sandbox to show toolchains that live outside its system directories). A
    command the repository names that is no known toolchain (`~/.vault-token`, a script)
    is never a reason to show a host directory."""
    from assay.engine import locate
    from assay.toolchains import toolchain_for

    known = [c for c in the_plan.checks if c.tool and toolchain_for(c.tool) is not None]
    found = {locate(check, root=root) for check in known}
    return tuple(sorted(p for p in found if p))


def _unprovisioned(the_plan: Plan, exc: Exception, sandbox_name: str) -> list[Evidence]:
    """No workspace could be made: nothing ran, so every check is inconclusive, with why."""
    note = f"the {sandbox_name} sandbox could not make a workspace: {exc}"
    return [
        evidence_for(c, Cause.SANDBOX_UNAVAILABLE, reason=str(exc), note=note, sandbox=sandbox_name)
        for c in the_plan.checks
    ]


def _sandbox(name: str, reports: Path, tool_paths: tuple[str, ...]) -> Sandbox:
    """The backend for this run: bubblewrap may write only the report directory, and sees
    the toolchains the plan uses even where they live under the hidden home."""
    from assay.sandbox import BwrapOptions, select_sandbox

    return select_sandbox(
        name, bwrap_options=BwrapOptions(toolchain_paths=tool_paths, writable_paths=(str(reports),))
    )


def _waves(the_plan: Plan) -> list[tuple[Check, ...]]:
    """What runs together: the build first (later checks need what it makes), then every
    other check at once — type checks, linters and tests do not depend on each other,
    so running them side by side is what makes verify faster than running them by hand."""
    build = tuple(c for s in the_plan.stages if s.stage is Stage.BUILD for c in s.checks)
    rest = tuple(c for s in the_plan.stages if s.stage is not Stage.BUILD for c in s.checks)
    return [wave for wave in (build, rest) if wave]


def _install(sandbox: Any, workspace: Any, reports: Path) -> list[Evidence]:
    """Run the install steps one after another, in the sandbox with the network on."""
    from assay.commands import run_checks
    from assay.engine import run_check
    from assay.install import install_steps

    online = sandbox.with_network()
    runner = online.runner(workspace)
    evidence: list[Evidence] = []
    for step in install_steps(workspace.path):
        step = replace(step, env={**step.env, **dependency_caches(workspace.path)})
        (done,) = run_checks(
            [step],
            lambda c: run_check(c, root=workspace.path, runner=runner, report_dir=reports),
            workdir=str(workspace.path),
        )
        evidence.append(done)
        if not done.passed:
            break
    return evidence


def dependency_caches(workspace: Path) -> dict[str, str]:
    """Where installed dependencies go: inside the workspace, so that later checks (each
    with its own scratch HOME) find what the install steps downloaded."""
    deps = workspace / ".assay-deps"
    return {
        "GOMODCACHE": str(deps / "go-mod"),
        "GOFLAGS": "-modcacherw",
        "CARGO_HOME": str(deps / "cargo"),
        "npm_config_cache": str(deps / "npm"),
        "PIP_CACHE_DIR": str(deps / "pip"),
    }


def _install_failed(evidence: Evidence) -> Evidence:
    """A failed install step means the checks could not run: not a verdict on the code."""
    if evidence.passed:
        return evidence
    note = (
        f"install step {evidence.check.name} did not succeed ({evidence.cause.value}); "
        "the checks were not run. Check the lockfile and the network, or set the environment up yourself."
    )
    return replace(evidence, verdict=Verdict.INCONCLUSIVE, cause=Cause.START_FAILED, note=note)


@contextlib.contextmanager
def _workspace(
    sandbox: Any, root: Path, base_dir: Path | None, options: VerifyOptions, extra: dict[str, Any]
) -> Iterator[Any]:
    """A workspace for the run: a copy of the change, or with `--protect` a copy whose
    protected files come from the base. Always cleaned up; a cleanup failure is recorded
    in `extra` (the checks' evidence stands) instead of replacing the report."""
    if options.protect and base_dir is not None:
        from assay.protect import protected_set
        from assay.sandbox.protected import provision_protected

        workspace, restored = provision_protected(sandbox, root, base_dir, protected_set())
        extra["protected"] = {
            "restored": list(restored.restored),
            "removed": list(restored.removed),
        }
    else:
        workspace = sandbox.provision(root)
    record = getattr(workspace, "provisioned", None)
    if record is not None:
        extra["workspace"] = record.to_dict()
    extra["limits"] = sandbox.limits_in_force(workspace)
    try:
        yield workspace
    finally:
        try:
            sandbox.cleanup(workspace)
        except CleanupError as exc:
            extra["cleanup_error"] = f"the workspace {workspace.path} could not be removed: {exc}"


@contextlib.contextmanager
def _base_tree(root: Path, base: str | None) -> Iterator[Path | None]:
    """The tree of `base` (a git ref of the repository at `root`), exported to a temp dir."""
    if base is None:
        yield None
        return
    from assay.sandbox import export_commit

    with temporary_scratch("base", dir=tempfile.gettempdir()) as scratch:
        try:
            export_commit(root, base, Path(scratch))
        except Exception as exc:  # a bad ref is a usage problem: say which
            raise VerifyUsageError(f"could not read --base {base!r} from {root}: {exc}") from exc
        yield Path(scratch)


def _tampering(base_dir: Path, root: Path) -> dict[str, Any]:
    from assay.protect import protected_set
    from assay.tamper import detect_tampering

    return detect_tampering(base_dir, root, protected_set()).to_dict()


def _with_missing_kinds(report: Report, the_plan: Plan) -> Report:
    """Kinds the configuration requires but nothing checks: never VERIFIED."""
    if not the_plan.missing or report.status is not Status.VERIFIED:
        return report
    kinds = ", ".join(sorted(k.value for k in the_plan.missing))
    note = f"the configuration requires {kinds} but no command for it was found."
    return replace(report, status=Status.UNVERIFIED, note=note)


def _with_config_errors(report: Report, the_plan: Plan) -> Report:
    """A configuration file that could not be read is named in the note of any
    non-VERIFIED report: it is often why the checks did not do what was expected."""
    if report.status is Status.VERIFIED or not the_plan.errors:
        return report
    unreadable = "; ".join(the_plan.errors)
    return replace(report, note=f"{report.note} Unreadable configuration: {unreadable}".strip())


# --------------------------------------------------------------------------- the verdict cache


def _cache_lookup(
    root: Path,
    the_plan: Plan,
    options: VerifyOptions,
    checkers: list[CheckerId | None],
    sandbox_name: str,
) -> tuple[Any, str | None]:
    """The cache and this run's key; (None, None) when caching is off or impossible."""
    if (
        not options.use_cache
        or options.base
        or options.protect
        or options.install
        or None in checkers
    ):
        return None, None  # a missing tool's verdict is not worth caching
    from assay.cache import CacheError, VerdictCache, cache_key, workspace_digest

    try:
        cache = VerdictCache(options.cache_dir)
        key = cache_key(
            workspace_digest(root), the_plan.to_dict(), [c for c in checkers if c], sandbox_name
        )
    except (CacheError, OSError):
        return None, None
    return cache, key


def _identify_all(the_plan: Plan, root: Path, probes: Any) -> list[CheckerId | None]:
    """Every check's tool, probed once and remembered for the run; None where missing
    (the check itself then reports it, when it runs). Probes run side by side: a slow
    version command (`python -m pytest --version`) should not queue the others."""
    from concurrent.futures import ThreadPoolExecutor

    from assay.engine import identify
    from assay.probe import ProbeFailure

    def one(check: Check) -> CheckerId | None:
        try:
            return identify(check, root=root, probes=probes)
        except ProbeFailure:
            return None

    with ThreadPoolExecutor(max_workers=max(1, len(the_plan.checks))) as pool:
        return list(pool.map(one, the_plan.checks))


def _cached_report(cache: Any, key: str, require_tests: bool) -> Report | None:
    """The stored report for `key`, if it is readable and its status is the one its own
    evidence gives: a stored status is never believed on its own word."""
    from assay.cache import CacheError

    try:
        hit = cache.get(key)
        if hit is None:
            return None
        report = Report.from_dict(hit.report)
    except (CacheError, ValueError, KeyError, TypeError, AttributeError):
        return None  # an unreadable entry is a miss, never a verdict
    if aggregate(report.checks, require_tests=require_tests).status is not report.status:
        return None
    extra = dict(report.extra)
    extra["cached"] = {"stored_at": hit.stored_at, "key": key}
    return replace(report, extra=extra)


def _cache_store(cache: Any, key: str, report: Report) -> None:
    from assay.cache import CacheError, cacheable

    if not cacheable(report.status, report.checks):
        return
    with contextlib.suppress(CacheError, OSError):
        cache.put(key, report.to_dict())

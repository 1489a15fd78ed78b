"""The one run loop for every language: `run_check` locates, probes, instruments, runs,
parses and classifies one check. The tool declarations (`assay.tools`) contribute only
tool knowledge.

A command that ran and exited non-zero is never an error: it is a result.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.evidence import Check, CheckerId, Diagnostic, Evidence, evidence_for
from assay.probe import ProbeCache, ProbeFailure, ToolchainError, search_path
from assay.scratch import temporary_scratch
from assay.toolchains import Toolchain, generic_toolchain, toolchain_for
from assay.verdict import Cause

if TYPE_CHECKING:
    from assay.canaries import NotPlanted, Planted
    from assay.process import CommandRunner, ProcessResult
    from assay.tools.instrumented import Instrumented, Preparation


def default_runner(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    no_output_timeout: float | None = None,
) -> ProcessResult:
    """`run_process` with the default environment policy: the runner when none is injected."""
    from assay.process import run_process

    return run_process(argv, cwd=cwd, env=env, timeout=timeout, no_output_timeout=no_output_timeout)


# --------------------------------------------------------------------------- run_check


def run_check(
    check: Check,
    *,
    root: Path,
    runner: CommandRunner | None = None,
    probes: ProbeCache | None = None,
    report_dir: Path | None = None,
    sandbox: str | None = None,
    canaries: Planted | NotPlanted | None = None,
) -> Evidence:
    """Run one planned check and return its evidence.

    The tool is probed first; a tool that cannot be identified gives `unverified` /
    `toolchain_missing` and nothing runs, because a verdict from an unknown tool is
    not evidence. Reports the tool writes go to `report_dir` (a temporary directory
    when None), which must lie outside `root`. Never raises for anything the tool does.
    `canaries`: the canary tests planted in `root` for this run (`assay.canaries`), or
    why there are none; its report is judged against them.
    """
    root = Path(root).resolve()
    cwd = (root / check.cwd).resolve()
    probes = probes if probes is not None else ProbeCache()
    try:
        located = _locate(check, root)
        checker = _probe(located, check, probes)
    except ProbeFailure as failure:
        from assay.install import missing_tool_note
        from assay.tool_broken_by_project import breaking_module

        if (broken := breaking_module(failure, root)) is not None:
            return _broken_by_project(check, failure, broken, sandbox)
        return evidence_for(
            check,
            Cause.TOOLCHAIN_MISSING,
            reason=str(failure),
            note=missing_tool_note(failure, check, root),
            sandbox=sandbox,
            extra={"candidates": list(getattr(failure, "candidates", ()))},
        )
    located = _past_pyenv_shim(located, check, root, cwd)
    if canaries is not None:
        # Imported only when a verify planted canaries: a bare run never loads them.
        from assay.canaries import NotPlanted

        if isinstance(canaries, NotPlanted) and canaries.refused:
            return _canaries_refused(check, canaries, checker, sandbox)
    if report_dir is None:
        with temporary_scratch("reports", dir=tempfile.gettempdir()) as scratch:
            return _run(check, located, checker, cwd, runner, Path(scratch), sandbox, canaries)
    report_dir = Path(report_dir).resolve()
    if report_dir == root or root in report_dir.parents:
        raise ValueError(f"report_dir {report_dir} lies inside the workspace {root}")
    report_dir.mkdir(parents=True, exist_ok=True)
    return _run(check, located, checker, cwd, runner, report_dir, sandbox, canaries)


def _broken_by_project(
    check: Check, failure: ProbeFailure, broken: Diagnostic, sandbox: str | None
) -> Evidence:
    """FAILED: the tool could not start, because the project's own code it imports failed
    to load (`assay.tool_broken_by_project`)."""
    where = broken.place
    return evidence_for(
        check,
        Cause.EXIT_NONZERO,
        result=getattr(failure, "result", None),
        diagnostics=(broken,),
        reason=f"{failure.tool} could not start: it imports the project's own {where}, "
        f"which raised {broken.message}",
        sandbox=sandbox,
    )


def _run(
    check: Check,
    located: _Located,
    checker: CheckerId,
    cwd: Path,
    runner: CommandRunner | None,
    report_dir: Path,
    sandbox: str | None,
    canaries: Planted | NotPlanted | None = None,
) -> Evidence:
    # Imported here: a cache hit identifies checkers through this module and runs none.
    from assay.instrument import instrument

    planned = instrument(check, checker, report_dir)
    run = runner or default_runner
    if planned.prepare is None:
        return _run_planned(
            check, planned, located, checker, cwd, run, report_dir, sandbox, canaries
        )
    started = time.monotonic()
    readied = _prepare(planned.prepare, located, run, cwd, check)
    # What readies a check is part of it (go test's warm-up is its compile, split off): the
    # run gets what is left of the check's time. With the whole of it, a warm-up and a hung
    # test outlasted the runner's net (the check's time and 15 s), and the hang read as a
    # verifier that never returned.
    left = check.timeout_s
    if left is not None:
        left = max(left - (time.monotonic() - started), _LEAST_LEFT_S)
    evidence = _run_planned(
        check, planned, located, checker, cwd, run, report_dir, sandbox, canaries, left
    )
    return replace(evidence, extra={**evidence.extra, "prepared": readied})


#: The least time a check is given after what readied it took all of its own: enough to
#: start, so that its end reads as the deadline it is.
_LEAST_LEFT_S = 0.5


def _run_planned(
    check: Check,
    planned: Instrumented,
    located: _Located,
    checker: CheckerId,
    cwd: Path,
    run: CommandRunner,
    report_dir: Path,
    sandbox: str | None,
    canaries: Planted | NotPlanted | None,
    timeout_s: float | None = None,
) -> Evidence:
    """Run `check` as `planned` (within `timeout_s`, else the check's own time), then
    parse and classify what it did."""
    from assay.process import InvalidRun

    # The argv runs the very binary that was probed, not whatever PATH finds later.
    argv = (*planned.wrapper, located.argv0, *planned.argv[1:])
    env = {**planned.env, **located.env}
    planted = None
    if canaries is not None:
        from assay.canaries import Planted

        planted = canaries if isinstance(canaries, Planted) else None
    if planted is not None:
        argv, env = planted.argv(argv), planted.env(env)
    try:
        for report in planned.reports:
            # A report left in a reused directory would otherwise be read as this run's.
            report.unlink(missing_ok=True)
        result = run(
            argv,
            cwd=str(cwd),
            env=env or None,
            timeout=check.timeout_s if timeout_s is None else timeout_s,
            no_output_timeout=check.no_output_timeout_s,
        )
    except (InvalidRun, OSError) as exc:
        return evidence_for(
            check,
            Cause.START_FAILED,
            checker=checker,
            reason=str(exc),
            note=f"{check.name} could not be started: {exc}",
            sandbox=sandbox,
        )
    # Imported once the command has finished: reading its output is no part of starting it.
    from assay.classify import classify
    from assay.parsers import parse_output

    parsed = parse_output(check, result, report_dir)
    if planted is not None:
        # Judged as if the canaries had not run; `report_tampered` when they say so.
        reading = planted.read(result, parsed)
        judged = reading.judged(result)
        evidence = classify(check, judged, reading.classified, checker=checker, sandbox=sandbox)
        return reading.settle(evidence, result)
    evidence = classify(check, result, parsed, checker=checker, sandbox=sandbox)
    if canaries is None:
        return evidence
    from assay.canaries import NotPlanted

    return canaries.annotate(evidence) if isinstance(canaries, NotPlanted) else evidence


def _prepare(
    step: Preparation, located: _Located, run: CommandRunner, cwd: Path, check: Check
) -> dict[str, Any]:
    """Run what readies `check` (`Instrumented.prepare`) with the binary the check runs,
    and say how it went, for the record: how it ends is not the check's outcome."""
    from assay.process import InvalidRun

    argv = (*step.wrapper, located.argv0, *step.argv[1:])
    try:
        result = run(
            argv,
            cwd=str(cwd),
            env={**step.env, **located.env} or None,
            timeout=check.timeout_s,
            no_output_timeout=check.no_output_timeout_s,
        )
    except (InvalidRun, OSError) as exc:
        return {"argv": list(step.argv), "error": str(exc)}
    return {
        "argv": list(step.argv),
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "duration_s": result.duration_s,
    }


def _canaries_refused(
    check: Check, canaries: NotPlanted, checker: CheckerId, sandbox: str | None
) -> Evidence:
    """The evidence for a check whose canaries were due but could not be written: it is
    not run without them, or a change could have them left out."""
    return canaries.annotate(
        evidence_for(
            check,
            Cause.START_FAILED,
            checker=checker,
            reason=canaries.why,
            note=f"{check.name} was not run: {canaries.why}.",
            sandbox=sandbox,
        )
    )


def locate(check: Check, *, root: Path) -> str | None:
    """The binary `check` will run (or, for `python -m tool`, the interpreter), found
    without starting any process; None when it is not installed."""
    try:
        return _locate(check, Path(root).resolve()).probe_path
    except ProbeFailure:
        return None


def run_binaries(check: Check, *, root: Path) -> tuple[str, ...]:
    """What `check` will execute, for a sandbox to show: the binary `locate` finds and,
    past a pyenv shim, the interpreter run in its place (`_past_pyenv_shim`)."""
    root = Path(root).resolve()
    try:
        located = _locate(check, root)
    except ProbeFailure:
        return ()
    run = _past_pyenv_shim(located, check, root, (root / check.cwd).resolve()).argv0
    return tuple(p for p in dict.fromkeys((located.probe_path, run)) if p and os.path.isabs(p))


def identify(check: Check, *, root: Path, probes: ProbeCache) -> CheckerId:
    """The checker `run_check` would use for `check` (probed once per cache); raises
    `ProbeFailure` when the tool is missing or cannot be identified."""
    return _probe(_locate(check, Path(root).resolve()), check, probes)


@dataclass(frozen=True, slots=True)
class _Located:
    """Which binary a check will run and how to identify it."""

    tool: str
    argv0: str
    """What to execute: the check's argv[0], pinned to the binary found."""
    probe_path: str | None
    """The binary (or interpreter, with `module`) to probe; None: search the candidates."""
    module: str | None = None
    cwd: str | None = None
    """Where it runs (a pyenv shim chooses its version by it)."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Variables the run needs beside the check's own (those `pyenv exec` would set)."""


def _locate(check: Check, root: Path) -> _Located:
    """The binary `check` runs and what to probe; `ToolchainError` when it is not installed."""
    cwd = (root / check.cwd).resolve()
    argv0 = check.argv[0] if check.argv else ""
    known = toolchain_for(check.tool) if check.tool else None
    tool = check.tool or os.path.basename(argv0) or "unknown"
    toolchain = known or generic_toolchain(tool, argv0 or None)
    binary = _find(argv0, toolchain, root, cwd, check.env)
    if binary is None:
        tried = (*(f"{d}/{argv0}" for d in toolchain.local_dirs), argv0)
        raise ToolchainError(toolchain.ecosystem, argv0 or tool, tried, toolchain.install_hint)
    pinned = _pin(binary, root, cwd)
    if known is not None and known.module and check.argv[1:3] == ("-m", known.module):
        return _Located(tool, pinned, probe_path=binary, module=known.module, cwd=str(cwd))
    if known is None or os.path.basename(argv0) in known.candidates:
        return _Located(tool, pinned, probe_path=binary, cwd=str(cwd))
    # A launcher (npx, a wrapper script) runs a known tool: identify the tool itself.
    found = _find(known.candidates[0], known, root, cwd, check.env)
    return _Located(tool, pinned, probe_path=found, cwd=str(cwd))


def _past_pyenv_shim(located: _Located, check: Check, root: Path, cwd: Path) -> _Located:
    """`located`, run as a pyenv shim would run it where that is known for sure
    (`resolve_shim_in_tree`): the interpreter it picks, started directly with the variables
    `pyenv exec` sets (its version's `bin` first on PATH, `PYENV_VERSION`), rather than
    the shim's chain of a dozen shell executions (about 40 ms) in every check."""
    if os.path.basename(os.path.dirname(located.argv0)) != "shims":
        return located
    from assay.pyenv_shim import resolve_shim_in_tree

    env = {**os.environ, **check.env}
    target = resolve_shim_in_tree(located.argv0, tree=str(root), cwd=str(cwd), env=env)
    if target is None:
        return located
    on_path = f"{os.path.dirname(target.binary)}{os.pathsep}{search_path(check.env or None)}"
    chosen = {"PATH": on_path, "PYENV_VERSION": target.version}
    return replace(located, argv0=target.binary, env=chosen)


def _probe(located: _Located, check: Check, probes: ProbeCache) -> CheckerId:
    return probes.get(
        located.tool,
        path=located.probe_path,
        env=check.env or None,
        module=located.module,
        cwd=located.cwd,
    )


def _find(
    name: str, toolchain: Toolchain, root: Path, cwd: Path, env: Mapping[str, str]
) -> str | None:
    """The absolute path `name` resolves to: relative to cwd when it has a slash, else the
    project's local bin directories (node_modules/.bin, .venv/bin) first, then PATH."""
    if not name:
        return None
    if os.sep in name:
        path = Path(name) if os.path.isabs(name) else cwd / name
        return str(path) if path.is_file() else None
    for local_dir in toolchain.local_dirs:
        candidate = root / local_dir / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which(name, path=search_path(env or None))
    return os.path.abspath(found) if found else None


def _pin(binary: str, root: Path, cwd: Path) -> str:
    """argv[0] for `binary`: relative to cwd inside the workspace (a sandbox may mount it
    elsewhere), absolute outside it."""
    path = Path(binary)
    if root == path or root in path.parents:
        relative = os.path.relpath(path, cwd)
        return relative if os.sep in relative else f".{os.sep}{relative}"
    return binary

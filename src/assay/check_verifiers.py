"""Running checks through the fail-closed runner: a `Check` becomes a verifier.

Every command assay runs as a check goes through here, so `run_verifiers` is the
only path from a process to a verdict, for `assay run` and `assay verify` alike.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from assay.evidence import DEFAULT_TIMEOUT_S, Check, Evidence
from assay.process import telling_start
from assay.run_record import RunRecord
from assay.runner import Isolation, VerifierContext, run_verifiers
from assay.scratch import sweep_stale
from assay.verdict import Kind, Status

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
    order = start_order(checks)
    first = _HeadStart(execute)
    verifiers = [
        CommandVerifier(checks[i], first.execute if n == 0 else first.then(execute))
        for n, i in enumerate(order)
    ]
    outcomes = run_verifiers(verifiers, VerifierContext(workdir=workdir), deadline=deadline)
    by_index = dict(zip(order, (outcome.evidence for outcome in outcomes), strict=True))
    return [by_index[index] for index in range(len(checks))]


def start_order(checks: Sequence[Check]) -> list[int]:
    """The indexes of `checks` in the order they are started: tests, then type checks, then
    the rest, each in plan order. Longest first: with few cores, a test run started after
    the quick lints and builds ends after them by the time their start took."""
    return sorted(range(len(checks)), key=lambda i: _START_RANK.get(checks[i].kind, 2))


_START_RANK = {Kind.TEST: 0, Kind.TYPECHECK: 1}

#: Longest the other checks of a stage wait for the first one's command to be running.
HEAD_START_MAX_S = 0.5


class _HeadStart:
    """The first check of a stage to start (the longest, `start_order`) has its command
    running before the others begin: on two cores they would race it for the workspace's
    one sandbox built ahead (`assay.sandbox.standby`), and a quick lint that won left the
    test run to build a sandbox of its own, after. They wait no longer than
    `HEAD_START_MAX_S`, and not at all once it has ended or failed to start."""

    def __init__(self, execute: CheckExecutor) -> None:
        self._execute = execute
        self._running = threading.Event()

    def execute(self, check: Check) -> Evidence:
        try:
            with telling_start(self._running.set):
                return self._execute(check)
        finally:
            self._running.set()

    def then(self, execute: CheckExecutor) -> CheckExecutor:
        def after_the_first(check: Check) -> Evidence:
            self._running.wait(HEAD_START_MAX_S)
            return execute(check)

        return after_the_first


def run_one(
    argv: list[str],
    *,
    cwd: str = ".",
    kind: str = "test",
    timeout: float | None = DEFAULT_TIMEOUT_S,
    sandbox: str = "auto",
) -> Evidence:
    """`assay run`: one command as one check. Raises `InvalidRun` for unusable arguments.

    The defaults are `verify`'s, and so is the session (`assay.session`): a deadline,
    the bubblewrap sandbox, `cwd` itself as the workspace (read-write, never copied:
    only `local` runs in a copy), and the command's tool identified inside it. The
    run record (`assay.run_record`: limits, cleanup error, what was swept...) is laid
    into the evidence's `extra`; `run_status` gives the status of the whole run.
    """
    done = run_command(argv, cwd=cwd, kind=kind, timeout=timeout, sandbox=sandbox)
    return replace(done.evidence, extra={**done.evidence.extra, **done.record.to_dict()})


@dataclass(frozen=True, slots=True)
class CommandRun:
    """One command run as one check: its evidence, and how the run went."""

    evidence: Evidence
    record: RunRecord

    @property
    def status(self) -> Status:
        """The command's verdict as a status; never VERIFIED when the run had an error."""
        from assay.report import status_of

        return status_of(self.evidence, run_errors=self.record.run_errors)


def run_command(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str] = ".",
    kind: str | Kind = Kind.TEST,
    timeout: float | None = DEFAULT_TIMEOUT_S,
    sandbox: str = "auto",
) -> CommandRun:
    """Run one command as one check, confined as `verify` confines its checks (the same
    session: a sandbox, the tool identified inside it), with `cwd` itself as the workspace,
    and return its evidence and the run's record. Raises `InvalidRun` for unusable arguments; never
    raises for what the command, its tool or the sandbox does."""
    from assay.check_execution import locate
    from assay.process import InvalidRun
    from assay.session import open_session

    if isinstance(argv, str) or not argv:
        raise InvalidRun("no command given: put it after `--` (a list of arguments)")
    root = os.path.abspath(cwd)
    if not os.path.isdir(root):
        raise InvalidRun(f"working directory does not exist or is not a directory: {cwd}")
    try:
        the_kind = Kind(kind)
    except ValueError:
        raise InvalidRun(f"unknown kind {kind!r}: one of build, typecheck, lint, test") from None
    if sandbox not in ("auto", "bwrap", "local", "none"):
        raise InvalidRun(f"unknown sandbox {sandbox!r}: one of auto, bwrap, local, none")
    check = Check(
        name=os.path.basename(argv[0]) or argv[0],
        kind=the_kind,
        argv=tuple(argv),
        timeout_s=timeout,
        tool=None,
        source="command line",
    )
    swept = sweep_stale()  # what runs that died left behind
    # The command the user typed may live outside the system directories (a venv, a
    # toolchain under the home): show its installation, as verify does for its tools.
    tool = locate(check, root=Path(root))
    tools = (tool,) if tool else ()
    with open_session(sandbox, Path(root), tool_paths=tools, in_place=True) as session:
        (evidence,) = session.run([check])
    return CommandRun(evidence, replace(session.record, swept=tuple(swept)))


def run_status(evidence: Evidence) -> Status:
    """The status of an `assay run` (from `run_one`'s evidence): the command's verdict,
    and never VERIFIED when the run itself had an error (a workspace left behind)."""
    from assay.report import status_of

    errors = [evidence.extra.get(k) for k in ("error", "cleanup_error")]
    return status_of(evidence, run_errors=[str(e) for e in errors if e])


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

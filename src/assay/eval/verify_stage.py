"""The verify stage: the agent's change, verified as data against the task's base.

The agent's workspace is never verified, nor trusted: its change is taken as a diff
against the base (`assay.eval.change`), applied to a fresh copy of the base with the
task's protected paths left out, and that copy is verified by `assay.verify` with
`base` and `protect`: the plan, the protected files and the environment come from the
base. What it says is recorded as it is (status, tampering signals, per-test outcomes of
the task's fail-to-pass and pass-to-pass sets); grading is another stage's job.

Failing tests are run again (the task's `rerun_failures`, default 2, or `assay eval
--rerun-failures N`; each rerun in a fresh process: `assay.reruns`) before anything is
recorded, those of the grading sets only when the task has them: a grading-set test that failed and
then passed on a rerun has the outcome `flaky`, which is neither a pass nor a failure, and
every flaky test the reruns found is named in `flaky`.

A verification that could not run (assay could not finish, a sandbox or tool that would
not start, a toolchain that is missing) is an infrastructure error of the attempt,
never a failed verification.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from assay.eval.change import Change, GitFailed, apply_change, fresh_base, take_change
from assay.eval.failures import Stage, StageError
from assay.eval.sources import ResolvedSource
from assay.eval.swebench.grading_ids import GradingIds, normalize_test_id
from assay.eval.task import TaskSpec
from assay.report import Report, signal_line, tampering_counted
from assay.sandbox.provision import CopyFailed
from assay.verdict import Cause, Status

__all__ = [
    "COULD_NOT_RUN",
    "FLAKY",
    "NOT_APPLICABLE",
    "AssayVerifier",
    "Verification",
    "Verifier",
    "flaky_tests",
    "normalize_test_id",
    "outcomes",
    "tampering_seen",
]

#: Causes that mean a check could not be run at all: the verifier's failure, not the agent's.
COULD_NOT_RUN = frozenset({Cause.START_FAILED, Cause.SANDBOX_UNAVAILABLE, Cause.TOOLCHAIN_MISSING})
#: The status of a change that could not be applied to the base (nothing of it ran).
NOT_APPLICABLE = "FAILED"
#: A grading-set test's outcome when it failed, then passed on a rerun.
FLAKY = "flaky"


@dataclass(frozen=True, slots=True)
class Verification:
    """What verifying one attempt's change found."""

    status: str
    """`VERIFIED`, `FAILED`, `INDETERMINATE` or `UNVERIFIED`, as assay's report says."""
    note: str = ""
    tampering: tuple[str, ...] = ()
    tests: dict[str, dict[str, str]] = field(default_factory=dict)
    """`fail_to_pass` and `pass_to_pass`: test id -> outcome (`not_run` when not seen,
    `flaky` when it failed, then passed on a rerun)."""
    flaky: tuple[str, ...] = ()
    """Every test that failed, then passed on a rerun, grading set or not (as reported)."""
    rerun_failures: int = 0
    """How many reruns a failing test was allowed."""
    change: Change | None = None
    report: dict[str, Any] | None = None

    @property
    def verified(self) -> bool:
        return self.status == Status.VERIFIED.value

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "note": self.note,
            "tampering": list(self.tampering),
            "tests": self.tests,
            "flaky": list(self.flaky),
            "rerun_failures": self.rerun_failures,
            "change": self.change.to_dict() if self.change else None,
            "report": self.report,
        }


class Verifier(Protocol):
    """Verifies the change in `workspace` against `source`'s base for `task`."""

    name: str

    def verify(
        self, task: TaskSpec, source: ResolvedSource, workspace: Path, scratch: Path
    ) -> Verification: ...


class AssayVerifier:
    """`assay.verify(..., base=..., protect=True)` on a fresh copy of the base, failing
    tests rerun `rerun_failures` times (None: as many as the task says)."""

    name = "assay"

    def __init__(self, sandbox: str = "auto", rerun_failures: int | None = None) -> None:
        self.sandbox = sandbox
        self.rerun_failures = rerun_failures

    def verify(
        self, task: TaskSpec, source: ResolvedSource, workspace: Path, scratch: Path
    ) -> Verification:
        from assay.pipeline import VerifyOptions, VerifyUsageError, verify

        repo = scratch / "verify"
        patch = scratch / "change.patch"
        try:
            base_id = fresh_base(source, repo)
            change = take_change(workspace, repo, scratch, patch)
            change = apply_change(repo, patch, change, task.protected)
        except (GitFailed, CopyFailed, OSError) as exc:
            raise StageError(Stage.VERIFY, "change_not_taken", str(exc)) from exc
        signals = tuple(f"protected by the task: {path}" for path in change.excluded)
        if change.refused is not None:
            note = f"the agent's change could not be applied to the base: {change.refused}"
            return Verification(NOT_APPLICABLE, note, signals, change=change)
        reruns = task.rerun_failures if self.rerun_failures is None else self.rerun_failures
        try:
            options = VerifyOptions(
                sandbox=self.sandbox,
                base=base_id,
                protect=True,
                use_cache=False,
                kinds=frozenset(task.kinds) if task.kinds else None,  # type: ignore[arg-type]
                timeout_s=task.verify_timeout_s,
                install=task.install,
                install_commands=task.install_commands,
                rerun_failures=reruns,
                rerun_only=_grading_set(task),
            )
            report = verify(repo, options)
        except VerifyUsageError as exc:
            raise StageError(Stage.VERIFY, "verify_refused", str(exc)) from exc
        _raise_if_not_run(report)
        return Verification(
            status=report.status.value,
            note=report.note,
            tampering=(*signals, *tampering_seen(report)),
            tests={
                "fail_to_pass": outcomes(report, task.fail_to_pass),
                "pass_to_pass": outcomes(report, task.pass_to_pass),
            },
            flaky=flaky_tests(report),
            rerun_failures=reruns,
            change=change,
            report=report.to_dict(),
        )


def _grading_set(task: TaskSpec) -> Callable[[str], bool] | None:
    """Which failing tests are run again: a task graded by its test sets reruns theirs only
    (a failure outside them decides nothing); one without reruns every failing test."""
    ids = (*task.fail_to_pass, *task.pass_to_pass)
    return GradingIds(ids).selects if ids else None


def tampering_seen(report: Report) -> list[str]:
    """Every tampering signal of the report, those `--protect` undid included: a forged
    test that was restored before the checks ran did not change the verdict, but the
    attempt to forge it is part of the agent's record."""
    record = report.record
    found = [
        signal_line(s)
        for s in (record.tampering or {}).get("signals") or []
        if isinstance(s, Mapping)
    ]
    if record.protected is not None:
        found += [f"restored from the base: {path}" for path in record.protected.restored]
        found += [f"removed (not in the base): {path}" for path in record.protected.removed]
    found += tampering_counted(record)
    return list(dict.fromkeys(found))


def _raise_if_not_run(report: Report) -> None:
    if report.record.error:
        raise StageError(Stage.VERIFY, "verifier_error", report.record.error)
    for evidence in report.checks:
        if evidence.cause in COULD_NOT_RUN:
            raise StageError(
                Stage.VERIFY,
                evidence.cause.value,
                f"{evidence.check.name}: {evidence.reason or evidence.note or evidence.cause}",
            )


def outcomes(report: Report, test_ids: Iterable[str]) -> dict[str, str]:
    """Each test id's outcome in `report` (`not_run` when no check reported it, `flaky`
    when it failed and then passed on a rerun), matched as `GradingIds` matches them."""
    seen: dict[str, str] = {}
    for evidence in report.checks:
        for case in evidence.test_cases:
            seen[case.name] = case.outcome
    for test in flaky_tests(report):
        seen[test] = FLAKY
    return GradingIds(test_ids).outcomes(seen)


def flaky_tests(report: Report) -> tuple[str, ...]:
    """The tests `report`'s reruns found flaky (failed, then passed in a fresh process)."""
    found: list[str] = []
    for evidence in report.checks:
        reruns = evidence.extra.get("reruns")
        if isinstance(reruns, Mapping):
            found += [str(t) for t in reruns.get("flaky") or ()]
    return tuple(dict.fromkeys(found))

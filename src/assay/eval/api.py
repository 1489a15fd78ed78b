"""`run_eval`: an evaluation from task folders and an agent, or the rest of one resumed.

Usage errors (no tasks, a task folder that does not load, an unknown agent, an eval id the
store does not hold) raise `EvalUsageError` before anything runs. Everything that goes
wrong in an attempt is that attempt's record.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import AssayError
from assay.eval.executors import Executor
from assay.eval.generators import Registry, default_registry
from assay.eval.harness import Harness, Planned
from assay.eval.lease import EvalBusy, holding
from assay.eval.record import AttemptRecord
from assay.eval.runners import AgentSpecError, CommandRunner, Runner, runner_for
from assay.eval.store import EvalInfo, Store
from assay.eval.summary import summarize
from assay.eval.task import TaskError, TaskSpec, find_task_folders, load_task
from assay.eval.verify_stage import AssayVerifier, Verifier
from assay.sandbox.base import Sandbox


class EvalUsageError(AssayError, ValueError):
    """The evaluation cannot start as asked; nothing ran."""


@dataclass(frozen=True, slots=True)
class EvalResult:
    eval_id: str
    records: tuple[AttemptRecord, ...]
    """The attempts this call ran (on resume: only those)."""
    summary: dict[str, Any]
    """The whole evaluation as `assay report --json` shows it."""


def run_eval(
    tasks: Sequence[str | Path] = (),
    agent: str = "nop",
    *,
    epochs: int = 1,
    concurrency: int = 1,
    retries: int = 0,
    rerun_failures: int | None = None,
    store: Store | str | Path | None = None,
    resume: str | None = None,
    sandbox: str = "auto",
    registry: Registry | None = None,
    runner: Runner | None = None,
    verifier: Verifier | None = None,
    workspace_sandbox: Sandbox | None = None,
    on_record: Callable[[AttemptRecord], None] | None = None,
    on_start: Callable[[str, int], None] | None = None,
    executor: str | Executor = "local",
    ray_address: str | None = None,
) -> EvalResult:
    """Run `agent` on every task folder in `tasks`, `epochs` times each, and record every
    attempt in `store` (assay's default store when None). With `resume`, run only the
    attempts of that evaluation not yet recorded, with the agent and settings it began
    with. `runner`, `verifier`, `registry` and `workspace_sandbox` replace the seams built
    from `agent` and `sandbox`. `on_start(eval_id, attempts_to_run)` is called before the
    first attempt. `executor` says where attempts run: `local` (this process's threads)
    or `ray` (the Ray cluster at `ray_address`, else one started here). `rerun_failures`
    overrides every task's own (None: each task's)."""
    opened = store if isinstance(store, Store) else Store(store)
    closing: list[Executor] = []
    try:
        if resume is not None:
            info = opened.get_eval(resume)
            if info is None:
                raise EvalUsageError(f"no evaluation {resume!r} in {opened.path}")
            try:
                specs = [load_task(t["folder"]) for t in opened.task_specs(resume)]
            except TaskError as exc:
                raise EvalUsageError(f"cannot resume {resume}: {exc}") from None
            agent = info.agent
            epochs = int(info.config["epochs"])
            sandbox = str(info.config.get("sandbox", sandbox))
            rerun_failures = info.config.get("rerun_failures")
            eval_id = info.id
        else:
            _check_counts(epochs=epochs)
            specs = _load(tasks)
            eval_id = ""
        _check_counts(concurrency=concurrency, retries=retries)
        if rerun_failures is not None:
            _check_counts(rerun_failures=rerun_failures)
        try:
            chosen = runner or runner_for(agent)
        except AgentSpecError as exc:
            raise EvalUsageError(str(exc)) from None
        where = _executor(executor, ray_address, concurrency)
        closing.append(where)
        harness = Harness(
            registry or default_registry(),
            workspace_sandbox or _sandbox(sandbox, chosen),
            chosen,
            verifier or AssayVerifier(sandbox, rerun_failures),
            opened,
            retries=retries,
            concurrency=concurrency,
            executor=where,
        )
        if not eval_id:
            config: dict[str, Any] = {
                "epochs": epochs,
                "sandbox": sandbox,
                "planned": epochs * len(specs),
            }
            if rerun_failures is not None:
                config["rerun_failures"] = rerun_failures
            eval_id = opened.create_eval(agent, config, [s.to_dict() for s in specs])
        try:
            with holding(opened.path, eval_id):
                # Read under the lock: what another runner recorded before it let go counts.
                done = opened.recorded(eval_id)
                planned = [
                    Planned(spec, epoch)
                    for epoch in range(1, epochs + 1)
                    for spec in specs
                    if (spec.id, epoch) not in done
                ]
                if on_start is not None:
                    on_start(eval_id, len(planned))
                records = harness.run(eval_id, planned, on_record=on_record)
        except EvalBusy as exc:
            raise EvalUsageError(str(exc)) from None
        info_now = opened.get_eval(eval_id)
        assert info_now is not None  # written above, never deleted
        return EvalResult(eval_id, tuple(records), summarize(opened, info_now))
    finally:
        for where in closing:
            where.close()
        if not isinstance(store, Store):
            opened.close()


def _load(tasks: Sequence[str | Path]) -> list[TaskSpec]:
    if not tasks:
        raise EvalUsageError("no task folders given")
    try:
        specs = [load_task(folder) for folder in find_task_folders([str(t) for t in tasks])]
    except TaskError as exc:
        raise EvalUsageError(str(exc)) from None
    seen: set[str] = set()
    for spec in specs:
        if spec.id in seen:
            raise EvalUsageError(f"two tasks have the id {spec.id!r}")
        seen.add(spec.id)
    return specs


def _check_counts(**counts: int) -> None:
    least = {"epochs": 1, "concurrency": 1, "retries": 0, "rerun_failures": 0}
    for name, value in counts.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < least[name]:
            raise EvalUsageError(f"{name} must be an integer >= {least[name]}, got {value!r}")


def _executor(chosen: str | Executor, address: str | None, concurrency: int) -> Executor:
    """The executor `--executor` names, connected; Ray is imported only for `ray`."""
    if not isinstance(chosen, str):
        return chosen
    if chosen == "local":
        if address:
            raise EvalUsageError("--ray-address goes with --executor ray")
        from assay.eval.executors.local import LocalExecutor

        return LocalExecutor()
    if chosen != "ray":
        raise EvalUsageError(f"unknown executor {chosen!r} (local or ray)")
    try:
        from assay.eval.executors.ray_executor import RayExecutor, RayUnavailable
    except ImportError as exc:
        raise EvalUsageError(
            f"--executor ray needs Ray ({exc}): pip install 'assay[ray]'"
        ) from None
    # A Ray started here gets as many CPUs as attempts may run at once, not the machine's.
    ray_executor = RayExecutor(address, num_cpus=concurrency)
    try:
        ray_executor.start()
    except RayUnavailable as exc:
        raise EvalUsageError(str(exc)) from None
    return ray_executor


def _sandbox(name: str, runner: Runner) -> Sandbox:
    """The sandbox agents run in: `name`'s backend, with an agent command's own program
    and files shown read-only (they are the evaluator's, not the task's)."""
    from assay.sandbox import BwrapOptions, select_sandbox

    shown = runner.host_paths() if isinstance(runner, CommandRunner) else ()
    try:
        return select_sandbox(name, bwrap_options=BwrapOptions(toolchain_paths=shown))
    except ValueError as exc:
        raise EvalUsageError(str(exc)) from None


def latest_or(store: Store, eval_id: str | None) -> EvalInfo:
    """The evaluation `eval_id` names, or the latest; `EvalUsageError` when there is none."""
    info = store.get_eval(eval_id) if eval_id else store.latest_eval()
    if info is None:
        what = f"no evaluation {eval_id!r}" if eval_id else "no evaluation yet"
        raise EvalUsageError(f"{what} in {store.path}")
    return info

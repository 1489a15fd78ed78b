"""The `assay eval`, `assay report` and `assay tasks` commands.

Only click is imported here at the top: the harness loads when one of these commands runs,
so `assay verify`'s start-up never pays for it.

Exit codes: 0 every attempt was recorded and scored; 3 some attempt is an infrastructure
error (recorded, with its stage and cause); 2 the command could not start as asked; for
`tasks validate`, 1 when a task is not valid; for `tasks generate`, 1 when fewer valid
tasks than asked were made.
"""

from __future__ import annotations

import json
from typing import Any, NoReturn

import click

#: Some attempt of the evaluation is an error, not a score (like `INDETERMINATE`).
ERRORS_EXIT = 3
INVALID_TASKS_EXIT = 1
USAGE_EXIT = 2


def _fail(message: str) -> NoReturn:
    from assay.terminal import for_terminal

    click.echo(for_terminal(f"error: {message}"), err=True)
    raise SystemExit(USAGE_EXIT)


def _say(text: str) -> None:
    from assay.terminal import for_terminal

    click.echo(for_terminal(text))


def _emit_json(document: dict[str, Any]) -> None:
    from assay.terminal import json_for_terminal

    click.echo(json_for_terminal(json.dumps(document, indent=2, ensure_ascii=False)))


def _open_store(path: str | None) -> Any:
    from assay.eval.store import Store, StoreError

    try:
        return Store(path)
    except StoreError as exc:
        _fail(str(exc))


@click.command("eval")
@click.argument("tasks", nargs=-1)
@click.option("--agent", help="nop, oracle, patch:FILE.jsonl, or the command that runs an agent.")
@click.option("--epochs", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--concurrency", type=click.IntRange(min=1), default=1, show_default=True)
@click.option(
    "--retries",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Tries again after an infrastructure error (never after a score).",
)
@click.option(
    "--rerun-failures",
    type=click.IntRange(min=0, max=10),
    default=None,
    help="Run each failing grading-set test again up to N times, in a fresh process, "
    "before it counts (0: never); one that passes on a rerun is flaky. Default: each "
    "task's rerun_failures (2 unless it says).",
)
@click.option("--store", "store_path", help="The SQLite store (default: assay's cache dir).")
@click.option("--resume", help="Run the attempts of this evaluation not yet recorded.")
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Where attempts run: this machine, or a Ray cluster (pip install 'assay[ray]').",
)
@click.option("--ray-address", help="The Ray cluster (default: a Ray started here).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON at the end.")
def eval_command(
    tasks: tuple[str, ...],
    agent: str | None,
    epochs: int,
    concurrency: int,
    retries: int,
    rerun_failures: int | None,
    store_path: str | None,
    resume: str | None,
    executor: str,
    ray_address: str | None,
    as_json: bool,
) -> None:
    """Run AGENT on every task in TASKS (task folders, or folders of them)."""
    import sys

    from assay.eval.api import EvalUsageError, run_eval
    from assay.eval.progress import watching
    from assay.eval.summary import render_text
    from assay.terminal import for_terminal

    if resume is None and agent is None:
        _fail("--agent is required (nop, oracle, patch:FILE.jsonl or a command)")
    if resume is not None and (tasks or agent):
        _fail("--resume takes the tasks and agent the evaluation began with; give neither")
    store = _open_store(store_path)

    # With --json, stdout is the JSON document alone; what is under way goes to stderr.
    stream = sys.stderr if as_json else sys.stdout
    try:
        with watching(stream) as progress:

            def started(eval_id: str, count: int) -> None:
                progress.started(eval_id, count)
                line = f"eval {eval_id}: {count} attempt(s) to run (store {store.path})"
                click.echo(for_terminal(line), file=stream)

            result = run_eval(
                tasks,
                agent or "",
                epochs=epochs,
                concurrency=concurrency,
                retries=retries,
                rerun_failures=rerun_failures,
                store=store,
                resume=resume,
                on_start=started,
                on_record=progress.recorded,
                executor=executor,
                ray_address=ray_address,
            )
    except EvalUsageError as exc:
        _fail(str(exc))
    finally:
        store.close()
    if as_json:
        _emit_json(result.summary)
    else:
        _say("")
        _say(render_text(result.summary))
    if result.summary["errors"]:
        raise SystemExit(ERRORS_EXIT)


@click.command("report")
@click.argument("eval_id", required=False)
@click.option("--store", "store_path", help="The SQLite store (default: assay's cache dir).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object (pass_rate per group).")
@click.option(
    "--format",
    "report_format",
    type=click.Choice(["text", "json", "swebench"]),
    help="swebench: the run report SWE-bench's harness writes (resolved, unresolved, "
    "error and empty-patch ids). Default text (json with --json).",
)
@click.option("--html", "html_path", help="Also write a self-contained HTML report to this file.")
def report_command(
    eval_id: str | None,
    store_path: str | None,
    as_json: bool,
    report_format: str | None,
    html_path: str | None,
) -> None:
    """Show an evaluation's results (the latest by default)."""
    from assay.eval.api import EvalUsageError, latest_or
    from assay.eval.store import StoreError
    from assay.eval.summary import render_text, summarize

    if as_json and report_format not in (None, "json"):
        _fail(f"--json and --format {report_format} ask for two reports; give one")
    store = _open_store(store_path)
    try:
        info = latest_or(store, eval_id)
        if report_format == "swebench":
            from assay.eval.swebench import swebench_report

            _emit_json(swebench_report(store, info))
            return
        summary = summarize(store, info)
        attempts = store.attempts(info.id) if html_path else []
    except (EvalUsageError, StoreError) as exc:
        _fail(str(exc))
    finally:
        store.close()
    if html_path:
        _write_html(html_path, summary, attempts)
    if as_json or report_format == "json":
        _emit_json(summary)
    else:
        _say(render_text(summary))


def _write_html(path: str, summary: dict[str, Any], attempts: list[dict[str, Any]]) -> None:
    from pathlib import Path

    from assay.eval.html_report import render_html

    page = render_html(summary, attempts)
    try:  # lone surrogates in the agent's text must not stop the report
        Path(path).write_bytes(page.encode("utf-8", "replace"))
    except OSError as exc:
        _fail(f"cannot write the HTML report to {path}: {exc.strerror or exc}")


@click.group("tasks")
def tasks_group() -> None:
    """Tasks for evaluations."""


@tasks_group.command("validate")
@click.argument("folders", nargs=-1, required=True)
@click.option("--concurrency", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--store", "store_path", help="Keep the validation runs here (default: not kept).")
@click.option("--json", "as_json", is_flag=True)
def validate_command(
    folders: tuple[str, ...], concurrency: int, store_path: str | None, as_json: bool
) -> None:
    """Check each task: its oracle VERIFIED 3 times in a row, nop not VERIFIED."""
    import tempfile

    from assay.eval.api import EvalUsageError
    from assay.eval.validate import validate_tasks

    with tempfile.TemporaryDirectory(prefix="assay-validate-") as scratch:
        store = _open_store(store_path or f"{scratch}/validate.sqlite")
        try:
            results = validate_tasks(folders, store, concurrency=concurrency)
        except EvalUsageError as exc:
            _fail(str(exc))
        finally:
            store.close()
    if as_json:
        _emit_json({"schema": "assay.tasks.validate/1", "tasks": [r.to_dict() for r in results]})
    else:
        for item in results:
            _say(f"{'valid  ' if item.valid else 'INVALID'} {item.task_id}: {item.reason}")
    if not all(item.valid for item in results):
        raise SystemExit(INVALID_TASKS_EXIT)


@tasks_group.command("import")
@click.argument("instances")
@click.option(
    "--repos",
    "repos_dir",
    default=".",
    show_default=True,
    help="Where the local clones are: DIR/owner__name, DIR/owner/name or DIR/name.",
)
@click.option("--out", "out_dir", required=True, help="Where the task folders are written.")
def import_command(instances: str, repos_dir: str, out_dir: str) -> None:
    """Task folders from SWE-bench INSTANCES (a JSONL file): the base commit and the test
    patch (protected) as a git bundle, the gold patch as the oracle, FAIL_TO_PASS and
    PASS_TO_PASS as the grading sets. Nothing is written if any instance is bad."""
    from assay.eval.swebench import ImportFailed, import_instances

    notes: list[str] = []
    try:
        written = import_instances(instances, repos=repos_dir, out=out_dir, on_note=notes.append)
    except ImportFailed as exc:
        _fail(str(exc))
    for note in notes:  # what of an instance's environment assay does not do: said, not dropped
        _say(f"environment: {note}")
    for folder in written:
        _say(f"imported {folder.name}: {folder}")
    _say(f"{len(written)} task(s) in {out_dir}")


@tasks_group.command("generate")
@click.argument("repo")
@click.option("--language", required=True, help="python or go.")
@click.option("--count", type=click.IntRange(min=1), default=5, show_default=True)
@click.option("--out", "out_dir", required=True, help="Where the task folders are written.")
@click.option("--difficulty", type=click.Choice(["easy", "medium", "hard"]))
@click.option("--template", help="One mutation operator (default: every one, in turn).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--stack",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Mutations per task (in one file); more is harder.",
)
@click.option("--store", "store_path", help="Where knowledge graphs are kept (default: assay's).")
@click.option("--concurrency", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def generate_command(
    repo: str,
    language: str,
    count: int,
    out_dir: str,
    difficulty: str | None,
    template: str | None,
    seed: int,
    stack: int,
    store_path: str | None,
    concurrency: int,
    as_json: bool,
) -> None:
    """Mutation tasks from REPO's HEAD (its tests must pass), each validated before it
    counts; exit 1 when fewer than COUNT are valid (the rejected ones say why)."""
    from assay.eval.mutation.generate import GenerateError, generate_tasks

    store = _open_store(store_path)
    try:
        report = generate_tasks(
            repo,
            language=language,
            count=count,
            out=out_dir,
            store=store,
            difficulty=difficulty,
            template=template,
            seed=seed,
            stack=stack,
            concurrency=concurrency,
            on_progress=None if as_json else _say,
        )
    except GenerateError as exc:
        _fail(str(exc))
    finally:
        store.close()
    if as_json:
        _emit_json(report.to_dict())
    else:
        dropped = ", ".join(f"{n} {why}" for why, n in sorted(report.dropped.items()))
        _say(f"{len(report.valid)} valid task(s) of {count} asked in {out_dir}")
        if dropped:
            _say(f"mutants dropped: {dropped}")
    if len(report.valid) < count:
        raise SystemExit(INVALID_TASKS_EXIT)


def register(group: click.Group) -> None:
    """Add the evaluation commands to the `assay` command group."""
    group.add_command(eval_command)
    group.add_command(report_command)
    group.add_command(tasks_group)

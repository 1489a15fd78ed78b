"""The `assay` command line: parse arguments, call the library, print, exit.

Start-up time matters (agents call `assay` in loops), so this module imports
only click at the top; each command imports what it needs when it runs.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from assay._version import __version__
from assay.verdict import USAGE_ERROR_EXIT

KINDS = ("build", "typecheck", "lint", "test")
SANDBOXES = ("auto", "bwrap", "local", "none")


def _positive_seconds(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    import math

    if value is not None and (math.isnan(value) or value < 0):
        raise click.BadParameter("must be a number of seconds >= 0")
    return value


def _emit_json(document: dict[str, Any]) -> None:
    click.echo(json.dumps(document, indent=2, ensure_ascii=False))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="assay", message="%(prog)s %(version)s")
def cli() -> None:
    """Ground truth about code: does it build, type-check, lint and pass its tests?"""


@cli.command(context_settings={"ignore_unknown_options": True})
@click.option("--timeout", type=float, default=None, callback=_positive_seconds, help="Deadline in seconds (0: none).")
@click.option("--cwd", type=click.Path(file_okay=False), default=".", help="Directory to run in.")
@click.option("--kind", type=click.Choice(KINDS), default="test", show_default=True, help="What the command checks.")
@click.option("--sandbox", type=click.Choice(SANDBOXES), default="none", show_default=True, help="Where the command runs.")
@click.option("--json", "as_json", is_flag=True, help="Print the evidence as JSON.")
@click.argument("argv", nargs=-1, required=True, type=click.UNPROCESSED)
def run(timeout: float | None, cwd: str, kind: str, sandbox: str, as_json: bool, argv: tuple[str, ...]) -> None:
    """Run one command as one check and print its evidence.

    Put the command after `--`:  assay run --kind test -- pytest -q
    """
    from assay.commands import run_one
    from assay.process import InvalidRun

    try:
        evidence = run_one(list(argv), cwd=cwd, kind=kind, timeout=timeout or None, sandbox=sandbox)
    except InvalidRun as exc:
        raise click.UsageError(str(exc)) from None
    if as_json:
        _emit_json(evidence.to_dict())
    else:
        _print_evidence(evidence)
    sys.exit(_verdict_exit(evidence))


def _verdict_exit(evidence: Any) -> int:
    from assay.verdict import Status, Verdict

    status = {
        Verdict.PASS: Status.VERIFIED,
        Verdict.FAIL: Status.FAILED,
        Verdict.INCONCLUSIVE: Status.INDETERMINATE,
        Verdict.UNVERIFIED: Status.UNVERIFIED,
    }[evidence.verdict]
    return status.exit_code


def _print_evidence(evidence: Any) -> None:
    from assay.report import summary_line

    click.echo(summary_line(evidence))
    if evidence.checker is not None:
        click.echo(f"  checker: {evidence.checker.tool} {evidence.checker.version}")
    for diag in evidence.diagnostics[:10]:
        where = f"{diag.file}:{diag.line}: " if diag.file else ""
        click.echo(f"  {where}{diag.message}")
    if evidence.note:
        click.echo(f"  note: {evidence.note}")
    if not evidence.passed and evidence.reason and not evidence.diagnostics:
        click.echo(_indent(evidence.reason[-2000:]))


def _indent(text: str) -> str:
    return "\n".join("  | " + line for line in text.splitlines())


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    try:
        cli.main(args=argv, prog_name="assay", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.Abort:
        click.echo("Aborted.", err=True)
        return 130
    except click.ClickException as exc:
        exc.show()
        return USAGE_ERROR_EXIT
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else USAGE_ERROR_EXIT
    return 0

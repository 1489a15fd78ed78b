"""The `assay` commands: parse arguments, call the library, print, exit.

Loaded by the console script (`assay.cli.main`) for anything but `--version`. Start-up
time matters (agents call `assay` in loops), so this module imports only click at the
top; each command imports what it needs when it runs.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from assay._version import __version__
from assay.cli_run import KINDS, SANDBOXES
from assay.verdict import USAGE_ERROR_EXIT


def _positive_seconds(
    ctx: click.Context, param: click.Parameter, value: float | None
) -> float | None:
    import math

    if value is not None and (math.isnan(value) or value < 0):
        raise click.BadParameter("must be a number of seconds >= 0")
    return value


def _emit_json(document: dict[str, Any]) -> None:
    import json  # here: a plain-text run never needs it

    from assay.terminal import json_for_terminal

    click.echo(json_for_terminal(json.dumps(document, indent=2, ensure_ascii=False)))


def _say(text: str, *, err: bool = False) -> None:
    """Write one piece of human output. Everything a person reads goes through here, so
    what the repository printed is shown, never obeyed, by their terminal."""
    from assay.terminal import for_terminal

    click.echo(for_terminal(text), err=err)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="assay", message="%(prog)s %(version)s")
def cli() -> None:
    """Ground truth about code: does it build, type-check, lint and pass its tests?"""


@cli.command(context_settings={"ignore_unknown_options": True})
@click.option(
    "--timeout",
    type=float,
    default=60.0,  # verify's default per-check deadline (assay.evidence.DEFAULT_TIMEOUT_S)
    show_default=True,
    callback=_positive_seconds,
    help="Deadline in seconds (0: none).",
)
@click.option("--cwd", type=click.Path(file_okay=False), default=".", help="Directory to run in.")
@click.option(
    "--kind",
    type=click.Choice(KINDS),
    default="test",
    show_default=True,
    help="What the command checks.",
)
@click.option(
    "--sandbox",
    type=click.Choice(SANDBOXES),
    default="auto",
    show_default=True,
    help="Where the command runs.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the evidence as JSON.")
@click.option(
    "--verifier",
    "verifier_spec",
    default=None,
    metavar="MODULE:ATTR",
    help="Run this verifier plugin (in a worker process) instead of a command.",
)
@click.argument("argv", nargs=-1, type=click.UNPROCESSED)
def run(
    timeout: float | None,
    cwd: str,
    kind: str,
    sandbox: str,
    as_json: bool,
    verifier_spec: str | None,
    argv: tuple[str, ...],
) -> None:
    """Run one command as one check and print its evidence.

    Put the command after `--`:  assay run --kind test -- pytest -q
    """
    from assay.check_verifiers import run_one, run_plugin
    from assay.plugins import PluginSpecError
    from assay.process import InvalidRun

    if bool(argv) == bool(verifier_spec):
        raise click.UsageError("give either a command after `--` or --verifier MODULE:ATTR")
    try:
        if verifier_spec:
            evidence = run_plugin(verifier_spec, cwd=cwd, timeout=timeout or None)
        else:
            evidence = run_one(
                list(argv), cwd=cwd, kind=kind, timeout=timeout or None, sandbox=sandbox
            )
    except (InvalidRun, PluginSpecError) as exc:
        raise click.UsageError(str(exc)) from None
    from assay.check_verifiers import run_status
    from assay.cli_run import print_run

    print_run(evidence, as_json=as_json)
    sys.exit(run_status(evidence).exit_code)


@cli.command()
@click.argument("path", default=".", type=click.Path(file_okay=False))
@click.option(
    "--json", "as_json", is_flag=True, help="Print the report as JSON (completion-gate keys first)."
)
@click.option(
    "--timeout",
    type=float,
    default=None,
    callback=_positive_seconds,
    help="Deadline per check, in seconds [default: stopped after 60 s without output, "
    "600 s at most].",
)
@click.option(
    "--deadline",
    type=float,
    default=None,
    callback=_positive_seconds,
    help="Budget for the whole verification, in seconds.",
)
@click.option(
    "--sandbox",
    type=click.Choice(SANDBOXES),
    default="auto",
    show_default=True,
    help="Where checks run.",
)
@click.option(
    "--kind",
    "kinds",
    type=click.Choice(KINDS),
    multiple=True,
    help="Only these kinds (repeatable).",
)
@click.option(
    "--no-cache", is_flag=True, help="Do not reuse a cached verdict for an unchanged tree."
)
@click.option(
    "--base",
    default=None,
    metavar="REF",
    help="Git ref to compare against: report tampering with protected files.",
)
@click.option(
    "--protect", is_flag=True, help="Verify with the protected files restored from --base."
)
@click.option(
    "--install", is_flag=True, help="Install dependencies first (network on for that step only)."
)
@click.option(
    "--all",
    "all_tests",
    is_flag=True,
    help="Run the whole test suite: do not stop at the first failure (pytest -x).",
)
@click.option(
    "--rerun-failures",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    metavar="N",
    help="Run failing tests again up to N times, each in a fresh process (pytest, go test): "
    "one that passes on a rerun is flaky, and its check INDETERMINATE.",
)
@click.option(
    "--junit",
    "junit_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also write JUnit XML here.",
)
@click.option(
    "--sarif",
    "sarif_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also write SARIF here.",
)
def verify(
    path: str,
    as_json: bool,
    timeout: float | None,
    deadline: float | None,
    sandbox: str,
    kinds: tuple[str, ...],
    no_cache: bool,
    base: str | None,
    protect: bool,
    install: bool,
    all_tests: bool,
    rerun_failures: int,
    junit_path: str | None,
    sarif_path: str | None,
) -> None:
    """Discover how PATH checks itself, run it, and say whether it is VERIFIED."""
    from assay.cli_verify import VerifyArgs
    from assay.cli_verify import run as run_verify
    from assay.pipeline import VerifyUsageError

    args = VerifyArgs(
        path=path,
        as_json=as_json,
        timeout=timeout,
        deadline=deadline,
        sandbox=sandbox,
        kinds=kinds,
        no_cache=no_cache,
        base=base,
        protect=protect,
        install=install,
        all_tests=all_tests,
        rerun_failures=rerun_failures,
        junit_path=junit_path,
        sarif_path=sarif_path,
    )
    try:
        code = run_verify(args)
    except VerifyUsageError as exc:
        raise click.UsageError(str(exc)) from None
    sys.exit(code)


@cli.command()
@click.argument("path", default=".", type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
@click.option(
    "--verbose", "-v", is_flag=True, help="Also list dropped candidates and detector results."
)
def plan(path: str, as_json: bool, verbose: bool) -> None:
    """Show what `assay verify` would run, and why, without running anything."""
    from assay.cli_verify import project_path
    from assay.formats import render_plan
    from assay.pipeline import VerifyOptions, VerifyUsageError, make_plan

    try:
        the_plan = make_plan(project_path(path, "planning"), VerifyOptions())
    except VerifyUsageError as exc:
        raise click.UsageError(str(exc)) from None
    if as_json:
        _emit_json(the_plan.to_dict())
    else:
        _say(render_plan(the_plan, verbose=verbose))


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the toolchains as JSON.")
def probe(as_json: bool) -> None:
    """List every toolchain assay knows, found or not, with versions."""
    from assay.probe import ProbeFailure, probe_all

    found = probe_all()
    if as_json:
        document: dict[str, Any] = {"schema": "assay.probe/1", "tools": {}}
        for tool, result in found.items():
            if isinstance(result, ProbeFailure):
                document["tools"][tool] = {
                    "found": False,
                    "error": str(result),
                    "install": result.install_hint,
                }
            else:
                document["tools"][tool] = {"found": True, **result.to_dict()}
        _emit_json(document)
        return
    for tool, result in found.items():
        if isinstance(result, ProbeFailure):
            _say(f"{tool:<14} missing   {result.install_hint}")
        else:
            _say(f"{tool:<14} {result.version:<10} {result.path}")


def run_cli(argv: list[str] | None) -> int:
    """Run the command `argv` (else the process's arguments) names; returns the exit code."""
    try:
        cli.main(args=argv, prog_name="assay", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except (click.Abort, KeyboardInterrupt):
        return _interrupted()
    except click.ClickException as exc:
        return _shown(exc)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else USAGE_ERROR_EXIT
    return 0


def verify_usage_error(message: str) -> int:
    """Say what click says for a usage error `message` of `assay verify`, and give its exit
    code: for the click-less way (`assay.cli_verify`), when the verification refused."""
    parent = click.Context(cli, info_name="assay")
    return _shown(
        click.UsageError(message, click.Context(verify, info_name="verify", parent=parent))
    )


def _shown(exc: click.ClickException) -> int:
    import io

    shown = io.StringIO()  # the message may quote the repository's configuration
    exc.show(file=shown)
    _say(shown.getvalue().removesuffix("\n"), err=True)
    return USAGE_ERROR_EXIT


def _interrupted() -> int:
    from assay.cli_run import interrupted

    return interrupted()


# The harness's commands (`eval`, `report`, `tasks`): their module imports only click.
from assay.eval.commands import register as _register_eval_commands

_register_eval_commands(cli)

# `assay hook`: its module imports only click; the library loads when a hook verifies.
from assay.hooks.commands import register as _register_hook_commands

_register_hook_commands(cli)

# `assay mcp`: its module imports only click; the MCP SDK loads when the server starts.
from assay.mcp.commands import register as _register_mcp_commands

_register_mcp_commands(cli)

# `assay server`: its module imports only click; the server loads in its own process.
from assay.warm_commands import register as _register_server_commands

_register_server_commands(cli)

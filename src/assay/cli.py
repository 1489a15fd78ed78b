"""The `assay` console script's entry point.

Start-up time matters (agents call `assay` in loops): this module loads nothing but
the version, so `assay --version` answers without click or the library. The plain forms
of `run` and `verify`, called in agents' loops, are parsed without click too
(`assay.cli_run`, `assay.cli_verify`). Every other invocation goes to the commands
(`assay.cli_commands`), loaded only then.
"""

from __future__ import annotations

import sys

from assay._version import __version__


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:
        sys.stdout.write(f"assay {__version__}\n")
        return 0
    if argv is None and args[:1] and (code := _run_warm(args)) is not None:
        _exit_now(code)
        return code
    if argv is None:
        _collect_less_often()
    from assay import dataclass_bytecode, pattern_code

    dataclass_bytecode.install()  # before any of assay's dataclasses is defined
    pattern_code.install()  # and before the modules that compile patterns load
    import signal

    # SIGTERM takes the same way out as Ctrl-C: every process assay started is killed.
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        if args[:1] == ["run"] and (code := _run_without_click(args[1:])) is not None:
            if argv is None:
                _exit_now(code)
            return code
        if args[:1] == ["verify"] and (code := _verify_without_click(args[1:])) is not None:
            if argv is None:
                _exit_now(code)
            return code
        if args == ["mcp"]:  # the host waits for its answer to `initialize`
            from assay.mcp.front import main as serve_mcp

            return serve_mcp()
        if args[:2] == ["hook", "claude-code"] and (code := _stop_hook(args[2:])) is not None:
            return code
        from assay.cli_commands import run_cli

        return run_cli(argv)
    finally:
        signal.signal(signal.SIGTERM, previous)
        dataclass_bytecode.save()
        pattern_code.save()


#: Container objects allocated between two collections of the youngest generation: a run
#: allocates tens of thousands of long-lived ones as it loads (modules, classes, plans) and
#: few cycles; at Python's default (700) a verify collected some 60 times, 10 ms that freed
#: almost nothing.
GC_YOUNG_THRESHOLD = 50_000


def _collect_less_often() -> None:
    """Raise the collector's first threshold for this process (the console script's only:
    a program that calls `main` keeps its own)."""
    import gc

    young, older, oldest = gc.get_threshold()
    gc.set_threshold(max(GC_YOUNG_THRESHOLD, young), older, oldest)


def _run_warm(args: list[str]) -> int | None:
    """The exit code of `assay ARGS` run by a warm server (`assay server start`), or
    None when none took it (nothing ran then)."""
    from assay import warm_client

    if args[0] not in warm_client.COMMANDS:
        return None
    return warm_client.run_warm(args)


def _run_without_click(args: list[str]) -> int | None:
    """`assay run ARGS` the short way (`assay.cli_run`); None: for click to parse."""
    from assay import cli_run

    parsed = cli_run.parse(args)
    if parsed is None:
        return None
    try:
        return cli_run.run(parsed)
    except KeyboardInterrupt:
        return cli_run.interrupted()


def _verify_without_click(args: list[str]) -> int | None:
    """`assay verify ARGS` the short way (`assay.cli_verify`); None: for click to parse."""
    from assay import cli_verify

    parsed = cli_verify.parse(args)
    if parsed is None:
        return None
    from assay.pipeline import VerifyUsageError

    try:
        return cli_verify.run(parsed)
    except VerifyUsageError as exc:
        from assay.cli_commands import verify_usage_error

        return verify_usage_error(str(exc))
    except KeyboardInterrupt:
        from assay import cli_run

        return cli_run.interrupted()


def _stop_hook(args: list[str]) -> int | None:
    """`assay hook claude-code ARGS` without click: it runs at every stop
    (`assay.hooks.stop_hook`); None: for click to parse."""
    from assay.hooks import stop_hook

    parsed = stop_hook.parse(args)
    return None if parsed is None else stop_hook.run(parsed)


def _exit_now(code: int) -> None:
    """End the process with `code` once its output is out, skipping the interpreter's
    teardown: freeing every module and object costs a bare run tens of milliseconds, and
    nothing is left to clean (every scratch directory and child is gone by now). Returns
    only when the output could not be flushed; the caller then exits the usual way."""
    import os

    for table in ("assay.dataclass_bytecode", "assay.pattern_code"):
        kept = sys.modules.get(table)  # not loaded for a warm run
        if kept is not None:
            kept.save()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code)


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt

"""The `assay` console script's entry point.

Start-up time matters (agents call `assay` in loops): this module loads nothing but
the version, so `assay --version` answers without click or the library. Every other
invocation goes to the commands (`assay.cli_commands`), loaded only then.
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
    import signal

    from assay.cli_commands import run_cli

    # SIGTERM takes the same way out as Ctrl-C: every process assay started is killed.
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        return run_cli(argv)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt

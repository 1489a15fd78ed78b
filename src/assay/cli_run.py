"""`assay run` without click: its few options parsed by hand, one command run, its evidence printed.

`assay run -- CMD` should cost little more than `CMD` (agents and scripts wrap every
command in it), and most of what the other commands need is no use here: click alone
takes longer to import than the rest of a bare run's start-up. So `assay.cli` hands a
well-formed `run` to `parse` first. Only the plain forms are taken -- the options
`--timeout`, `--cwd`, `--kind`, `--sandbox`, `--json` (`--name value` or
`--name=value`), then `--` and a command; anything else (`--help`, `--verifier`, an
unknown option, a value click would refuse, a directory that is not one) gets None back,
and click parses it as before, with its own messages. What runs and what is printed is
the same on both ways: `assay.cli_commands`' `run` prints through `print_run` too.
"""

from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from assay.evidence import Evidence

#: The choices click offers for `--kind` and `--sandbox` (`assay.cli_commands`).
KINDS = ("build", "typecheck", "lint", "test")
SANDBOXES = ("auto", "bwrap", "local", "none")


@dataclass(frozen=True, slots=True)
class RunArgs:
    """`assay run`'s arguments, as click would have given them."""

    argv: tuple[str, ...]
    timeout: float = 60.0  # click's default for `--timeout` (verify's per-check deadline)
    cwd: str = "."
    kind: str = "test"
    sandbox: str = "auto"
    as_json: bool = False


def parse(args: list[str]) -> RunArgs | None:
    """`args` (after `run`) when they are in a plain form this parser takes; else None."""
    try:
        dashes = args.index("--")
    except ValueError:
        return None  # no command, or `--verifier`: click's
    options, argv = args[:dashes], tuple(args[dashes + 1 :])
    if not argv:
        return None
    values: dict[str, Any] = {"argv": argv}
    words = iter(options)
    for word in words:
        if word == "--json":
            values["as_json"] = True
            continue
        name, equals, value = word.partition("=")
        if name not in ("--timeout", "--cwd", "--kind", "--sandbox"):
            return None
        if not equals:
            value = next(words, "")
        if not value or value.startswith("-"):
            return None  # a missing or odd value: click says what is wrong with it
        values[name[2:]] = value
    return _checked(values)


def _checked(values: dict[str, Any]) -> RunArgs | None:
    """`values` as `RunArgs` when click would have accepted every one of them."""
    if "timeout" in values:
        try:
            timeout = float(values["timeout"])
        except ValueError:
            return None
        if math.isnan(timeout) or timeout < 0:
            return None
        values["timeout"] = timeout
    if values.get("kind", "test") not in KINDS or values.get("sandbox", "auto") not in SANDBOXES:
        return None
    if not os.path.isdir(values.get("cwd", ".")):
        return None  # click's message for a file, the run's for a missing directory
    return RunArgs(**values)


def run(args: RunArgs) -> int | None:
    """Run the command `args` names and print its evidence; the exit code, or None when
    the run refused its arguments before anything ran (click then says why)."""
    from assay.check_verifiers import run_one, run_status
    from assay.process import InvalidRun

    try:
        evidence = run_one(
            list(args.argv),
            cwd=args.cwd,
            kind=args.kind,
            timeout=args.timeout or None,
            sandbox=args.sandbox,
        )
    except InvalidRun:
        return None
    print_run(evidence, as_json=args.as_json)
    return run_status(evidence).exit_code


def print_run(evidence: Evidence, *, as_json: bool) -> None:
    """What `assay run` prints for `evidence`: a line on stderr when stale scratch was
    swept, then the evidence as JSON or for a person."""
    swept = evidence.extra.get("swept")
    if swept:
        from assay.scratch import describe_sweep

        write(describe_sweep(swept), err=True)
    if as_json:
        import json  # here: a plain-text run never needs it

        from assay.terminal import json_for_terminal

        write(json_for_terminal(json.dumps(evidence.to_dict(), indent=2, ensure_ascii=False)))
    else:
        _print_evidence(evidence)


def say(text: str, *, err: bool = False) -> None:
    """Write one piece of human output, shown (never obeyed) by the terminal: what the
    repository printed may be in it."""
    from assay.terminal import for_terminal

    write(for_terminal(text), err=err)


def write(text: str, *, err: bool = False) -> None:
    """`text` and a newline, flushed, as `click.echo` writes it: where the stream cannot
    encode a character, UTF-8 with replacements."""
    stream = sys.stderr if err else sys.stdout
    if stream is None:
        return
    line = text + "\n"
    try:
        try:
            stream.write(line)
        except UnicodeEncodeError:
            stream.buffer.write(line.encode("utf-8", "replace"))
        stream.flush()
    except BrokenPipeError:
        _reader_gone(stream)


def _reader_gone(stream: TextIO) -> None:
    """The reader of `stream` closed it (`assay verify | head`): the rest of the output
    goes nowhere, and the run goes on to its verdict and exit status. The descriptor is
    pointed at /dev/null so that no later write or flush fails again."""
    import os

    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)
    except (OSError, ValueError):
        pass


def _print_evidence(evidence: Evidence) -> None:
    from assay.report import summary_line

    say(summary_line(evidence))
    if evidence.checker is not None:
        say(f"  checker: {evidence.checker.tool} {evidence.checker.version}")
    for diag in evidence.diagnostics[:10]:
        where = f"{diag.place}: " if diag.file else ""
        say(f"  {where}{diag.message}")
    if evidence.note:
        say(f"  note: {evidence.note}")
    first_reason_line = evidence.reason.strip().split("\n", 1)[0]
    if (
        not evidence.passed
        and evidence.reason
        and not evidence.diagnostics
        and first_reason_line not in evidence.note
    ):
        say(_indent(evidence.reason[-2000:]))


def _indent(text: str) -> str:
    return "\n".join("  | " + line for line in text.splitlines())


#: Exit code after an interrupt (128 + SIGINT), as shells report it.
INTERRUPTED_EXIT = 130


def interrupted() -> int:
    """Stop every command this process started, say so, and give the exit code."""
    from assay.process import kill_active_runs

    stopped = kill_active_runs(and_later=True)
    say(f"Interrupted: stopped {stopped} running command(s); nothing was verified.", err=True)
    return INTERRUPTED_EXIT

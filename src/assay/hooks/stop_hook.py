"""`assay hook claude-code` without click: the Stop hook runs at every stop, so it starts
with nothing but what it needs to read the event (`assay.cli` calls `parse` first and
hands anything it does not recognise, `--help` included, to click).
"""

from __future__ import annotations

import math
import sys

TYPE_CHECKING = False  # not `typing`: this module is loaded at every stop
if TYPE_CHECKING:
    from assay.hooks.decide import Decision

from assay.hooks.limits import DEFAULT_DEADLINE_S, DEFAULT_MAX_BLOCKS

__all__ = ["StopHookArgs", "parse", "run"]

#: The event at which `--protect` records the base the work is judged against.
PROMPT_EVENT = "UserPromptSubmit"
#: Exit status after an interrupt (128 + SIGINT), as `assay`'s other commands end.
INTERRUPTED_EXIT = 130


class StopHookArgs:
    """The options of `assay hook claude-code`, checked."""

    __slots__ = ("deadline_s", "max_blocks", "protect")

    def __init__(
        self,
        max_blocks: int = DEFAULT_MAX_BLOCKS,
        deadline_s: float = DEFAULT_DEADLINE_S,
        protect: bool = False,
    ) -> None:
        self.max_blocks = max_blocks
        self.deadline_s = deadline_s
        self.protect = protect


def parse(args: list[str]) -> StopHookArgs | None:
    """The options in `args`; None when they are anything but valid `--max-blocks N`,
    `--deadline S` and `--protect` (click then parses them, and says what is wrong)."""
    parsed = StopHookArgs()
    rest = list(args)
    while rest:
        name, _, value = rest.pop(0).partition("=")
        if name == "--protect" and not value:
            parsed.protect = True
            continue
        if name not in ("--max-blocks", "--deadline"):
            return None
        if not value:
            if not rest:
                return None
            value = rest.pop(0)
        try:
            if name == "--max-blocks":
                parsed.max_blocks = int(value)
            else:
                parsed.deadline_s = float(value)
        except ValueError:
            return None
    if parsed.max_blocks < 1 or not (math.isfinite(parsed.deadline_s) and parsed.deadline_s > 0):
        return None
    return parsed


def run(args: StopHookArgs) -> int:
    """Read the event on stdin, verify, print the decision; always exit status 0 (the
    decision is the JSON printed: any other status is a hook error to the caller)."""
    import os

    from assay.hooks import claude_code

    def say(decision: Decision) -> int:
        if text := claude_code.output_for(decision):
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
        return 0

    raw = b"" if sys.stdin is None or sys.stdin.isatty() else _read_stdin()
    try:
        event = claude_code.parse_input(raw, os.getcwd())
    except claude_code.InputError as exc:
        from assay.hooks.decide import decide

        why = claude_code.input_problem(exc)
        return say(decide(claude_code.UNREADABLE_KEY, why, max_blocks=args.max_blocks))
    if args.protect and event.event == PROMPT_EVENT:
        return _record_base(event.key, event.cwd)
    if not event.is_stop:
        sys.stderr.write(
            f"assay hook claude-code: {event.event!r} is not a stop event; nothing checked\n"
        )
        return 0
    from pathlib import Path

    from assay.hooks.run import run_hook

    try:
        return run_hook(
            event.key,
            Path(event.cwd),
            say,
            max_blocks=args.max_blocks,
            deadline_s=args.deadline_s,
            continuing=event.stop_hook_active,
            protect=args.protect,
        )
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM (`assay.cli`): the caller gave up on us
        from assay.process import kill_active_runs

        kill_active_runs(and_later=True)
        return INTERRUPTED_EXIT


def _record_base(key: str, cwd: str) -> int:
    """At a prompt: record the tree the work will be judged against. Prints nothing on
    stdout (Claude Code hands a prompt hook's stdout to the model) and never blocks the
    prompt; a base that could not be recorded is said at the stop, which then blocks."""
    from pathlib import Path

    from assay.hooks.prompt_base import record_base
    from assay.repo_root import project_root

    directory = Path(cwd)
    if not directory.is_dir():
        sys.stderr.write(f"assay hook claude-code: {cwd} is not a directory; no base recorded\n")
        return 0
    try:
        record_base(key, project_root(directory.resolve()).root)
    except Exception as exc:  # the stop says it: it finds no base, or an older one
        sys.stderr.write(
            f"assay hook claude-code: no base recorded ({type(exc).__name__}: {exc})\n"
        )
    return 0


def _read_stdin() -> bytes:
    from assay.hooks.claude_code import MAX_INPUT_BYTES

    return sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)

"""The `assay hook` commands: the Claude Code Stop hook, the generic gate, and
installing the hook into Claude Code's settings.

Only click is imported here: a hook runs at every stop, so `assay hook` starts without
the library and loads it only once it has something to verify.

Exit codes: `claude-code` always 0 (its decision is the JSON it prints); `gate` 2 to
block (the reason on stderr), 0 to let through; `install`/`uninstall` 0, or 2 when the
settings file could not be read or written (left as it was).
"""

from __future__ import annotations

import os
import sys

import click

from assay.hooks.limits import DEFAULT_DEADLINE_S, DEFAULT_MAX_BLOCKS

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: typing costs start-up time
if TYPE_CHECKING:
    from assay.hooks.decide import Decision

#: The generic gate blocks with this exit status (the convention of agent hook runners).
BLOCK_EXIT = 2
USAGE_EXIT = 2
#: Names the caller of `assay hook gate` when `--session` does not.
SESSION_VAR = "ASSAY_HOOK_SESSION"

_max_blocks = click.option(
    "--max-blocks",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_BLOCKS,
    show_default=True,
    help="Blocks in a row before a stop is let through (with the gap stated).",
)
_deadline = click.option(
    "--deadline",
    type=click.FloatRange(min=0, min_open=True),
    default=DEFAULT_DEADLINE_S,
    show_default=True,
    help="Budget in seconds for the verification; past it the stop is blocked.",
)


@click.group("hook")
def hook_group() -> None:
    """Agent hooks: block a completion claim until the project is VERIFIED."""


_protect = click.option(
    "--protect",
    is_flag=True,
    help="Judge the work against the tree as it was when the prompt was given "
    "(`verify --base --protect`), recorded by the same command at UserPromptSubmit.",
)


@hook_group.command("claude-code")
@_max_blocks
@_deadline
@_protect
def claude_code_command(max_blocks: int, deadline: float, protect: bool) -> None:
    """Claude Code Stop hook: reads the event on stdin, prints a block decision unless
    the project is VERIFIED."""
    from assay.hooks.stop_hook import StopHookArgs, run

    sys.exit(run(StopHookArgs(max_blocks, deadline, protect)))


@hook_group.command("gate")
@click.argument("path", default=".", type=click.Path(file_okay=False))
@click.option(
    "--session", default=None, help=f"Whose blocks are counted (else ${SESSION_VAR}, else PATH)."
)
@click.option(
    "--base",
    "base",
    default=None,
    metavar="REF",
    help="Judge the work against commit REF, with its plan and tests (`verify --base REF --protect`).",
)
@_max_blocks
@_deadline
def gate_command(
    path: str, session: str | None, base: str | None, max_blocks: int, deadline: float
) -> None:
    """Generic agent gate: exit 2 with the reason on stderr unless PATH is VERIFIED."""
    from pathlib import Path

    from assay.hooks.run import run_hook

    key = "gate:" + (session or os.environ.get(SESSION_VAR) or str(Path(path).resolve()))

    def say(decision: Decision) -> int:
        if text := decision.reason if decision.block else decision.notice:
            from assay.terminal import for_terminal

            click.echo(for_terminal(text), err=True)
        return BLOCK_EXIT if decision.block else 0

    sys.exit(run_hook(key, Path(path), say, max_blocks=max_blocks, deadline_s=deadline, base=base))


_scope = [
    click.option(
        "--project",
        "scope",
        flag_value="project",
        default=True,
        help="This project's .claude/settings.json (default).",
    ),
    click.option("--user", "scope", flag_value="user", help="Your ~/.claude/settings.json."),
]


@hook_group.command("install")
@click.argument("target", type=click.Choice(["claude-code"]))
@_scope[0]
@_scope[1]
@click.option(
    "--command",
    "command",
    default=None,
    help="The command the hook runs (default: assay hook claude-code).",
)
@_protect
def install_command(target: str, scope: str, command: str | None, protect: bool) -> None:
    """Add the Stop hook (with --protect, the UserPromptSubmit hook too) to Claude Code's
    settings, keeping everything already there."""
    from assay.hooks import settings

    path = settings.settings_path(scope)
    try:
        changed = settings.install(path, command or settings.DEFAULT_COMMAND, protect=protect)
    except settings.SettingsError as exc:
        _fail(str(exc))
    what = "the Stop and UserPromptSubmit hooks" if protect else "the Stop hook"
    click.echo(
        f"assay: {'installed ' + what + ' in' if changed else 'already installed in'} {path}"
    )


@hook_group.command("uninstall")
@click.argument("target", type=click.Choice(["claude-code"]))
@_scope[0]
@_scope[1]
def uninstall_command(target: str, scope: str) -> None:
    """Remove assay's hooks from Claude Code's settings, and nothing else."""
    from assay.hooks import settings

    path = settings.settings_path(scope)
    try:
        removed = settings.uninstall(path)
    except settings.SettingsError as exc:
        _fail(str(exc))
    click.echo(f"assay: {'removed its hooks from' if removed else 'no assay hook in'} {path}")


def _fail(message: str) -> None:
    from assay.terminal import for_terminal

    click.echo(for_terminal(f"error: {message}"), err=True)
    raise SystemExit(USAGE_EXIT)


def register(group: click.Group) -> None:
    """Add `assay hook` to the `assay` command group."""
    group.add_command(hook_group)

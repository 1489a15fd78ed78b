"""One hook run: verify the project under a watchdog, decide, say the decision once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from assay.hooks.decide import Decision, decide, verify_reason
from assay.hooks.watchdog import Answer

__all__ = ["run_hook"]

_NO_BASE = (
    "assay: --protect judges the work against the tree as it was when the prompt was given, "
    "and none was recorded for this session, so nothing was verified. "
    "`assay hook install claude-code --protect` adds the UserPromptSubmit hook that records "
    "it; it takes effect from the next prompt."
)


def run_hook(
    key: str,
    directory: Path,
    say: Callable[[Decision], int],
    *,
    max_blocks: int,
    deadline_s: float,
    continuing: bool = False,
    protect: bool = False,
    base: str | None = None,
) -> int:
    """Verify the project at `directory` and `say` the decision for caller `key`; the
    exit code `say` chose. Against commit `base` with `--protect` when given; with
    `protect`, against the base recorded at the caller's prompt
    (`assay.hooks.prompt_base`). Every way this can go wrong ends in a decision: a block
    within the cap, never a traceback and never a pass."""

    def late() -> Decision:
        why = (
            f"assay: the verification did not finish within its {deadline_s:g} s budget; "
            "nothing was verified."
        )
        return decide(key, why, max_blocks=max_blocks, continuing=continuing)

    if protect and (recorded := _recorded_root(key)) is not None:
        # Where the prompt was given: a stop's cwd is wherever the agent's shell last went,
        # and one moved out of every project let a broken change's stop through unjudged.
        directory = recorded
    if directory.is_dir() and not _in_a_project(directory):
        # A user-wide hook also sees chats outside any project: nothing there to gate.
        notice = f"assay: {directory} is in no project (no project file, no git repository); nothing to verify."
        return say(Decision(block=False, notice=notice))
    answer = Answer(say, late)
    answer.arm(deadline_s)
    unprotected = ""
    try:
        if protect:
            why_not, unprotected = _protected_reason(key, directory, deadline_s)
        else:
            why_not = verify_reason(directory, deadline_s, base=base)
    except Exception as exc:  # the hook's own error: fail closed, within the cap
        why_not = f"assay could not finish ({type(exc).__name__}: {exc}); nothing was verified."
    decision = decide(key, why_not, max_blocks=max_blocks, continuing=continuing)
    if unprotected and not decision.block and not decision.notice:
        decision = Decision(block=False, notice=f"assay verified the project, but {unprotected}")
    return answer.give(decision)


def _protected_reason(key: str, directory: Path, deadline_s: float) -> tuple[str | None, str]:
    """Why the work is not VERIFIED against its prompt's base (None: it is), and, when no
    base could be kept (no git repository), what was left unprotected."""
    from assay.hooks.prompt_base import base_for, moved_repository

    base = base_for(key)
    if base is None:
        return _NO_BASE, ""
    if base.error:
        return (
            f"assay: the tree at the prompt could not be recorded ({base.error}); nothing was verified.",
            "",
        )
    if base.unprotected:
        why = f"the tests were not protected: {base.unprotected}."
        return verify_reason(directory, deadline_s), why
    if (moved := moved_repository(base)) is not None:
        return f"assay: {moved}; nothing was verified.", ""
    return verify_reason(Path(base.root), deadline_s, base=base.commit), ""


def _recorded_root(key: str) -> Path | None:
    """The project the base recorded at `key`'s prompt is of; None when none was recorded."""
    from assay.hooks.prompt_base import base_for

    base = base_for(key)
    return None if base is None else Path(base.root)


def _in_a_project(directory: Path) -> bool:
    from assay.repo_root import in_a_project

    try:
        return in_a_project(directory.resolve())
    except OSError:
        return True  # unsure: verify, and let the verification say what is wrong

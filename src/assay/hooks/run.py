"""One hook run: verify the project under a watchdog, decide, say the decision once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from assay.hooks.decide import Decision, decide, verify_reason
from assay.hooks.watchdog import Answer

__all__ = ["run_hook"]


def run_hook(
    key: str,
    directory: Path,
    say: Callable[[Decision], int],
    *,
    max_blocks: int,
    deadline_s: float,
    continuing: bool = False,
) -> int:
    """Verify the project at `directory` and `say` the decision for caller `key`; the
    exit code `say` chose. Every way this can go wrong ends in a decision: a block
    within the cap, never a traceback and never a pass."""

    def late() -> Decision:
        why = (
            f"assay: the verification did not finish within its {deadline_s:g} s budget; "
            "nothing was verified."
        )
        return decide(key, why, max_blocks=max_blocks, continuing=continuing)

    if directory.is_dir() and not _in_a_project(directory):
        # A user-wide hook also sees chats outside any project: nothing there to gate.
        notice = f"assay: {directory} is in no project (no project file, no git repository); nothing to verify."
        return say(Decision(block=False, notice=notice))
    answer = Answer(say, late)
    answer.arm(deadline_s)
    try:
        why_not = verify_reason(directory, deadline_s)
    except Exception as exc:  # the hook's own error: fail closed, within the cap
        why_not = f"assay could not finish ({type(exc).__name__}: {exc}); nothing was verified."
    return answer.give(decide(key, why_not, max_blocks=max_blocks, continuing=continuing))


def _in_a_project(directory: Path) -> bool:
    from assay.repo_root import in_a_project

    try:
        return in_a_project(directory.resolve())
    except OSError:
        return True  # unsure: verify, and let the verification say what is wrong

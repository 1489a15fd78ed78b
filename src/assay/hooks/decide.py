"""The decision every hook shares: verify the project, then block or let the stop through.

Only VERIFIED lets a stop through on its merits. Anything else -- a failed or
inconclusive report, input the hook could not read, an error of the hook itself --
blocks, but never more than `max_blocks` times in a row for one key: a gate that can
never be passed would trap its caller forever, so at the cap the stop goes through and
the gap is said out loud instead.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from assay.hooks.limits import DEFAULT_MAX_BLOCKS
from assay.hooks.state import STALE_CHAIN_S, BlockChain, StateError, chain_for

__all__ = ["Decision", "decide", "verify_reason"]


@dataclass(frozen=True, slots=True)
class Decision:
    """What to tell the caller: block with `reason` (for whoever must fix the code), or
    let through, with `notice` (for the person watching) when something was not verified."""

    block: bool
    reason: str = ""
    notice: str = ""


def verify_reason(
    directory: Path, deadline_s: float | None, *, base: str | None = None
) -> str | None:
    """None when the project `directory` is in is VERIFIED (against commit `base` with
    `--protect`, when given); else why not, as the stop's reason. Never raises for the
    project: errors of the verification are reasons too."""
    from assay.pipeline import VerifyOptions, VerifyUsageError, verify
    from assay.repo_root import project_root

    if not directory.is_dir():
        return f"assay: {directory} is not a directory; nothing could be verified."
    if base is not None:
        from assay.repo_root import linked_base_refusal

        # Before it is resolved: the link would be followed, out of sight.
        if (refusal := linked_base_refusal(directory)) is not None:
            return f"assay: {refusal}."
    root = str(project_root(directory.resolve()).root)
    options = VerifyOptions(deadline_s=deadline_s, base=base, protect=base is not None)
    try:
        report = verify(root, options)
    except VerifyUsageError as exc:
        return f"assay: the project at {root} could not be verified: {exc}"
    if report.verified:
        return None
    from assay.hooks.reason import unverified_reason

    return unverified_reason(report, root, base=base)


def decide(
    key: str,
    why_not: str | None,
    *,
    max_blocks: int = DEFAULT_MAX_BLOCKS,
    continuing: bool = False,
    chain: BlockChain | None = None,
) -> Decision:
    """The decision for the caller `key`, given why the project is not VERIFIED (None:
    it is). `continuing`: the caller says this stop follows a block (a fresh stop after a
    long idle chain starts a new one)."""
    try:
        chain = chain or chain_for(key)
        if not continuing and chain.idle_for(time.time()) > STALE_CHAIN_S:
            chain.reset()
        if why_not is None:
            chain.reset()
            return Decision(block=False)
        if chain.blocks >= max_blocks:
            chain.reset()  # the chain is over: the next stop is checked afresh
            return Decision(block=False, notice=_gap(why_not, max_blocks))
        chain.add_block()
    except StateError as exc:
        # Without a count there is no cap, and a block without a cap may never end.
        if why_not is None:
            return Decision(block=False)
        return Decision(
            block=False,
            notice=f"assay could not count its blocks ({exc}), so it did not block: {why_not}",
        )
    count = f"(assay block {chain.blocks} of {max_blocks} in a row; after that the stop is let through.)"
    return Decision(block=True, reason=f"{why_not}\n\n{count}")


def _gap(why_not: str, max_blocks: int) -> str:
    """For the person watching: short, the status and how to see the rest."""
    lines = why_not.splitlines()
    head = lines[: lines.index("")] if "" in lines else lines[:2]
    tail = [line for line in lines if line.startswith("Reproduce:")]
    return "\n".join(
        [
            f"assay let this stop through after {max_blocks} blocks in a row: the work is not verified."
        ]
        + head
        + tail
    )

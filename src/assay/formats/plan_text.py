"""The human rendering of a plan (`assay plan`): what would run, in which stage, and why.

The stages are the ones `verify` runs: each after the one before has ended, the checks
of one stage side by side."""

from __future__ import annotations

import shlex

from assay.plan import Plan, Stage

#: What each stage means, under its heading.
_STAGE_NOTE = {
    Stage.BUILD: "first: later checks read what it makes",
    Stage.CHECK: "skipped if a build failed",
    Stage.LAST: "after the other checks: in the project's CI, they never read what it makes",
}


def render_plan(plan: Plan, *, verbose: bool = False) -> str:
    """A short, readable plan; `verbose` adds every dropped candidate."""
    if plan.root_problem:
        return f"cannot plan: {plan.root_problem}\n"
    if plan.config_error:
        return f"assay configuration error: {plan.config_error}\n"
    lines = [f"plan for {plan.root}"]
    if plan.env is not None:
        lines.append(f"  python: {plan.env.python} ({plan.env.python_source})")
        if plan.env.node_bin:
            lines.append(f"  node tools: {plan.env.node_bin}")
    if not plan.checks:
        lines.append("")
        lines.append(f"nothing to run: {plan.empty_note}")
    for number, stage in enumerate(plan.stages, start=1):
        together = " (in parallel)" if len(stage.checks) > 1 else ""
        lines.append("")
        lines.append(f"{number}. {stage.stage.value}{together}")
        if number > 1 or stage.stage is Stage.BUILD:
            lines.append(f"   ({_STAGE_NOTE[stage.stage]})")
        for check in stage.checks:
            cwd = f" (in {check.cwd})" if check.cwd not in (".", "") else ""
            lines.append(f"   {check.name:<14} {shlex.join(check.argv)}{cwd}")
            lines.append(f"   {'':<14} {check.kind.value}, from {check.source}: {check.reason}")
            if check.env:
                lines.append(
                    f"   {'':<14} env: {' '.join(f'{k}={v}' for k, v in check.env.items())}"
                )
            quiet = check.no_output_timeout_s
            limit = f", or {quiet:g}s without output" if quiet else ""
            lines.append(f"   {'':<14} timeout {check.timeout_s:g}s{limit}")
    lines.append("")
    lines.append(
        "tests required for VERIFIED" if plan.require_tests else "tests not required (configured)"
    )
    for note in plan.notes:
        lines.append(f"note: {note}")
    for error in plan.errors:
        lines.append(f"error: {error}")
    if plan.dropped:
        if verbose:
            lines += [f"  {d}" for d in plan.dropped]
        else:
            lines.append(
                f"{len(plan.dropped)} other candidate(s) dropped (--json shows each, with why)"
            )
    return "\n".join(lines) + "\n"

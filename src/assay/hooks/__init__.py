"""Agent hooks: `assay verify` as the gate a completion claim must pass.

    commands      the `assay hook` command group (imports only click)
    stop_hook     `assay hook claude-code` without click, called first by `assay.cli`
    claude_code   the Claude Code Stop hook's contract: event in, decision out
    run           one hook run: verify under a watchdog, decide, answer once
    decide        VERIFIED lets through; anything else blocks, within a cap
    reason        what a block says, for whoever must fix the code
    state         the count of blocks in a row, per caller
    watchdog      the answer given before the caller's own timeout would
    settings      the hook added to / removed from Claude Code's settings file
    limits        the defaults (blocks in a row, the verification's budget)

Nothing is imported here, so that `assay hook --help` pays only for click.
"""

"""The lines a person reads about the base and tampering, under a report's checks (pure).

Every signal `--base` found and every protected file the change's code rewrote during
the run is shown, whatever the status: a reader sees what the change did to its own
tests, and whether `--protect` undid it.
"""

from __future__ import annotations

from assay.report import Report, signal_line, tampering_counted

#: How each line begins, so that a reader (or a grep) finds them.
PREFIX = "tampering:"


def tampering_lines(report: Report) -> list[str]:
    """One line per tampering signal and per rewritten protected file."""
    record = report.record
    undone: set[str] = set()
    if record.protected is not None:
        undone = {*record.protected.restored, *record.protected.removed}
    signals = (record.tampering or {}).get("signals") or []
    lines = []
    for signal in signals:
        if not isinstance(signal, dict):
            continue
        restored = " (restored from the base)" if signal.get("path") in undone else ""
        lines.append(f"{PREFIX} {signal_line(signal)}{restored}")
    for rewrite in record.rewritten:
        lines += [
            f"{PREFIX} rewritten after {rewrite.after}: {p} (put back)" for p in rewrite.restored
        ]
        added = (*rewrite.removed, *rewrite.added_code)
        lines += [f"{PREFIX} added after {rewrite.after}: {p} (removed)" for p in added]
    if lines and not tampering_counted(record):
        lines.append(f"{PREFIX} not counted against the verdict: undone, or files a run adds")
    return lines


def base_line(report: Report) -> str | None:
    """The commit a `--base` given by name stood for, and why that name is no anchor: a
    ref is a file of the repository, which work that could run commands could move."""
    base = report.record.base or {}
    named, commit = base.get("named"), base.get("commit")
    if not named or not commit or named.lower() == commit.lower():
        return None
    return (
        f"base: {named} named commit {commit}; a name is read from the repository, which "
        "work that could run commands could have changed: to judge such work, pass the "
        "commit id recorded before it began"
    )

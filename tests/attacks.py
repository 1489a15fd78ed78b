"""What the attack tests share: a change committed on top of its base, verified as work
nobody trusts (`--base HEAD~1 --protect`), and a report explained when an assertion fails."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import assay
from assay.pipeline import VerifyOptions
from assay.report import Report
from tests.repos import commit_all, write, write_dedented


def change_on_base(
    root: Path, base: Mapping[str, str], change: Mapping[str, str], *, dedent: bool = True
) -> Path:
    """A repository whose HEAD~1 holds `base` and whose HEAD adds `change` on top."""
    put = write_dedented if dedent else write
    commit_all(put(root, base), "base")
    return commit_all(put(root, change), "change")


def verify_change(repo: Path, **options: Any) -> Report:
    """`assay verify --base HEAD~1 --protect --no-cache`, with `options` laid over it."""
    chosen: dict[str, Any] = {"base": "HEAD~1", "protect": True, "use_cache": False, **options}
    return assay.verify(repo, VerifyOptions(**chosen))


def tamper_signals(report: Report, kind: str | None = None) -> list[dict[str, Any]]:
    """The tampering signals the report records (of one kind, when `kind` is given)."""
    signals = (report.record.tampering or {}).get("signals") or []
    return [s for s in signals if kind is None or s["kind"] == kind]


def explain(report: Report) -> str:
    """The report as a failing assertion shows it: each check, its canaries and its output."""
    lines = [f"{report.status.value}: {report.note}"]
    for evidence in report.checks:
        lines.append(f"  {evidence.check.name}: {evidence.verdict.value}/{evidence.cause.value}")
        lines.append(f"    {evidence.note}")
        if "canaries" in evidence.extra:
            lines.append(f"    canaries: {json.dumps(evidence.extra['canaries'])}")
        if evidence.result is not None:
            lines.append("    argv: " + " ".join(evidence.result.argv))
            lines.append(evidence.result.stdout.text[-2000:] + evidence.result.stderr.text[-2000:])
    return "\n".join(lines)

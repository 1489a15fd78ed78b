"""Asking each tool for machine-readable output: the flags and report paths `run_check` adds.

Pure: from a check, the probed checker and a report directory to the argv and
environment to run. Each tool's rule is part of its declaration (`assay.tools`).
Where a tool can be told where to write (pytest, jest, vitest, go test -json...), its
report goes to the report directory, which lies outside the workspace, so code under
test cannot write its own verdict where assay reads it. Maven and Gradle write theirs
inside the workspace; those are named per run and read as untrusted files
(`assay.tools.java`, `assay.parsers.java`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from assay.evidence import Check, CheckerId
from assay.tools import TOOLS
from assay.tools.python import MYPY_JSON_SINCE, unshadowed
from assay.tools.spec import Instrumented, Request, Rule

__all__ = ["MYPY_JSON_SINCE", "Instrumented", "instrument"]

#: Each declared tool's rule, by logical tool.
_RULES: Mapping[str, Rule] = {
    name: spec.instrument for name, spec in TOOLS.items() if spec.instrument is not None
}


def instrument(check: Check, checker: CheckerId | None, report_dir: Path) -> Instrumented:
    """The argv and env overlay that make `check.tool` write output assay can parse."""
    rule = _RULES.get(check.tool or "")
    request = Request(check, checker, report_dir)
    planned = request.runs(request.argv) if rule is None else rule(request)
    # Whatever the tool, `python -m X` starts so that no file of the tree can stand in for X.
    return replace(planned, argv=unshadowed(planned.argv))

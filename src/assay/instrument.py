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

from dataclasses import replace
from pathlib import Path

from assay.evidence import Check, CheckerId
from assay.tools import tool_spec
from assay.tools.instrumented import Instrumented, Request

__all__ = ["Instrumented", "instrument"]


def instrument(check: Check, checker: CheckerId | None, report_dir: Path) -> Instrumented:
    """The argv and env overlay that make `check.tool` write output assay can parse."""
    spec = tool_spec(check.tool)  # loads the declarations of this tool's ecosystem only
    rule = spec.instrument if spec is not None else None
    request = Request(check, checker, report_dir)
    planned = request.runs(request.argv) if rule is None else rule(request)
    # Whatever the tool, `python -m X` starts so that no file of the tree can stand in for X.
    if len(planned.argv) < 3 or planned.argv[1] != "-m":
        return planned  # no `-m`: python's declarations need not load to say so
    from assay.tools.python import unshadowed

    return replace(planned, argv=unshadowed(planned.argv))

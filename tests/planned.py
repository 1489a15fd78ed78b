"""One check of a repository's plan, run as `verify` runs it."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

from assay.check_execution import run_check
from assay.evidence import Evidence
from assay.plan import plan_repository
from assay.probe import ProbeCache


def run_planned(root: Path, name: str, reports: Path) -> Evidence:
    """The evidence of the planned check `name` of `root`, run with this interpreter's
    directory first on PATH (the venv's tools, as a user's shell has them)."""
    by_name = {c.name: c for c in plan_repository(root).checks}
    assert name in by_name, sorted(by_name)
    path = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
    check = dataclasses.replace(by_name[name], env={"PATH": path})
    return run_check(check, root=root, probes=ProbeCache(), report_dir=reports)

"""Where a run's reports go: checks may write their report directory without limit, so
under bubblewrap with a memory cap it lies on a tmpfs, where what they write counts
against the cap (a test filled the host's disk through its report directory on /tmp)."""

from __future__ import annotations

import json
from pathlib import Path

from assay.sandbox import cgroup
from tests.cli import assay
from tests.repos import write

#: Passes only when its JUnit report's directory lies on a tmpfs, seen from inside.
REPORT_DIR_ON_TMPFS = """
import os, sys


def fs_type(path):
    best, kind = "", None
    for line in open("/proc/self/mountinfo"):
        fields = line.split()
        point = fields[4]
        fstype = fields[fields.index("-") + 1]
        inside = path == point or path.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, fstype
    return kind


def test_report_dir_is_tmpfs():
    (xml,) = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--junitxml=")]
    assert fs_type(os.path.dirname(xml)) == "tmpfs"
"""


def test_the_reports_of_a_run_whose_memory_is_capped_are_in_ram(tmp_path: Path) -> None:
    assert cgroup.can_cap_memory()
    repo = write(
        tmp_path / "repo",
        {
            "pyproject.toml": '[project]\nname = "p"\nversion = "0"\n',
            "tests/test_place.py": REPORT_DIR_ON_TMPFS,
        },
    )
    done = assay("verify", "--json", "--no-cache", "--sandbox", "bwrap", str(repo), timeout=180)
    report = json.loads(done.stdout)
    assert report["extra"]["limits"]["whole_run"]["memory_bytes"], report["extra"]["limits"]
    assert report["status"] == "VERIFIED", report["note"]

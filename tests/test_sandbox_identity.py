"""The uid slots sandboxed commands run as when assay runs as root, and their account files."""

from __future__ import annotations

from pathlib import Path

from assay.sandbox import identity


def test_a_slots_account_file_is_written_only_when_it_is_not_as_wanted(tmp_path: Path) -> None:
    """Each run as root takes a uid slot with passwd and group files naming it: written
    anew only when the last run left them otherwise (a write and a rename cost a
    millisecond each of every run)."""
    line = f"{identity.ACCOUNT}:x:1800000001:1800000001::/tmp/home:/bin/sh"
    made = identity._account_file(tmp_path, 1, "passwd", line)
    assert made.read_text().splitlines()[-1] == line
    before = made.stat()
    again = identity._account_file(tmp_path, 1, "passwd", line)
    assert again.stat().st_ino == before.st_ino and again.stat().st_mtime_ns == before.st_mtime_ns
    made.write_text("assay:x:0:0::/:/bin/sh\n")  # not as wanted: written whole again
    identity._account_file(tmp_path, 1, "passwd", line)
    assert made.read_text().splitlines()[-1] == line
    assert "assay:x:0:0" not in made.read_text()

"""Reading a report file that the code under test could have replaced.

Reports are written inside the sandbox into a directory mounted writable there, and
read here on the host, with the host's rights. Whatever is at the report's path when
the run ends was chosen by the code under test, so a report is read as any file we do
not trust is (`assay.untrusted_files`): no link followed, no blocking, a regular file
with no other names, within a fixed bound.
"""

from __future__ import annotations

from pathlib import Path

from assay.untrusted_files import Refused, read_untrusted

__all__ = ["REPORT_MAX_BYTES", "Refused", "read_report"]

#: The largest report read. Real reports of large suites are a few MiB; anything bigger
#: is refused whole, never parsed in part (a cut report could drop its failures).
REPORT_MAX_BYTES = 64 * 1024 * 1024


def read_report(path: Path, *, limit: int = REPORT_MAX_BYTES) -> bytes | Refused | None:
    """The bytes of the report at `path`; None when there is none; `Refused` when what is
    there is not a plain file of at most `limit` bytes (or cannot be read)."""
    # The report directory is assay's own; only the name in it is the code under test's.
    return read_untrusted(path.parent, path.name, limit=limit, what=f"report {path.name}")

"""Removing a tree deeper than Python's recursion limit.

Python 3.11's `shutil.rmtree` and `os.fwalk` take a frame per level, so a chain of
thousands of folders (an agent's, a check's) raised `RecursionError` and was left
behind. GNU `chmod -R` and `rm -rf` walk with fts, which holds no frame per level and
follows no link; they run only once Python's own removal gave up.
"""

from __future__ import annotations

import os
import subprocess

#: Each of the two commands ends within this.
REMOVAL_TIMEOUT_S = 600.0


def remove_deep(path: str | os.PathLike[str]) -> None:
    """Remove `path` whatever its depth, read-only folders included; raises OSError when
    something is left."""
    where = os.fspath(path)
    for argv in (["chmod", "-R", "u+rwx", "--", where], ["rm", "-rf", "--", where]):
        try:
            subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=REMOVAL_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise OSError(f"could not remove {where}: {exc}") from exc
    if os.path.lexists(where):
        raise OSError(f"{where} still exists after removal")

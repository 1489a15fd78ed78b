"""What tests ask of a process they did not start themselves."""

from __future__ import annotations

import time
from pathlib import Path


def gone(pid: int, within: float = 5.0) -> bool:
    """Whether process `pid` ended (is no more, or a zombie) within `within` seconds."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
        except OSError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.02)
    return False

"""Processes whose bytecode (and assay's compiled tables) go under a prefix of the test's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def prefix_env(prefix: Path, **env: str) -> dict[str, str]:
    """The environment with `PYTHONPYCACHEPREFIX` at `prefix`, bytecode written, `env` over it."""
    environ = {**os.environ, "PYTHONPYCACHEPREFIX": str(prefix)}
    environ.pop("PYTHONDONTWRITEBYTECODE", None)
    environ.update(env)
    return environ


def json_printed(script: str, prefix: Path, mode: str, **env: str) -> Any:
    """What `script`, run as `python -c script mode` under `prefix_env`, prints as JSON."""
    done = subprocess.run(
        [sys.executable, "-c", script, mode],
        capture_output=True,
        text=True,
        env=prefix_env(prefix, **env),
        check=True,
    )
    return json.loads(done.stdout)

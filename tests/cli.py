"""Running the real `assay` console script, as users and scripts do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

PYTHON = sys.executable
VENV_BIN = Path(PYTHON).parent
ASSAY = str(VENV_BIN / "assay")


def path_with_venv() -> str:
    """PATH with this interpreter's environment first, where pytest, ruff and mypy are."""
    return f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"


def assay_env(**overrides: str) -> dict[str, str]:
    """This process's environment with the venv's tools on PATH, and `overrides` over it."""
    return {**os.environ, "PATH": path_with_venv(), **overrides}


def assay(
    *args: str,
    cwd: Path | None = None,
    timeout: float = 60,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`assay ARGS...` with the venv's tools on PATH (or exactly `env`), its output as text."""
    return subprocess.run(
        [ASSAY, *args],
        capture_output=True,
        text=True,
        env=assay_env() if env is None else dict(env),
        cwd=cwd,
        timeout=timeout,
        check=False,
    )


def no_traceback(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stdout + done.stderr, done.stderr


def run_json(*args: str, cwd: Path | None = None) -> tuple[int, dict[str, Any]]:
    """`assay run --json ARGS...`: its exit code and the evidence it printed."""
    done = assay("run", "--json", *args, cwd=cwd)
    no_traceback(done)
    return done.returncode, json.loads(done.stdout)


def installed_and_verified(repo: Path, tmp_path: Path) -> dict[str, Any]:
    """The JSON report of `assay verify --install` of `repo` under bubblewrap, for real."""
    done = assay(
        "verify",
        "--install",
        "--sandbox",
        "bwrap",
        "--json",
        str(repo),
        timeout=600,
        env={**os.environ, "ASSAY_CACHE_DIR": str(tmp_path / "cache")},
    )
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def verified_json(
    repo: Path, state: Path | None, *args: str, timeout: float = 300
) -> dict[str, Any]:
    """The JSON report of `assay verify --json --no-cache ARGS... REPO`, its state in
    `state` (None: the default), with the venv's tools on PATH; never a traceback."""
    env = assay_env() if state is None else assay_env(ASSAY_CACHE_DIR=str(state))
    done = assay("verify", "--json", "--no-cache", *args, str(repo), env=env, timeout=timeout)
    no_traceback(done)
    report: dict[str, Any] = json.loads(done.stdout)
    return report

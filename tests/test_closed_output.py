"""A reader that stops reading (`assay verify . | head -1`) costs the rest of the output,
never a traceback, and the run still ends with its verdict's exit status."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.cli import ASSAY, assay_env
from tests.repos import write


def _with_stdout_closed(*args: str, env: dict[str, str]) -> tuple[int, str]:
    """Run `assay ARGS` with nobody left to read its stdout: its exit status and stderr."""
    process = subprocess.Popen(
        [ASSAY, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True
    )
    assert process.stdout is not None
    process.stdout.close()  # before it writes a line: its first write meets a broken pipe
    _, stderr = process.communicate(timeout=120)
    return process.returncode, stderr


def test_verify_into_a_closed_pipe_ends_with_its_verdict(tmp_path: Path) -> None:
    repo = write(tmp_path / "repo", {"test_a.py": "def test_a():\n    assert 1 + 1 == 2\n"})
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"))
    code, stderr = _with_stdout_closed("verify", "--sandbox", "none", str(repo), env=env)
    assert "Traceback" not in stderr, stderr
    assert code == 0, stderr


def test_a_failing_run_into_a_closed_pipe_keeps_its_exit_status(tmp_path: Path) -> None:
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"))
    code, stderr = _with_stdout_closed("run", "--sandbox", "none", "--", "false", env=env)
    assert "Traceback" not in stderr, stderr
    assert code == 3, stderr  # as with its output read: "exited 1 and its output does not say why"

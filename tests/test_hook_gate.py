"""`assay hook gate`, the generic agent gate, through the real console script.

The contract of hook runners that read an exit status: 2 blocks, with the reason on
stderr for whoever must fix the code; 0 lets through. The same cap as the Stop hook,
counted per `--session` (or `$ASSAY_HOOK_SESSION`, or the path).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.cli import ASSAY, assay_env, no_traceback
from tests.repos import git_repo
from tests.test_hook_claude_code import FAILING, PASSING


def gate(
    state: Path, *args: str, session_env: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = assay_env(ASSAY_CACHE_DIR=str(state))
    env.pop("ASSAY_HOOK_SESSION", None)
    if session_env is not None:
        env["ASSAY_HOOK_SESSION"] = session_env
    done = subprocess.run(
        [ASSAY, "hook", "gate", *args],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )
    no_traceback(done)
    return done


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


def test_a_verified_project_exits_zero(tmp_path: Path, state: Path) -> None:
    project = git_repo(tmp_path / "ok", PASSING)
    done = gate(state, str(project))
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""


def test_a_failing_project_exits_two_with_the_reason_on_stderr(tmp_path: Path, state: Path) -> None:
    project = git_repo(tmp_path / "bad", FAILING)
    done = gate(state, str(project), "--session", "one")
    assert done.returncode == 2
    assert "test_add_sums" in done.stderr and "FAILED" in done.stderr
    assert f"assay verify {project}" in done.stderr
    assert done.stdout == ""


def test_the_cap_lets_through_with_the_gap_on_stderr(tmp_path: Path, state: Path) -> None:
    project = git_repo(tmp_path / "bad", FAILING)
    codes = [gate(state, str(project), "--max-blocks", "2", session_env="env-1") for _ in range(3)]
    assert [c.returncode for c in codes] == [2, 2, 0]
    assert "not verified" in codes[2].stderr and "FAILED" in codes[2].stderr
    # Another caller has a count of its own.
    assert gate(state, str(project), "--session", "other", "--max-blocks", "2").returncode == 2


def test_a_path_that_is_not_a_directory_blocks(tmp_path: Path, state: Path) -> None:
    done = gate(state, str(tmp_path / "missing"))
    assert done.returncode == 2
    assert "not a directory" in done.stderr

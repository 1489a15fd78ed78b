"""Misbehaving verifier plugins through the CLI: each fails with its own mode, nothing is left running."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import assay, assay_env
from tests.conftest import read_pids, wait_gone

CASES = [
    ("RaisingVerifier", "verifier_error"),
    ("HangingVerifier", "verifier_timeout"),
    ("SegfaultVerifier", "verifier_crash"),
    ("ExitingVerifier", "verifier_crash"),
    ("SystemExitVerifier", "verifier_error"),
    ("KeyboardInterruptVerifier", "verifier_error"),
    ("GarbageVerifier", "verifier_bad_return"),
    ("OrphaningVerifier", "verifier_timeout"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "cause"), CASES)
def test_bad_verifier_fails_with_its_mode_and_leaves_nothing(
    name: str, cause: str, tmp_path: Path
) -> None:
    pid_file = tmp_path / "pid"
    done = assay(
        "run",
        "--json",
        "--timeout",
        "1.5",
        "--verifier",
        f"assay.testing:{name}",
        env=assay_env(ASSAY_TESTING_PID_FILE=str(pid_file)),
    )
    assert done.returncode == 1, done.stderr
    evidence = json.loads(done.stdout)
    assert evidence["verdict"] == "fail"
    assert evidence["cause"] == cause
    assert "Traceback" not in done.stderr
    if name == "OrphaningVerifier":
        (grandchild,) = read_pids(pid_file)
        assert wait_gone(grandchild, 2.0), "the SIGTERM-ignoring grandchild outlived the run"


@pytest.mark.slow
def test_healthy_verifier_passes_and_a_project_plugin_is_importable(tmp_path: Path) -> None:
    assert assay("run", "--verifier", "assay.testing:HealthyVerifier").returncode == 0
    (tmp_path / "myplugin.py").write_text(
        "from assay.evidence import Check, evidence_for\n"
        "from assay.verdict import Cause, Kind\n"
        "class Ok:\n"
        "    id = 'ok'\n"
        "    def verify(self, ctx):\n"
        "        return evidence_for(Check('ok', Kind.LINT, ()), Cause.EXIT_NONZERO)\n"
    )
    done = assay("run", "--json", "--cwd", str(tmp_path), "--verifier", "myplugin:Ok")
    assert done.returncode == 1
    assert json.loads(done.stdout)["cause"] == "exit_nonzero"


@pytest.mark.parametrize(
    "args",
    [["run"], ["run", "--verifier", "not-a-spec"], ["run", "--verifier", "a:b", "--", "true"]],
)
def test_usage_errors_exit_2_without_a_traceback(args: list[str]) -> None:
    done = assay(*args)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and "Error" in done.stderr

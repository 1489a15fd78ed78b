"""The one sandboxed session behind `assay run` and `assay verify`, through `run_command`:
a workspace that cannot be removed, and a sandbox whose probe cannot clean up, for real."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from assay.check_verifiers import run_command
from assay.verdict import Cause, Status, Verdict
from tests.test_verify_library import _attribute, append_only_tmp  # noqa: F401 - a fixture


@pytest.fixture
def immutable_ok(tmp_path: Path) -> None:
    probe = tmp_path / "probe"
    probe.write_text("")
    if os.geteuid() != 0 or not _attribute("+i", probe):
        pytest.skip("needs root and a filesystem with immutable files")
    _attribute("-i", probe)


def test_a_command_that_leaves_its_workspace_stuck_is_not_verified(
    tmp_path: Path, immutable_ok: None
) -> None:
    source = tmp_path / "src"
    source.mkdir()
    where = tmp_path / "stuck-at"
    script = f"echo x > stuck && chattr +i stuck && realpath stuck > {where}"
    try:
        done = run_command(["sh", "-c", script], cwd=source, kind="build", sandbox="local")
        assert where.exists(), done.evidence.reason
        assert done.evidence.verdict is Verdict.PASS  # the command's own evidence stands
        assert done.record.cleanup_error and "could not be removed" in done.record.cleanup_error
        assert done.status is Status.INDETERMINATE
    finally:
        if where.exists():
            stuck = Path(where.read_text().strip())
            _attribute("-i", stuck)
            shutil.rmtree(stuck.parent, ignore_errors=True)


def test_the_cli_exit_code_says_the_run_had_an_error(tmp_path: Path, immutable_ok: None) -> None:
    from assay import cli

    where = tmp_path / "stuck-at"
    script = f"echo x > stuck && chattr +i stuck && realpath stuck > {where}"
    try:
        code = cli.main(
            ["run", "--sandbox", "local", "--kind", "build", "--cwd", str(tmp_path), "--json"]
            + ["--", "sh", "-c", script]
        )
        assert code == Status.INDETERMINATE.exit_code
    finally:
        if where.exists():
            stuck = Path(where.read_text().strip())
            _attribute("-i", stuck)
            shutil.rmtree(stuck.parent, ignore_errors=True)


@pytest.mark.usefixtures("append_only_tmp")
def test_a_probe_that_cannot_clean_up_refuses_the_session(tmp_path: Path) -> None:
    done = run_command(["true"], cwd=tmp_path, kind="build", sandbox="bwrap")
    assert done.evidence.cause is Cause.SANDBOX_UNAVAILABLE
    assert "bwrap-probe" in done.evidence.note
    assert done.status is Status.INDETERMINATE

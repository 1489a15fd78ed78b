"""A project's own binaries are code under test: even their version commands run sandboxed."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from assay.probe import Confinement, ProbeCache
from tests.cli import assay

FAKE_PYTHON = """#!/bin/sh
# Pretends to be Python; on the host it would also plant a file outside the workspace.
echo pwned > {marker}
echo "Python 3.11.0"
echo "pytest 8.0.0"
exit 0
"""


def plant_venv(repo: Path, marker: Path) -> None:
    bin_dir = repo / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (repo / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    python = bin_dir / "python"
    python.write_text(FAKE_PYTHON.format(marker=marker))
    python.chmod(0o755)


@pytest.mark.slow
def test_verify_probes_a_planted_interpreter_inside_the_sandbox(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    marker = outside / "pwned"
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (repo / "tests" / "test_a.py").write_text("def test_a():\n    assert True\n")
    plant_venv(repo, marker)
    done = assay(
        *("verify", "--json", "--sandbox", "bwrap", str(repo)),
        timeout=120,
        env={**os.environ, "ASSAY_CACHE_DIR": str(tmp_path / "cache"), "ASSAY_NO_PROBE_CACHE": "1"},
    )
    report = json.loads(done.stdout)
    argv0s = {c["argv"][0] for c in report["checks"]}
    assert ".venv/bin/python" in argv0s, argv0s  # the planted interpreter is what the plan uses
    assert not marker.exists(), "the project's interpreter ran on the host"
    assert report["status"] != "VERIFIED"


def test_confinement_routes_only_binaries_inside_its_root(tmp_path: Path) -> None:
    calls: list[list[str]] = []

    def recording_runner(argv, *, cwd, env=None, timeout=None, no_output_timeout=None):  # type: ignore[no-untyped-def]
        from assay.process import run_process

        calls.append(list(argv))
        return run_process(
            argv, cwd=cwd, env=env, timeout=timeout, no_output_timeout=no_output_timeout
        )

    inside = tmp_path / "ws" / "bin" / "ruff"
    inside.parent.mkdir(parents=True)
    inside.write_text("#!/bin/sh\necho 'ruff 0.1.0'\n")
    inside.chmod(0o755)
    probes = ProbeCache(
        persistent=False, confinement=Confinement(tmp_path / "ws", recording_runner)
    )
    assert probes.get("ruff", path=str(inside)).version == "0.1.0"
    assert calls == [[str(inside), "--version"]]
    probes.get("python", path=sys.executable)  # the host's interpreter: not confined
    assert len(calls) == 1

"""`assay run` runs its command in the working directory itself, never in a copy of it.

`run` is the low-level command: the user names the command and the directory, so the
directory is shown to the sandbox read-write at its own path (as `verify` shows its
workspace), and nothing of it is copied first. Everything outside it stays confined.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.cli import PYTHON, assay, assay_env, no_traceback, run_json

#: Enough files that copying them would be seen in the time a run takes.
MANY_FILES = 5_000


@pytest.fixture(scope="module")
def crowded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with a named pipe (nothing ever writes to it) and many small files."""
    root = tmp_path_factory.mktemp("crowded")
    os.mkfifo(root / "pipe")
    for i in range(MANY_FILES // 100):
        folder = root / f"d{i:03}"
        folder.mkdir()
        for j in range(100):
            (folder / f"f{j:02}.txt").write_text("x")
    return root


@pytest.mark.parametrize("backend", ["auto", "bwrap"])
def test_run_in_a_crowded_directory_with_a_fifo_returns_quickly(
    backend: str, crowded: Path
) -> None:
    work = crowded
    started = time.monotonic()
    code, evidence = run_json("--sandbox", backend, "--kind", "build", "--", "true", cwd=work)
    took = time.monotonic() - started
    assert code == 0, evidence
    assert evidence["verdict"] == "pass" and str(evidence["sandbox"]).startswith("bwrap ")
    assert took < 5, f"{took:.1f} s: the directory was copied"
    assert evidence["extra"].get("workspace") is None  # nothing was provisioned from it


def test_run_sees_and_writes_the_directory_itself_and_nothing_else(tmp_path: Path) -> None:
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    (work / "given").write_text("from the user\n")
    script = (
        "import pathlib\n"
        f"try:\n    open({str(outside / 'escaped')!r}, 'w').write('x')\nexcept OSError:\n    pass\n"
        "pathlib.Path('made').write_text(pathlib.Path('given').read_text())\n"
    )
    code, evidence = run_json(
        "--sandbox", "bwrap", "--kind", "build", "--", PYTHON, "-c", script, cwd=work
    )
    assert code == 0, evidence
    assert (work / "made").read_text() == "from the user\n"
    assert not (outside / "escaped").exists()


def test_run_none_from_the_temp_dir_itself(tmp_path: Path) -> None:
    """`cd /tmp && assay run --sandbox none -- true`: the reports go somewhere outside it."""
    done = assay(
        "run",
        "--json",
        "--sandbox",
        "none",
        "--kind",
        "build",
        "--",
        "true",
        cwd=tmp_path,
        env=assay_env(TMPDIR=str(tmp_path)),
    )
    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"verdict": "pass"' in done.stdout


def test_run_bwrap_from_the_temp_dir_itself(crowded: Path) -> None:
    work = crowded
    done = assay(
        "run",
        "--json",
        "--kind",
        "build",
        "--",
        "true",
        cwd=work,
        env=assay_env(TMPDIR=str(work)),
    )
    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr


def test_run_refuses_to_show_a_directory_the_sandbox_builds_itself() -> None:
    """From `/` (or /tmp, /usr...) there is no in-place run that keeps the host hidden: it
    is refused, clearly, and nothing is copied either."""
    code, evidence = run_json("--kind", "build", "--", "true", cwd=Path("/"))
    assert code == 3
    assert evidence["cause"] == "sandbox_unavailable"
    assert "/" in evidence["note"]

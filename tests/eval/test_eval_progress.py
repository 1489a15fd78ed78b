"""What `assay eval` shows while it runs: on a real pseudo-terminal a live line (attempts
done of all, pass rate so far, errors by stage) redrawn until the end; piped, one plain
line per finished attempt and never a control sequence; the summary at the end either way."""

from __future__ import annotations

import fcntl
import os
import select
import shutil
import struct
import subprocess
import termios
import time
from pathlib import Path

import pytest

from assay.eval.record import ERROR, SCORED, AttemptError, AttemptRecord
from assay.eval.score import Score
from tests.cli import ASSAY, assay_env
from tests.eval.tasks import make_repo, write_task

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
#: The start of a control sequence (colour, cursor movement, line erase).
ESC = "\x1b"


def _on_a_terminal(argv: list[str], env: dict[str, str], expect: int) -> list[tuple[float, str]]:
    """What `argv` wrote to a pseudo-terminal, as (seconds since start, text) chunks; it
    must exit with `expect`."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    chunks: list[tuple[float, str]] = []
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 0.2)
            if master in ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: every writer has closed the terminal
                    break
                if not data:
                    break
                chunks.append((time.monotonic() - started, data.decode(errors="replace")))
            elif proc.poll() is not None:
                break
            assert time.monotonic() - started < 300, "assay eval did not end"
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
    assert proc.returncode == expect, "".join(text for _, text in chunks)
    return chunks


def _tasks(root: Path) -> Path:
    """Two tasks: calc-1 (nop leaves it FAILED) and calc-3, whose base commit does not
    exist (an error of the provision stage, found at once)."""
    repo, bases = make_repo(root)
    tasks = root / "tasks"
    write_task(tasks / "task-1", 1, repo=repo, commit=bases[1])
    write_task(tasks / "task-3", 3, repo=repo, commit="f" * 40)
    return tasks


def _record(task_id: str, *, passed: bool = False, error: str = "") -> AttemptRecord:
    if error:
        stage, cause = error.split(":")
        return AttemptRecord(
            "e", task_id, 1, ERROR, 0.0, 1.0, error=AttemptError(stage, cause, "\x1b[2Jboom")
        )
    status = "VERIFIED" if passed else "FAILED"
    value = 1.0 if passed else 0.0
    return AttemptRecord(
        "e", task_id, 1, SCORED, 0.0, 1.0, status=status, score=Score(value, status=status)
    )


def test_the_status_line_counts_attempts_passes_and_errors_by_stage() -> None:
    from assay.eval.progress import EvalProgress

    lines: list[str] = []
    progress = EvalProgress(lines.append)
    progress.started("e-1", 4)
    assert progress.status() == "0/4 attempts done"
    progress.recorded(_record("a", passed=True))
    progress.recorded(_record("b\x1b[2J"))
    progress.recorded(_record("c", error="provision:source_missing"))

    assert progress.status() == (
        "3/4 attempts done · pass 50.0% (1/2 scored) · errors 1: provision/source_missing 1"
    )
    assert lines[0] == "[1/4] a #1: VERIFIED score 1.0"
    assert lines[1] == "[2/4] b\\x1b[2J #1: FAILED score 0.0"  # hostile text shown, not obeyed
    assert lines[2] == "[3/4] c #1: error provision/source_missing: \\x1b[2Jboom"


@needs_bwrap
def test_piped_output_is_one_plain_line_per_attempt_then_the_summary(tmp_path: Path) -> None:
    tasks = _tasks(tmp_path)
    store = tmp_path / "evals.sqlite"
    done = subprocess.run(
        [ASSAY, "eval", str(tasks), "--agent", "nop", "--store", str(store)],
        capture_output=True,
        text=True,
        env=assay_env(TERM="xterm-256color", FORCE_COLOR="1"),
        timeout=300,
        check=False,
    )

    assert done.returncode == 3, done.stdout + done.stderr  # one attempt is an error
    assert ESC not in done.stdout + done.stderr
    lines = done.stdout.splitlines()
    finished = [line for line in lines if line.startswith("[")]
    assert len(finished) == 2, lines
    assert any(line.startswith("[") and "calc-1 #1: FAILED score 0.0" in line for line in finished)
    assert any("calc-3 #1: error provision/commit_missing" in line for line in finished)
    assert {line[:5] for line in finished} == {"[1/2]", "[2/2]"}
    assert "pass rate: 0.0% (0/1 scored)  errors: 1  attempts: 2/2" in done.stdout


@needs_bwrap
@pytest.mark.slow
def test_a_terminal_sees_the_live_line_while_attempts_run(tmp_path: Path) -> None:
    tasks = _tasks(tmp_path)
    env = assay_env(TERM="xterm-256color")
    env.pop("NO_COLOR", None)
    # Side by side: calc-3's error is recorded at once, while calc-1 still runs for seconds,
    # so a redraw of the live line shows it (one after the other, it came last, and a
    # loaded machine could end the display before redrawing).
    argv = [ASSAY, "eval", str(tasks), "--agent", "nop", "--concurrency", "2"]
    argv += ["--store", str(tmp_path / "s.sqlite")]

    chunks = _on_a_terminal(argv, env, expect=3)

    text = "".join(t for _, t in chunks)
    live_at = next((at for at, t in chunks if "1/2 attempts done" in t), None)
    end_at = next((at for at, t in chunks if "pass rate: 0.0% (0/1 scored)" in t), None)
    assert live_at is not None, text
    assert end_at is not None, text
    assert live_at < end_at - 1.0, (live_at, end_at)  # shown while the attempts ran
    assert "errors 1: provision/commit_missing 1" in text  # the errors so far, by stage
    assert ESC in text  # redrawn and erased with control sequences
    assert "calc-1 #1: FAILED score 0.0" in text
    assert os.path.exists(tmp_path / "s.sqlite")

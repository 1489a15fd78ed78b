"""The live "still running" line of `assay verify`, on a real pseudo-terminal: it appears
while a slow test runs, before the run ends; with the output piped no control sequence
is ever written."""

from __future__ import annotations

import fcntl
import os
import select
import struct
import subprocess
import termios
import time
from pathlib import Path

import pytest

from tests.cli import ASSAY, assay_env
from tests.repos import git, write

SLOW_SUITE = {
    "pyproject.toml": '[project]\nname = "fx"\nversion = "0"\n\n[tool.pytest.ini_options]\n',
    "test_slow.py": "import time\n\n\ndef test_slow():\n    time.sleep(2.5)\n",
}
#: The start of a control sequence (colour, cursor movement, line erase).
ESC = "\x1b"


def _repo(tmp_path: Path) -> Path:
    repo = write(tmp_path / "repo", SLOW_SUITE)
    git(repo, "init", "-q")
    return repo


def _on_a_terminal(argv: list[str], env: dict[str, str]) -> list[tuple[float, str]]:
    """What `argv` wrote to a pseudo-terminal, as (seconds since start, text) chunks."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
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
            assert time.monotonic() - started < 90, "assay verify did not end"
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
    assert proc.returncode == 0, "".join(text for _, text in chunks)
    return chunks


@pytest.mark.slow
def test_the_running_line_appears_on_a_terminal_before_the_check_ends(tmp_path: Path) -> None:
    env = assay_env(TERM="xterm-256color")
    env.pop("NO_COLOR", None)
    chunks = _on_a_terminal([ASSAY, "verify", "--no-cache", str(_repo(tmp_path))], env)
    text = "".join(t for _, t in chunks)
    running_at = next((at for at, t in chunks if "running: " in t and "pytest" in t), None)
    passed_at = next((at for at, t in chunks if "pass " in t and "pytest (1 passed" in t), None)
    assert running_at is not None, text
    assert passed_at is not None, text
    assert running_at < passed_at - 1.0, (running_at, passed_at)  # while the 2.5 s test ran
    assert ESC in text  # the live line is redrawn and erased with control sequences
    assert "VERIFIED" in text


@pytest.mark.slow
def test_piped_output_has_no_control_sequences(tmp_path: Path) -> None:
    env = assay_env(TERM="xterm-256color")
    done = subprocess.run(
        [ASSAY, "verify", "--no-cache", str(_repo(tmp_path))],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "VERIFIED" in done.stdout
    assert ESC not in done.stdout and ESC not in done.stderr, repr(done.stdout)
    assert "running:" not in done.stdout

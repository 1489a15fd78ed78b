"""What a repository prints never drives the user's terminal: escape sequences, carriage
returns, C1 controls and bidi overrides in its output reach assay's human output only as
visible text, through the real console script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assay.terminal import for_terminal
from tests.cli import ASSAY, assay_env

#: One of each: a clipboard write (OSC 52), a window title, a full reset, a line
#: overwritten by a bare carriage return, backspace, DEL, the 8-bit CSI, a bidi override.
HOSTILE = (
    "\x1b]52;c;cm0gLXJmIH4=\x07"
    "\x1b]0;owned\x07"
    "\x1bc"
    "all good\rFAILED"
    "ab\x08c"
    "x\x7fy"
    "\x9b31m"
    "\u202eevil\u202c"
)

#: Bytes that must not reach a terminal, and the visible forms that must be there instead.
RAW = {
    "ESC": b"\x1b",
    "BEL": b"\x07",
    "CR": b"\r",
    "BS": b"\x08",
    "DEL": b"\x7f",
    "C1 CSI": "\x9b".encode(),
    "bidi override": "\u202e".encode(),
    "bidi pop": "\u202c".encode(),
}
VISIBLE = (
    r"\x1b]52;c;cm0gLXJmIH4=\x07",
    r"\x1b]0;owned\x07",
    r"\x1bc",
    # A bare carriage return ends the line where it is: what followed is shown, not overwritten.
    "all good\n",
    r"ab\x08c",
    r"x\x7fy",
    r"\x9b31m",
    r"\u202eevil\u202c",
)


def assay(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [ASSAY, *args], capture_output=True, env=assay_env(), cwd=cwd, timeout=120, check=False
    )


def assert_terminal_safe(done: subprocess.CompletedProcess[bytes]) -> str:
    for stream in (done.stdout, done.stderr):
        for what, raw in RAW.items():
            assert raw not in stream, (what, stream)
    text = done.stdout.decode()
    assert "Traceback" not in text + done.stderr.decode()
    return text


def printer(*, exit_code: int) -> list[str]:
    """A command that writes HOSTILE to stdout and stderr, then exits with `exit_code`."""
    code = (
        "import sys\n"
        f"text = {HOSTILE!r}\n"
        "sys.stdout.write(text + '\\n'); sys.stderr.write(text + '\\n')\n"
        f"sys.exit({exit_code})\n"
    )
    return [sys.executable, "-c", code]


def test_run_shows_hostile_output_escaped() -> None:
    done = assay("run", "--sandbox", "none", "--", *printer(exit_code=1))
    text = assert_terminal_safe(done)
    for visible in VISIBLE:
        assert visible in text, (visible, text)


def test_run_from_a_shell_printf_shows_it_escaped() -> None:
    script = r"printf '\033]52;c;cm0gLXJmIH4=\007\033]0;owned\007\033c all good\rFAILED\n'; exit 1"
    done = assay("run", "--sandbox", "none", "--", "sh", "-c", script)
    text = assert_terminal_safe(done)
    assert r"\x1b]52;c;cm0gLXJmIH4=\x07\x1b]0;owned\x07\x1bc all good" in text, text
    assert "  | FAILED\n" in text, text


def test_run_json_carries_the_output_exactly_without_raw_controls() -> None:
    done = assay("run", "--sandbox", "none", "--json", "--", *printer(exit_code=1))
    assert_terminal_safe(done)
    evidence = json.loads(done.stdout)
    assert evidence["stdout"]["text"] == HOSTILE + "\n"  # escaped for the terminal, same value


def hostile_repo(root: Path) -> Path:
    """A repository whose configured test prints HOSTILE and fails; HOSTILE is in its
    command line too (as an argument the program ignores)."""
    root.mkdir()
    # A JSON array of ASCII strings is a TOML array too, once DEL is escaped as TOML wants.
    argv = json.dumps([*printer(exit_code=1), HOSTILE]).replace("\x7f", "\\u007f")
    (root / "assay.toml").write_text(f"[commands]\ntest = {argv}\n")
    return root


def test_verify_shows_a_failing_tests_hostile_output_escaped(tmp_path: Path) -> None:
    done = assay("verify", str(hostile_repo(tmp_path / "repo")), "--sandbox", "none", "--no-cache")
    text = assert_terminal_safe(done)
    assert done.returncode in (1, 3), text
    for visible in (r"\x1b]52;c;", r"\x1b]0;owned\x07", "all good\n", r"\u202eevil"):
        assert visible in text, (visible, text)


def test_plan_shows_a_hostile_command_escaped(tmp_path: Path) -> None:
    done = assay("plan", str(hostile_repo(tmp_path / "repo")))
    text = assert_terminal_safe(done)
    assert r"\x1b]52;c;" in text, text


def test_a_usage_error_from_the_repositorys_configuration_is_escaped(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    # The table key is a name assay does not know; the error message names it.
    (repo / "assay.toml").write_text('[commands]\n"\\u001b]0;owned\\u0007" = "pytest"\n')
    done = assay("verify", str(repo), "--sandbox", "none")
    assert done.returncode == 2
    assert_terminal_safe(done)
    assert r"\x1b]0;owned\x07" in done.stderr.decode()


# --------------------------------------------------------------------------- for_terminal


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain text\n\tindented", "plain text\n\tindented"),
        ("\x1b[31mred\x1b[0m and \x1b[1;38;5;200mbold\x1b[m", "red and bold"),
        ("\x1b[2K\x1b[1Aup", r"\x1b[2K\x1b[1Aup"),  # cursor movement is shown, not done
        ("windows\r\nline", "windows\nline"),
        ("\x00\x0b\x0c\x1f", r"\x00\x0b\x0c\x1f"),
        ("\u2066iso\u2069 \u200f", r"\u2066iso\u2069 \u200f"),
        ("caf\u00e9 \u2713 \U0001f600", "caf\u00e9 \u2713 \U0001f600"),
        ("\udcff", r"\udcff"),  # an undecodable byte kept by surrogateescape
        # A colour code cannot be used to hide the escape character of another sequence.
        ("\x1b\x1b[0m]0;t\x07", r"\x1b]0;t\x07"),
    ],
)
def test_for_terminal(text: str, shown: str) -> None:
    assert for_terminal(text) == shown

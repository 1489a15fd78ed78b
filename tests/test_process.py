"""The process runner, for real: trees killed, output bounded, failures named."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from assay.environment import EnvPolicy
from assay.process import InvalidRun, ProcessResult, StartFailure, run_process
from tests.conftest import PYTHON, pid_alive, read_pids, wait_gone


def py(code: str) -> list[str]:
    return [PYTHON, "-u", "-c", textwrap.dedent(code)]


def test_exit_code_and_both_streams_are_captured() -> None:
    r = run_process(py("import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"))
    assert r.exit_code == 3
    assert r.signal is None and not r.timed_out and r.started
    assert r.stdout.text == "out\n" and r.stderr.text == "err\n"
    assert r.stdout.bytes == 4 and not r.stdout.truncated
    assert r.duration_s > 0
    assert r.cpu_s is not None and r.cpu_s > 0
    assert r.peak_rss_bytes is not None and r.peak_rss_bytes > 1_000_000


def test_stdin_is_devnull_so_a_reader_does_not_hang() -> None:
    r = run_process(py("import sys; data = sys.stdin.read(); print(len(data))"), timeout=10)
    assert r.exit_code == 0 and r.stdout.text == "0\n"


def test_signal_death_is_reported_as_a_signal() -> None:
    r = run_process(py("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"))
    assert r.exit_code is None
    assert r.signal == signal.SIGSEGV
    assert not r.timed_out


TREE = """
import os, signal, subprocess, sys, time
pidfile = sys.argv[1]
child = subprocess.Popen([sys.executable, "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
escaped = subprocess.Popen([sys.executable, "-c", "import os, time; time.sleep(600)"],
    start_new_session=True)
with open(pidfile, "w") as f:
    f.write(f"{child.pid}\\n{escaped.pid}\\n")
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ready", flush=True)
time.sleep(600)
"""


@pytest.mark.slow
def test_timeout_kills_the_whole_tree(tmp_path: Path, short_grace: float) -> None:
    pidfile = tmp_path / "pids"
    started = time.monotonic()
    r = run_process([PYTHON, "-c", TREE, str(pidfile)], timeout=1.0)
    elapsed = time.monotonic() - started
    assert r.timed_out
    assert r.signal == signal.SIGKILL  # it ignored SIGTERM
    assert r.exit_code is None
    assert elapsed < 1.0 + short_grace + 1.5
    grandchild, escaped = read_pids(pidfile)
    assert wait_gone(grandchild, 1.0), "SIGTERM-ignoring grandchild survived"
    assert wait_gone(escaped, 1.0), "setsid'd process survived"
    assert "ready" in r.stdout.text


def test_returns_promptly_when_a_leftover_holds_the_pipes(tmp_path: Path) -> None:
    # The main process exits at once; a double-forked daemon keeps stdout open.
    pid_file = tmp_path / "pid"
    code = f"""
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        open({str(pid_file) + ".tmp"!r}, 'w').write(str(os.getpid()))
        os.rename({str(pid_file) + ".tmp"!r}, {str(pid_file)!r})
        time.sleep(600)
    os._exit(0)
while not os.path.exists({str(pid_file)!r}):  # exit only once the daemon is running
    time.sleep(0.01)
print("parent done")
"""
    started = time.monotonic()
    r = run_process(py(code), timeout=30)
    assert time.monotonic() - started < 3
    assert r.exit_code == 0 and not r.timed_out
    assert "parent done" in r.stdout.text
    (daemon,) = read_pids(tmp_path / "pid")
    assert wait_gone(daemon, 1.0), "double-forked daemon outlived the check"


def test_non_utf8_output_decodes_with_replacement() -> None:
    r = run_process(py("import sys; sys.stdout.buffer.write(b'ok \\xff\\xfe bytes\\n')"))
    assert r.exit_code == 0
    assert r.stdout.text == "ok \ufffd\ufffd bytes\n"
    assert r.stdout.bytes == 12


def test_small_limits_keep_head_and_tail_and_flag_truncation() -> None:
    r = run_process(
        py("import sys; sys.stdout.write('H' * 100 + 'M' * 10000 + 'T' * 100)"),
        head_bytes=100,
        tail_bytes=100,
    )
    assert r.stdout.truncated
    assert r.stdout.bytes == 10200
    assert r.stdout.head == "H" * 100 and r.stdout.tail == "T" * 100
    assert "10000 bytes omitted" in r.stdout.text


@pytest.mark.slow
def test_one_gibibyte_flood_stays_within_the_memory_bound(tmp_path: Path) -> None:
    # Measured in a fresh interpreter so the peak RSS is this run's alone.
    script = textwrap.dedent(
        """
        import json, sys
        from assay.process import run_process
        flood = [sys.executable, "-c",
            "import os\\nb = b'x' * (1 << 20)\\nfor _ in range(1024): os.write(1, b)"]
        r = run_process(flood, timeout=120)
        # VmHWM: this interpreter's own peak. (ru_maxrss would also count the memory of
        # the process that forked it, before exec: a big test runner inflates it.)
        hwm = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
        print(json.dumps({"exit": r.exit_code, "bytes": r.stdout.bytes,
            "truncated": r.stdout.truncated, "head": len(r.stdout.head),
            "rss_kib": int(hwm.split()[1])}))
        """
    )
    out = subprocess.run(
        [PYTHON, "-c", script], check=False, capture_output=True, text=True, timeout=180
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["exit"] == 0
    assert data["bytes"] == 1 << 30
    assert data["truncated"] is True
    assert data["head"] > 0
    assert data["rss_kib"] < 100 * 1024, f"peak RSS {data['rss_kib']} KiB"


def test_missing_program_is_a_start_failure_not_exit_127() -> None:
    r = run_process(["assay-no-such-program-xyz"])
    assert r.start_failure is StartFailure.NOT_FOUND
    assert r.exit_code is None and not r.started
    assert "assay-no-such-program-xyz" in (r.start_error or "")


def test_non_executable_file_is_permission_denied(tmp_path: Path) -> None:
    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    r = run_process([str(script)])
    assert r.start_failure is StartFailure.PERMISSION_DENIED
    assert r.exit_code is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"argv": []}, "empty"),
        ({"argv": "echo hi"}, "sequence"),
        ({"argv": ["echo"], "cwd": "/no/such/dir"}, "does not exist"),
        ({"argv": ["echo"], "timeout": -1}, ">= 0"),
        ({"argv": ["echo"], "timeout": math.nan}, "number"),
        ({"argv": ["echo"], "no_output_timeout": -1}, "no_output_timeout must be >= 0"),
    ],
)
def test_bad_arguments_are_rejected_before_anything_runs(kwargs: dict, message: str) -> None:
    argv = kwargs.pop("argv")
    with pytest.raises(InvalidRun, match=message):
        run_process(argv, **kwargs)


def test_shell_must_be_asked_for() -> None:
    assert run_process(["echo $((1+1))"]).start_failure is StartFailure.NOT_FOUND
    assert run_process(["echo $((1+1))"], shell=True).stdout.text == "2\n"


def test_scrub_policy_hides_secrets_and_overlay_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws_secret")
    monkeypatch.setenv("HARMLESS_SETTING", "kept")
    show = py("import os, json; print(json.dumps(dict(os.environ)))")
    env = json.loads(run_process(show, env={"EXPLICIT_TOKEN": "given"}).stdout.text)
    assert "GITHUB_TOKEN" not in env and "AWS_SECRET_ACCESS_KEY" not in env
    assert env["HARMLESS_SETTING"] == "kept"
    assert env["EXPLICIT_TOKEN"] == "given"
    inherited = json.loads(run_process(show, env_policy=EnvPolicy.INHERIT).stdout.text)
    assert inherited["GITHUB_TOKEN"] == "ghp_secret"
    minimal = json.loads(run_process(show, env_policy=EnvPolicy.MINIMAL).stdout.text)
    assert "HARMLESS_SETTING" not in minimal and "PATH" in minimal


def test_minimal_policy_keeps_the_machines_trust_anchors(monkeypatch: pytest.MonkeyPatch) -> None:
    """Behind a TLS-inspecting proxy, yarn's and node's installs reach the registry only
    through the machine's own certificates."""
    monkeypatch.setenv("NODE_EXTRA_CA_CERTS", "/etc/ssl/certs/ca-certificates.crt")
    monkeypatch.setenv("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt")
    show = py("import os, json; print(json.dumps(dict(os.environ)))")
    minimal = json.loads(run_process(show, env_policy=EnvPolicy.MINIMAL).stdout.text)
    assert minimal["NODE_EXTRA_CA_CERTS"] == "/etc/ssl/certs/ca-certificates.crt"
    assert minimal["SSL_CERT_FILE"] == "/etc/ssl/certs/ca-certificates.crt"


def test_pinned_home_is_a_scratch_dir_removed_afterwards() -> None:
    r = run_process(
        py("import os; print(os.environ['HOME']); open(os.path.expanduser('~/x'), 'w').write('1')"),
        pin_home=True,
    )
    home = r.stdout.text.strip()
    assert r.exit_code == 0
    assert home != os.path.expanduser("~")
    assert not os.path.exists(home), "scratch HOME was not removed"


def test_nothing_is_left_running_after_a_normal_exit(tmp_path: Path) -> None:
    code = f"""
import subprocess, sys
p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True,
    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
open({str(tmp_path / "pid")!r}, "w").write(str(p.pid))
"""
    r = run_process(py(code), timeout=30)
    assert r.exit_code == 0
    (background,) = read_pids(tmp_path / "pid")
    assert wait_gone(background, 1.0)
    assert not pid_alive(background)


def test_runs_in_the_given_directory(tmp_path: Path) -> None:
    r = run_process(py("import os; print(os.getcwd())"), cwd=tmp_path)
    assert r.stdout.text.strip() == str(tmp_path)
    assert r.cwd == str(tmp_path)


def test_result_round_trips_through_json() -> None:
    from assay.process import ProcessResult

    r = run_process(py("print('x' * 50)"), head_bytes=10, tail_bytes=10)
    again = ProcessResult.from_dict(json.loads(json.dumps(r.to_dict())))
    assert again.to_dict() == r.to_dict()


#: Prints a line every 0.2 s for `argv[1]` seconds, then sleeps on in silence.
PRINTS_THEN_GOES_QUIET = """
import sys, time
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    print("test passed", flush=True)
    time.sleep(0.2)
time.sleep(60)
"""


def test_a_run_that_keeps_printing_outlives_the_no_output_limit() -> None:
    # 2 s of output every 0.2 s, then exit: never 1 s without a word, so it finishes.
    source = PRINTS_THEN_GOES_QUIET.replace("time.sleep(60)", "")
    r = run_process([PYTHON, "-c", source, "2"], timeout=20, no_output_timeout=1.0)
    assert (r.exit_code, r.timed_out, r.silent_s) == (0, False, None)
    assert r.duration_s > 2.0
    assert r.stdout.text.count("test passed") >= 8


def test_a_run_that_goes_quiet_is_stopped_once_the_no_output_limit_passes() -> None:
    started = time.monotonic()
    r = run_process([PYTHON, "-c", PRINTS_THEN_GOES_QUIET, "1.5"], timeout=30, no_output_timeout=1)
    elapsed = time.monotonic() - started
    assert r.timed_out and r.silent_s == 1 and r.exit_code is None
    # Stopped one quiet second after its last line (printed at 1.3-1.5 s), not one second
    # after the start, nor at the fixed 30 s deadline.
    assert 1.3 + 1.0 <= elapsed < 1.5 + 1.0 + 2.5, elapsed
    assert "test passed" in r.stdout.text


# Each line in one write, as libtest's line-buffered stdout writes it.
HANGS_SAYING_IT_STILL_RUNS = """
import os, time
os.write(1, b"running 1 test\\n")
while True:
    time.sleep(0.3)
    os.write(1, b"test tests::hangs has been running for over 60 seconds\\n")
"""


def test_a_runners_still_running_lines_are_no_output() -> None:
    # libtest's line for a test past 60 s is no progress: it must not restart the silence.
    r = run_process([PYTHON, "-c", HANGS_SAYING_IT_STILL_RUNS], timeout=20, no_output_timeout=1)
    assert r.timed_out and r.silent_s == 1, (r.timed_out, r.silent_s)
    assert r.duration_s < 1 + 2.5
    assert "has been running for over 60 seconds" in r.stdout.text


# A line of "test " many times over, with the still-running words and no number: each
# "test " a still-running line could begin at.
PRINTS_ALMOST_STILL_RUNNING = """
import os
os.write(1, b"test " * 52_000 + b"has been running for over")
"""


def test_output_almost_a_still_running_line_is_read_in_a_time_its_size_allows() -> None:
    # Each "test " was tried against the rest of its line: 256 KiB held the reader 2 minutes.
    r = run_process([PYTHON, "-c", PRINTS_ALMOST_STILL_RUNNING], timeout=20, no_output_timeout=10)
    # Within a deadline a hundred times what reading it takes now: the reader kept up.
    assert r.exit_code == 0 and not r.timed_out, (r.exit_code, r.timed_out)


def test_the_fixed_deadline_holds_while_a_run_keeps_printing() -> None:
    r = run_process([PYTHON, "-c", PRINTS_THEN_GOES_QUIET, "30"], timeout=1.5, no_output_timeout=1)
    assert r.timed_out and r.silent_s is None  # the deadline, not the silence, stopped it
    assert r.duration_s < 1.5 + 2.5


@pytest.fixture
def long_grace(monkeypatch: pytest.MonkeyPatch) -> float:
    from assay import process

    monkeypatch.setattr(process, "TERM_GRACE_SECONDS", 5.0)
    return 5.0


def test_no_grace_is_waited_when_every_survivor_ignores_sigterm(long_grace: float) -> None:
    # sh sets SIG_IGN for TERM and its `sleep` child inherits it: nothing will act on TERM,
    # so the KILL comes at once rather than after the whole grace period.
    started = time.monotonic()
    r = run_process(["sh", "-c", "trap '' TERM; sleep 30 & sleep 30; wait"], timeout=0.3)
    elapsed = time.monotonic() - started
    assert r.timed_out and r.signal == signal.SIGKILL
    assert elapsed < 0.3 + 1.0 < long_grace, elapsed


def test_a_process_handling_sigterm_still_gets_its_grace(tmp_path: Path, long_grace: float) -> None:
    # A handler that takes a moment to clean up is waited for (it does not ignore TERM).
    done = tmp_path / "cleaned"
    handler = f"""
        import signal, sys, time
        def stop(*_):
            time.sleep(0.4)
            open({str(done)!r}, "w").write("x")
            sys.exit(0)
        signal.signal(signal.SIGTERM, stop)
        print("ready", flush=True)
        time.sleep(30)
    """
    r = run_process(py(handler), timeout=1.0)
    assert r.timed_out and "ready" in r.stdout.text
    assert done.read_text() == "x"


# Writes 1 MiB at a time into the file it is given, forever, from a child of its own.
FILLS_A_FILE = """
import subprocess, sys
subprocess.run([sys.executable, "-c", '''
import sys, time
with open(sys.argv[1], "wb") as out:
    while True:
        out.write(b"x" * 1024 * 1024)
        out.flush()
        time.sleep(0.005)
''', sys.argv[1]])
"""


def test_a_watch_stops_a_run_at_once_when_it_says_why(tmp_path: Path) -> None:
    """A run is stopped for what it does, not only for its time: the watch is asked as it
    goes, and its answer is why the whole tree was killed."""
    filled = tmp_path / "filled"

    def watch() -> str | None:
        size = filled.stat().st_size if filled.exists() else 0
        return f"it wrote {size} bytes" if size > 8 * 1024**2 else None

    started = time.monotonic()
    r = run_process([PYTHON, "-c", FILLS_A_FILE, str(filled)], timeout=60, watch=watch)
    assert r.stopped_for is not None and r.stopped_for.startswith("it wrote "), r
    assert not r.timed_out and r.exit_code is None
    assert time.monotonic() - started < 10
    # Nothing of the tree writes on: the file stays as it was when the run ended.
    stopped_at = filled.stat().st_size
    time.sleep(0.5)
    assert filled.stat().st_size == stopped_at < 64 * 1024**2
    assert ProcessResult.from_dict(r.to_dict()).stopped_for == r.stopped_for


def test_a_watch_that_never_answers_changes_nothing() -> None:
    r = run_process(
        [PYTHON, "-c", "import time; time.sleep(0.6); print('done')"], watch=lambda: None
    )
    assert (r.exit_code, r.stopped_for, r.stdout.text) == (0, None, "done\n")

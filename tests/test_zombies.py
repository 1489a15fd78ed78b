"""assay reaps what it adopts, and nothing else.

assay makes its process a child subreaper, so orphans of the commands it runs
re-parent to it. Each test runs a fresh Python process (a clean process table of
its own) that uses assay as a library, as a long-lived caller would, and then
reports the zombie children it is left with and the exit statuses its own
children kept.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli import path_with_venv

#: Commands whose orphans exit before the run ends, so no kill sweep sees them alive.
ORPHAN_COMMANDS = (
    # A subshell backgrounds a child and exits at once: the child is orphaned, then exits.
    "(sh -c 'exit 3' &); (true &); sleep 0.3",
    # Many of them: what piles up in a long-lived caller.
    "for i in 1 2 3 4 5 6 7 8 9 10; do (true &); done; sleep 0.3",
    # A daemon's double fork: the first child leads a new session, forks, and is waited
    # for; the grandchild is orphaned and exits.
    (
        "python3 -c 'import os, time\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        time.sleep(0.05)\n"
        "        os._exit(0)\n"
        "    os._exit(0)\n"
        "os.waitpid(pid, 0)\n"
        "time.sleep(0.4)'"
    ),
)

#: Shared by the scripts: the zombie children of this process, as the kernel lists them.
ZOMBIES = """
def zombies():
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = open(f"/proc/{entry}/stat", "rb").read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if fields[0] == b"Z" and int(fields[1]) == me:
            found.append(stat[: stat.rfind(b")") + 1].decode())
    return found
"""

VERIFY_SCRIPT = (
    """
import json, os, sys, time
from assay.pipeline import VerifyOptions, verify
from assay.process import run_process
"""
    + ZOMBIES
    + """
repo, commands = sys.argv[1], json.loads(sys.argv[2])
statuses = []
for _ in range(5):
    report = verify(repo, VerifyOptions(sandbox="bwrap", use_cache=False))
    statuses.append(report.status.value)
for command in commands:
    result = run_process(["sh", "-c", command], timeout=30)
    statuses.append(result.exit_code)
time.sleep(0.3)  # anything still dying has died: an unreaped one is a zombie now
print(json.dumps({"statuses": statuses, "zombies": zombies()}))
"""
)

CALLER_SCRIPT = (
    """
import json, os, subprocess, sys, threading, time
from assay.process import run_process
"""
    + ZOMBIES
    + """
commands = json.loads(sys.argv[1])
# The caller's own children, in each way subprocess can start one, all exited (zombies)
# before and while assay runs: their statuses are the caller's to collect.
before = [
    subprocess.Popen(["sh", "-c", "exit 7"]),
    subprocess.Popen(["sh", "-c", "exit 8"], start_new_session=True),
    subprocess.Popen(["sh", "-c", "exit 9"], process_group=0),
]
time.sleep(0.2)
codes = {}

def runs(n):
    # Concurrent runs: none may take another's main process or its status.
    codes[n] = [
        run_process(["sh", "-c", f"(true &); (sh -c 'exit 4' &); sleep 0.05; exit {n}"]).exit_code
        for _ in range(5)
    ]

threads = [threading.Thread(target=runs, args=(n,)) for n in (11, 12, 13)]
for t in threads:
    t.start()
during = [
    subprocess.Popen(["sh", "-c", "exit 21"]),
    subprocess.Popen(["sh", "-c", "sleep 0.1; exit 22"], start_new_session=True),
]
for command in commands:
    run_process(["sh", "-c", command], timeout=30)
for t in threads:
    t.join()
kept = [p.wait() for p in before + during]
time.sleep(0.3)
print(json.dumps({"kept": kept, "runs": codes, "zombies": zombies()}))
"""
)


def run_script(script: str, *args: str, cwd: Path) -> dict[str, Any]:
    env = dict(os.environ)
    env["PATH"] = path_with_venv()
    env["ASSAY_CACHE_DIR"] = str(cwd / "cache")
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def python_repo(root: Path) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "fx"\nversion = "0.1.0"\n\n'
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    )
    (root / "fx.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "tests" / "test_fx.py").write_text(
        "from fx import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    )
    return root


@pytest.mark.slow
def test_a_long_lived_caller_is_left_no_zombies(tmp_path: Path) -> None:
    repo = python_repo(tmp_path / "repo")
    result = run_script(VERIFY_SCRIPT, str(repo), json.dumps(ORPHAN_COMMANDS), cwd=tmp_path)
    assert result["statuses"] == ["VERIFIED"] * 5 + [0] * len(ORPHAN_COMMANDS)
    assert result["zombies"] == []


def test_the_callers_own_children_keep_their_exit_status(tmp_path: Path) -> None:
    result = run_script(CALLER_SCRIPT, json.dumps(ORPHAN_COMMANDS), cwd=tmp_path)
    assert result["kept"] == [7, 8, 9, 21, 22]
    assert result["runs"] == {str(n): [n] * 5 for n in (11, 12, 13)}
    assert result["zombies"] == []

"""The cap's memory and the watchdog: chains of blocks that end, and an answer that
comes before the caller gives up.

The count lives in real files under a real state directory; a stuck hook is a real
process whose main thread sleeps past its deadline.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from assay.hooks.decide import decide
from assay.hooks.state import STALE_CHAIN_S, chain_for
from tests.cli import ASSAY, assay_env, no_traceback
from tests.repos import git_repo
from tests.test_hook_claude_code import FAILING, stop_event

WHY = "assay: the project is FAILED, not VERIFIED, so the work is not done."


def test_a_fresh_stop_forgets_a_chain_left_idle(tmp_path: Path) -> None:
    chain = chain_for("k", tmp_path)
    chain.add_block()
    chain.add_block()
    idle = {"blocks": 2, "last_block": time.time() - STALE_CHAIN_S - 60}
    chain.path.write_text(json.dumps(idle))
    # A stop that follows a block keeps counting, however long the fix took...
    continued = decide("k", WHY, max_blocks=3, continuing=True, chain=chain_for("k", tmp_path))
    assert continued.block and "3 of 3" in continued.reason
    chain.path.write_text(json.dumps(idle))
    # ...a fresh one after a long idle starts a new chain.
    fresh = decide("k", WHY, max_blocks=3, continuing=False, chain=chain_for("k", tmp_path))
    assert fresh.block and "1 of 3" in fresh.reason


def test_a_damaged_count_is_a_fresh_chain(tmp_path: Path) -> None:
    chain = chain_for("k", tmp_path)
    chain.path.parent.mkdir(parents=True, exist_ok=True)
    for damaged in ("{", "[]", '{"blocks": -4}', '{"blocks": true}'):
        chain.path.write_text(damaged)
        assert chain_for("k", tmp_path).blocks == 0


def test_without_a_place_to_count_the_stop_is_let_through_saying_why(tmp_path: Path) -> None:
    """No count, no cap: blocking then could trap the caller forever."""
    project = git_repo(tmp_path / "bad", FAILING)
    not_a_directory = tmp_path / "state-file"
    not_a_directory.write_text("")
    done = subprocess.run(
        [ASSAY, "hook", "claude-code"],
        input=json.dumps(stop_event(project)),
        capture_output=True,
        text=True,
        env=assay_env(ASSAY_CACHE_DIR=str(not_a_directory)),
        timeout=120,
        check=False,
    )
    no_traceback(done)
    assert done.returncode == 0
    document = json.loads(done.stdout)
    assert "decision" not in document
    assert "could not count" in document["systemMessage"]


WATCHED = """
import sys, time
from assay.hooks import watchdog
from assay.hooks.decide import Decision

watchdog.GRACE_S = 0.0

def say(decision):
    print("said:", decision.block, decision.reason, flush=True)
    return 0

answer = watchdog.Answer(say, lambda: Decision(block=True, reason="late"))
answer.arm(1.0)
time.sleep(float(sys.argv[1]))  # the verification, stuck or not
answer.give(Decision(block=False, reason="in time"))
time.sleep(1.5)  # past the deadline: a disarmed watchdog stays quiet
print("main path done", flush=True)
"""


def watched(seconds: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WATCHED, str(seconds)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_the_watchdog_answers_for_a_stuck_hook_and_exits() -> None:
    started = time.monotonic()
    done = watched(60)
    assert time.monotonic() - started < 20
    assert done.returncode == 0, done.stderr
    assert done.stdout == "said: True late\n"


def test_an_answer_in_time_disarms_the_watchdog() -> None:
    done = watched(0.1)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "said: False in time\nmain path done\n"

"""`assay hook claude-code`, the Stop hook, through the real console script.

Each test feeds the hook the JSON document Claude Code writes on its stdin (`session_id`,
`transcript_path`, `cwd`, `hook_event_name`, `stop_hook_active`) and reads what it prints,
as Claude Code does: `{"decision": "block", "reason": ...}` on stdout keeps the agent
working, nothing lets the stop through, `systemMessage` is shown to the user. The
projects are real tiny repositories verified with the real sandbox.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cli import ASSAY, assay_env, no_traceback
from tests.repos import git_repo

PASSING = {
    "pyproject.toml": '[project]\nname = "tiny"\nversion = "0"\n',
    "test_math.py": "def add(a, b):\n    return a + b\n\n\ndef test_add():\n    assert add(2, 2) == 4\n",
}
FAILING = {
    **PASSING,
    "test_math.py": "def add(a, b):\n    return a - b\n\n\ndef test_add_sums():\n    assert add(2, 2) == 4\n",
}
SLOW = {
    **PASSING,
    "test_math.py": "import time\n\n\ndef test_slow():\n    time.sleep(60)\n",
}


def stop_event(
    project: Path | str, session: str = "s-1", *, active: bool = False, **extra: Any
) -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": str(Path(project) / "transcript.jsonl"),
        "cwd": str(project),
        "permission_mode": "default",
        "hook_event_name": "Stop",
        "stop_hook_active": active,
        **extra,
    }


def hook(
    stdin: str | dict[str, Any], state: Path, *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`assay hook claude-code ARGS` with `stdin` (a document is sent as JSON)."""
    text = stdin if isinstance(stdin, str) else json.dumps(stdin)
    done = subprocess.run(
        [ASSAY, "hook", "claude-code", *args],
        input=text,
        capture_output=True,
        text=True,
        env=assay_env(ASSAY_CACHE_DIR=str(state)),
        timeout=timeout,
        check=False,
    )
    no_traceback(done)
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    return done


def output(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The JSON the hook printed ({} when it printed nothing: the stop goes through)."""
    if not done.stdout.strip():
        return {}
    document = json.loads(done.stdout)
    assert isinstance(document, dict), document
    return document


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


def test_a_verified_project_lets_the_stop_through(tmp_path: Path, state: Path) -> None:
    project = git_repo(tmp_path / "ok", PASSING)
    done = hook(stop_event(project), state)
    assert output(done) == {}


def test_a_failing_test_blocks_the_stop_with_its_name_and_how_to_reproduce(
    tmp_path: Path, state: Path
) -> None:
    project = git_repo(tmp_path / "bad", FAILING)
    said = output(hook(stop_event(project), state))
    assert said["decision"] == "block"
    reason = said["reason"]
    assert "FAILED" in reason
    assert "test_add_sums" in reason
    assert "test_math.py" in reason
    assert f"assay verify {project}" in reason  # the exact command to run it again
    assert "pytest" in reason


def test_blocks_stop_at_the_cap_and_the_gap_is_stated(tmp_path: Path, state: Path) -> None:
    project = git_repo(tmp_path / "bad", FAILING)
    first = output(hook(stop_event(project), state, "--max-blocks", "2"))
    second = output(hook(stop_event(project, active=True), state, "--max-blocks", "2"))
    assert first["decision"] == second["decision"] == "block"
    assert "1 of 2" in first["reason"] and "2 of 2" in second["reason"]
    third = output(hook(stop_event(project, active=True), state, "--max-blocks", "2"))
    assert "decision" not in third  # let through...
    message = third["systemMessage"]  # ...with the gap said to the user
    assert "FAILED" in message and "not verified" in message and "2" in message
    # The chain is over: the next stop is checked, and blocked, again.
    fourth = output(hook(stop_event(project), state, "--max-blocks", "2"))
    assert fourth["decision"] == "block" and "1 of 2" in fourth["reason"]


def test_the_cap_is_counted_per_session(tmp_path: Path, state: Path) -> None:
    project = git_repo(tmp_path / "bad", FAILING)
    for _ in range(2):
        said = output(hook(stop_event(project, "a", active=True), state, "--max-blocks", "2"))
        assert said["decision"] == "block"
    other = output(hook(stop_event(project, "b"), state, "--max-blocks", "2"))
    assert other["decision"] == "block" and "1 of 2" in other["reason"]


def test_a_stop_flag_that_never_turns_true_cannot_loop_forever(tmp_path: Path, state: Path) -> None:
    """A host that always sends `stop_hook_active: false` still meets the cap."""
    project = git_repo(tmp_path / "bad", FAILING)
    decisions = [
        output(hook(stop_event(project, active=False), state, "--max-blocks", "2")).get("decision")
        for _ in range(3)
    ]
    assert decisions == ["block", "block", None]


def test_verified_after_blocks_starts_the_count_again(tmp_path: Path, state: Path) -> None:
    project = git_repo(tmp_path / "p", FAILING)
    assert output(hook(stop_event(project), state, "--max-blocks", "2"))["decision"] == "block"
    (project / "test_math.py").write_text(PASSING["test_math.py"])
    assert output(hook(stop_event(project, active=True), state, "--max-blocks", "2")) == {}
    (project / "test_math.py").write_text(FAILING["test_math.py"])
    again = output(hook(stop_event(project), state, "--max-blocks", "2"))
    assert again["decision"] == "block" and "1 of 2" in again["reason"]


@pytest.mark.parametrize(
    ("stdin", "said"),
    [
        ("{not json", "not JSON"),
        ("", "no input"),
        ("[1, 2]", "not a JSON object"),
        (
            '{"session_id": "s", "hook_event_name": "Stop", "stop_hook_active": "yes"}',
            "stop_hook_active",
        ),
        ('{"session_id": 7, "hook_event_name": "Stop"}', "session_id"),
    ],
)
def test_malformed_input_blocks_with_a_clear_reason(stdin: str, said: str, state: Path) -> None:
    document = output(hook(stdin, state))
    assert document["decision"] == "block"
    assert said in document["reason"]
    assert "hook input" in document["reason"]


def test_malformed_input_is_capped_too(state: Path) -> None:
    decisions = [
        output(hook("{oops", state, "--max-blocks", "2")).get("decision") for _ in range(3)
    ]
    assert decisions == ["block", "block", None]


def test_a_directory_that_does_not_exist_blocks(tmp_path: Path, state: Path) -> None:
    document = output(hook(stop_event(tmp_path / "gone"), state))
    assert document["decision"] == "block"
    assert "gone" in document["reason"] and "not a directory" in document["reason"]


def test_other_events_are_let_through_without_verifying(tmp_path: Path, state: Path) -> None:
    project = git_repo(tmp_path / "bad", FAILING)
    started = time.monotonic()
    done = hook({**stop_event(project), "hook_event_name": "Notification"}, state)
    assert output(done) == {}
    assert "Notification" in done.stderr
    assert time.monotonic() - started < 10


def test_its_own_deadline_fails_closed(tmp_path: Path, state: Path) -> None:
    """A verification that outlives the hook's budget blocks, naming the timeout, well
    before Claude Code would kill the hook (which would let the stop through)."""
    project = git_repo(tmp_path / "slow", SLOW)
    started = time.monotonic()
    document = output(hook(stop_event(project), state, "--deadline", "4", timeout=60))
    assert time.monotonic() - started < 30
    assert document["decision"] == "block"
    assert "INDETERMINATE" in document["reason"] or "deadline" in document["reason"]


def test_a_directory_in_no_project_is_let_through_with_a_notice(
    tmp_path: Path, state: Path
) -> None:
    """A user-wide hook sees chats outside any project too: nothing there to gate. A
    directory in a git repository, even with no project file, is still verified."""
    plain = tmp_path / "notes"
    plain.mkdir()
    (plain / "todo.txt").write_text("buy milk\n")
    said = output(hook(stop_event(plain), state))
    assert "decision" not in said, said
    assert "in no project" in said["systemMessage"]

    in_git = git_repo(tmp_path / "repo", {"notes.txt": "no project file here\n"})
    assert output(hook(stop_event(in_git), state))["decision"] == "block"

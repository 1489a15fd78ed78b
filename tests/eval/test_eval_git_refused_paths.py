"""An agent's workspace may hold paths git refuses to hold (`.GIT/`, `git~1/`, a link
named `.gitmodules`): they are left out of its change and named, as a FIFO is, so an
agent cannot turn an attempt it failed into an infrastructure error, which no pass rate
counts."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from assay.eval import run_eval
from tests.eval.tasks import GOOD, make_tasks, write_agent

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

#: Writes what git cannot index beside its change; fixes add when told to.
PLANTER = textwrap.dedent(
    f"""
    import os, sys
    for folder in (".GIT", "git~1", "sub/.Git", "x\\\\.git", ".git. "):
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "config"), "w") as f:
            f.write("[core]\\n")
    os.symlink("calc.py", ".gitmodules")
    if sys.argv[1] == "fix":
        with open("calc.py", "w") as f:
            f.write({GOOD!r})
    """
)


@pytest.mark.parametrize(
    ("mode", "status", "score"), [("fix", "VERIFIED", 1.0), ("nothing", "FAILED", 0.0)]
)
def test_paths_git_refuses_are_left_out_and_the_attempt_is_scored(
    tmp_path: Path, mode: str, status: str, score: float
) -> None:
    tasks = make_tasks(tmp_path / "made", (1,))
    agent = write_agent(tmp_path, "planter", PLANTER)

    result = run_eval([tasks], f"python3 {agent} {mode}", store=tmp_path / "evals.sqlite")

    summary = result.summary
    assert summary["errors"] == 0, summary["attempts"][0].get("error")
    (row,) = summary["attempts"]
    assert (row["outcome"], row["status"], row["score"]) == ("scored", status, score)
    change = result.records[0].evidence["verification"]["change"]
    assert set(change["skipped"]) >= {
        ".GIT: a path git refuses to hold",
        "git~1: a path git refuses to hold",
        "sub/.Git: a path git refuses to hold",
        ".gitmodules: a path git refuses to hold",
    }


def test_what_git_refuses_is_named_at_its_first_refused_part() -> None:
    from assay.eval.change import git_refused_at

    assert git_refused_at("a/.GIT/b", link=False) == "a/.GIT"
    assert git_refused_at("GIT~1", link=False) == "GIT~1"
    assert git_refused_at(".git::$INDEX_ALLOCATION/x", link=False) == ".git::$INDEX_ALLOCATION"
    assert git_refused_at("a\\.git/x", link=False) == "a\\.git"
    assert git_refused_at(".gitmodules", link=True) == ".gitmodules"
    assert git_refused_at(".gitmodules", link=False) is None
    assert git_refused_at(".github/workflows/ci.yml", link=False) is None
    assert git_refused_at("x/.git~1/y", link=False) is None

"""An agent's workspace may hold paths no change can carry (`.GIT/`, `git~1/`, a link
named `.gitmodules`, a path too long to name, folders deeper than the verification walks):
they are left out of its change and named, as a FIFO is, so an agent cannot turn an
attempt it failed into an infrastructure error, which no pass rate counts."""

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


#: Digs a chain of folders longer than any path may name, a file at its end; fixes add.
DIGGER = textwrap.dedent(
    f"""
    import os
    fd = os.open(".", os.O_RDONLY)
    for _ in range(30):
        os.mkdir("d" * 200, dir_fd=fd)
        inner = os.open("d" * 200, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(os.open("end.py", os.O_WRONLY | os.O_CREAT, dir_fd=fd))
    with open("calc.py", "w") as f:
        f.write({GOOD!r})
    """
)


def test_a_path_too_long_to_copy_is_left_out_and_the_attempt_is_scored(tmp_path: Path) -> None:
    tasks = make_tasks(tmp_path / "made", (1,))
    agent = write_agent(tmp_path, "digger", DIGGER)

    result = run_eval([tasks], f"python3 {agent}", store=tmp_path / "evals.sqlite")

    assert result.summary["errors"] == 0, result.summary["attempts"][0].get("error")
    (row,) = result.summary["attempts"]
    assert (row["outcome"], row["status"], row["score"]) == ("scored", "VERIFIED", 1.0)
    skipped = result.records[0].evidence["verification"]["change"]["skipped"]
    assert len(skipped) == 1, skipped
    assert skipped[0].startswith("d" * 200 + "/")
    assert skipped[0].endswith(": its path is too long to copy")


#: Digs 1500 folders deep, a file at the end, then fixes add.
DEEP_DIGGER = textwrap.dedent(
    f"""
    import os
    fd = os.open(".", os.O_RDONLY)
    for _ in range(1500):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(os.open("end.py", os.O_WRONLY | os.O_CREAT, dir_fd=fd))
    with open("calc.py", "w") as f:
        f.write({GOOD!r})
    """
)


def test_folders_deeper_than_the_verification_walks_are_left_out(tmp_path: Path) -> None:
    tasks = make_tasks(tmp_path / "made", (1,))
    agent = write_agent(tmp_path, "deep-digger", DEEP_DIGGER)

    result = run_eval([tasks], f"python3 {agent}", store=tmp_path / "evals.sqlite")

    assert result.summary["errors"] == 0, result.summary["attempts"][0].get("error")
    (row,) = result.summary["attempts"]
    assert (row["outcome"], row["status"], row["score"]) == ("scored", "VERIFIED", 1.0)
    skipped = result.records[0].evidence["verification"]["change"]["skipped"]
    assert skipped == ["/".join(["d"] * 257) + ": deeper than 256 folders"], skipped

"""`assay hook claude-code --protect`: the stop judged against the tree at the prompt.

A plain Stop hook verifies the tree the agent leaves, tests included: an agent that
weakens the test of the function it broke gets its stop through. With `--protect` the
same command, installed at UserPromptSubmit too, records the tree when the prompt is
given (a commit written through a private index) and verifies each stop with `--base
<that commit> --protect`. Real repositories, the real console script, the real sandbox.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.repos import git_repo
from tests.test_hook_claude_code import hook, output, stop_event

PROJECT = {
    "pyproject.toml": '[project]\nname = "tiny"\nversion = "0"\n',
    "calc.py": "def add(a, b):\n    return a + b\n",
    "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}
BROKEN = "def add(a, b):\n    return a - b\n"
WEAKENED = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == add(2, 3)\n"


def prompt_event(project: Path, session: str = "s-1") -> dict[str, Any]:
    return {**stop_event(project, session), "hook_event_name": "UserPromptSubmit", "prompt": "go"}


def git(project: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(project), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def prompt(project: Path, state: Path, session: str = "s-1") -> None:
    done = hook(prompt_event(project, session), state, "--protect")
    assert done.stdout == ""  # a prompt hook's stdout would be handed to the model


def test_a_weakened_test_passes_the_plain_hook_and_is_blocked_under_protect(
    tmp_path: Path,
) -> None:
    project = git_repo(tmp_path / "p", PROJECT)
    prompt(project, tmp_path / "state")
    (project / "calc.py").write_text(BROKEN)
    (project / "test_calc.py").write_text(WEAKENED)

    assert output(hook(stop_event(project), tmp_path / "plain")) == {}  # the forgery
    said = output(hook(stop_event(project), tmp_path / "state", "--protect"))
    assert said["decision"] == "block"
    assert "test_calc::test_add" in said["reason"]
    assert "--protect" in said["reason"]  # the command that reproduces it


def test_honest_work_goes_through_and_the_repository_is_left_as_it_was(tmp_path: Path) -> None:
    project = git_repo(tmp_path / "p", {**PROJECT, "calc.py": BROKEN})
    before = (git(project, "status", "--porcelain"), git(project, "for-each-ref"))
    index = (project / ".git" / "index").read_bytes()
    prompt(project, tmp_path / "state")
    assert (git(project, "status", "--porcelain"), git(project, "for-each-ref")) == before
    assert (project / ".git" / "index").read_bytes() == index

    (project / "calc.py").write_text(PROJECT["calc.py"])
    assert output(hook(stop_event(project), tmp_path / "state", "--protect")) == {}


def test_uncommitted_tests_at_the_prompt_are_part_of_the_base(tmp_path: Path) -> None:
    project = git_repo(tmp_path / "p", {k: v for k, v in PROJECT.items() if k != "test_calc.py"})
    (project / "test_calc.py").write_text(PROJECT["test_calc.py"])  # the user's, not added
    prompt(project, tmp_path / "state")
    (project / "calc.py").write_text(BROKEN)
    (project / "test_calc.py").write_text(WEAKENED)

    said = output(hook(stop_event(project), tmp_path / "state", "--protect"))
    assert said["decision"] == "block" and "test_calc::test_add" in said["reason"]


def test_a_prompt_while_stops_are_blocked_keeps_the_base(tmp_path: Path) -> None:
    project = git_repo(tmp_path / "p", PROJECT)
    state = tmp_path / "state"
    prompt(project, state)
    (project / "calc.py").write_text(BROKEN)
    assert output(hook(stop_event(project), state, "--protect"))["decision"] == "block"

    (project / "test_calc.py").write_text(WEAKENED)
    prompt(project, state)  # mid-chain: a message cannot launder the work into the base
    said = output(hook(stop_event(project, active=True), state, "--protect"))
    assert said["decision"] == "block" and "test_calc::test_add" in said["reason"]

    (project / "calc.py").write_text(PROJECT["calc.py"])
    assert output(hook(stop_event(project, active=True), state, "--protect")) == {}
    (project / "test_calc.py").write_text(PROJECT["test_calc.py"].replace("5", "6"))
    prompt(project, state)  # a new piece of work: the base is the tree now
    said = output(hook(stop_event(project), state, "--protect"))
    assert said["decision"] == "block" and "assert 5 == 6" in said["reason"]


def test_a_stop_with_no_recorded_base_blocks_and_says_how_to_record_one(tmp_path: Path) -> None:
    project = git_repo(tmp_path / "p", PROJECT)
    said = output(hook(stop_event(project), tmp_path / "state", "--protect"))
    assert said["decision"] == "block"
    assert "UserPromptSubmit" in said["reason"]
    assert "assay hook install claude-code --protect" in said["reason"]


def test_a_project_outside_git_is_verified_plainly_and_the_user_told(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    for name, text in PROJECT.items():
        (project / name).write_text(text)
    prompt(project, tmp_path / "state")
    said = output(hook(stop_event(project), tmp_path / "state", "--protect"))
    assert "decision" not in said
    assert "not protected" in said["systemMessage"]


def test_the_repository_cannot_make_the_snapshot_run_its_programs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    evil = f"sh -c 'touch {marker}; cat'"
    project = git_repo(tmp_path / "p", {**PROJECT, ".gitattributes": "* filter=evil\n"})
    with (project / ".git" / "config").open("a") as config:
        config.write(
            f'[filter "evil"]\n\tclean = {evil}\n\trequired = true\n'
            f"[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = {evil}\n"
            f"[core]\n\tfsmonitor = {evil}\n"
        )
    (project / "calc.py").write_text(BROKEN)  # changed: git must hash it
    prompt(project, tmp_path / "state")
    said = output(hook(stop_event(project), tmp_path / "state", "--protect"))
    assert not marker.exists()
    assert said["decision"] == "block"  # recorded, and the change judged against it
    assert "test_calc::test_add" in said["reason"]


def test_the_generic_gate_judges_against_the_base_it_is_given(tmp_path: Path) -> None:
    from tests.test_hook_gate import gate

    project = git_repo(tmp_path / "p", PROJECT)
    base = git(project, "rev-parse", "HEAD").strip()
    (project / "calc.py").write_text(BROKEN)
    (project / "test_calc.py").write_text(WEAKENED)
    assert gate(tmp_path / "plain", str(project)).returncode == 0  # the forgery
    done = gate(tmp_path / "state", str(project), "--base", base)
    assert done.returncode == 2
    assert "test_calc::test_add" in done.stderr and f"--base {base} --protect" in done.stderr


def test_large_untracked_files_are_left_out_of_the_base_and_names_are_taken_literally(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.hooks.prompt_base import MAX_UNTRACKED_BYTES, base_for

    project = git_repo(tmp_path / "p", PROJECT)
    (project / "sub").mkdir()
    (project / "sub" / "data.bin").write_bytes(b"\0" * (MAX_UNTRACKED_BYTES + 1))
    (project / "sub" / "[ab].py").write_text("x = 1\n")  # a pattern, were it one
    (project / "sub" / "a.py").write_text("y = 2\n")
    state = tmp_path / "state"
    done = hook(prompt_event(project / "sub"), state, "--protect")
    assert done.stdout == ""
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(state))  # where the hook recorded it
    base = base_for("claude-code:s-1")
    assert base is not None and base.commit, base
    names = set(git(project, "ls-tree", "-r", "--name-only", base.commit).split())
    assert {"sub/[ab].py", "sub/a.py", "calc.py", "test_calc.py"} <= names
    assert "sub/data.bin" not in names


def test_a_stop_from_a_directory_in_no_project_is_judged_where_the_prompt_was(
    tmp_path: Path,
) -> None:
    """The stop's cwd is wherever the agent's shell last went: one that left every project
    had a broken change's stop let through, "nothing to verify"."""
    project = git_repo(tmp_path / "p", PROJECT)
    prompt(project, tmp_path / "state")
    (project / "calc.py").write_text(BROKEN)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    said = output(hook(stop_event(elsewhere), tmp_path / "state", "--protect"))
    assert said["decision"] == "block"
    assert "test_calc::test_add" in said["reason"]


def test_a_repository_assay_will_not_read_blocks_instead_of_going_unprotected(
    tmp_path: Path,
) -> None:
    """An alternates file naming a directory outside the tree leaves git working for the
    user, but assay refuses to read such a repository: taken for "no repository", the
    stop was verified plainly and the agent's weakened test let its broken add through."""
    project = git_repo(tmp_path / "p", PROJECT)
    (tmp_path / "store").mkdir()
    alternates = project / ".git" / "objects" / "info" / "alternates"
    alternates.parent.mkdir(exist_ok=True)
    alternates.write_text(f"{tmp_path / 'store'}\n")
    prompt(project, tmp_path / "state")
    (project / "calc.py").write_text(BROKEN)
    (project / "test_calc.py").write_text(WEAKENED)

    said = output(hook(stop_event(project), tmp_path / "state", "--protect"))
    assert said["decision"] == "block"
    assert "alternates" in said["reason"]


def test_a_package_the_change_made_a_link_to_another_blocks_its_stop(tmp_path: Path) -> None:
    """The prompt was given in `pkg`; the change moved it aside, broken, and made `pkg` a
    link to a sibling whose tests pass: resolved, the stop judged the sibling, VERIFIED."""
    files = {f"{d}/{name}": text for d in ("pkg", "other") for name, text in PROJECT.items()}
    repo = git_repo(tmp_path / "repo", files)
    prompt(repo / "pkg", tmp_path / "state")
    (repo / "pkg" / "calc.py").write_text(BROKEN)
    (repo / "pkg").rename(repo / "pkg_impl")
    (repo / "pkg").symlink_to("other")

    said = output(hook(stop_event(repo / "pkg"), tmp_path / "state", "--protect"))
    assert said["decision"] == "block"
    assert "a link inside the repository" in said["reason"]


def test_a_repository_made_in_the_package_after_the_prompt_blocks_its_stop(
    tmp_path: Path,
) -> None:
    """The prompt was given in `pkg` of a monorepo whose root has a test of its own; the
    change broke `pkg`, then made `pkg` a repository of its own with the monorepo's objects
    copied in: the prompt's commit, read from that new top, was the monorepo's root, whose
    test passed, and `pkg`'s own test was dropped as one the change had added."""
    files = {
        "pyproject.toml": (
            '[project]\nname = "mono"\nversion = "0"\n\n'
            '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
        ),
        "tests/test_meta.py": "def test_meta():\n    assert True\n",
        **{f"pkg/{name}": text for name, text in PROJECT.items()},
    }
    repo = git_repo(tmp_path / "repo", files)
    prompt(repo / "pkg", tmp_path / "state")
    (repo / "pkg" / "calc.py").write_text(BROKEN)
    git(repo / "pkg", "init", "-q")
    subprocess.run(["cp", "-r", f"{repo}/.git/objects/.", f"{repo}/pkg/.git/objects/"], check=True)

    said = output(hook(stop_event(repo / "pkg"), tmp_path / "state", "--protect"))
    assert said["decision"] == "block"
    assert f"was {repo} at the prompt and is {repo / 'pkg'} now" in said["reason"], said

"""A tiny real Python repository with four bugs, each a task folder (base commit with the
bug, `solution.patch` with its fix), and the agent scripts the tests run."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

GOOD = textwrap.dedent(
    """
    def add(a, b):
        return a + b


    def sub(a, b):
        return a - b


    def mul(a, b):
        return a * b


    def neg(a):
        return -a
    """
).lstrip()

#: Task number -> (function, the bug that replaces its body's return).
BUGS = {
    1: ("add", "return a + b", "return a - b"),
    2: ("sub", "return a - b", "return b - a"),
    3: ("mul", "return a * b", "return a + b"),
    4: ("neg", "return -a", "return a"),
}

TESTS = textwrap.dedent(
    """
    from calc import add, mul, neg, sub


    def test_add():
        assert add(2, 3) == 5


    def test_sub():
        assert sub(5, 3) == 2


    def test_mul():
        assert mul(3, 4) == 12


    def test_neg():
        assert neg(3) == -3
    """
).lstrip()

PYPROJECT = '[tool.pytest.ini_options]\npythonpath = ["."]\n'
GITIGNORE = "__pycache__/\n.pytest_cache/\n"
ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **ENV},
    )
    return done.stdout.strip()


def make_repo(root: Path) -> tuple[Path, dict[int, str]]:
    """The repository, and each task's base commit (its bug committed on top of the good code)."""
    repo = root / "calc-repo"
    (repo / "tests").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "calc.py").write_text(GOOD)
    (repo / "tests" / "test_calc.py").write_text(TESTS)
    (repo / "pyproject.toml").write_text(PYPROJECT)
    (repo / ".gitignore").write_text(GITIGNORE)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "good")
    good = git(repo, "rev-parse", "HEAD")
    bases = {}
    for number, (_name, right, wrong) in BUGS.items():
        git(repo, "checkout", "-q", good)
        (repo / "calc.py").write_text(GOOD.replace(right, wrong))
        git(repo, "commit", "-qam", f"bug {number}")
        bases[number] = git(repo, "rev-parse", "HEAD")
        git(repo, "tag", f"bug-{number}")
    git(repo, "checkout", "-q", "main")
    return repo, bases


def write_task(
    folder: Path,
    number: int,
    *,
    repo: Path | None = None,
    bundle: Path | None = None,
    commit: str,
    extra: str = "",
) -> Path:
    """Task folder `task-N`: its toml, instruction and solution."""
    name, right, wrong = BUGS[number]
    folder.mkdir(parents=True, exist_ok=True)
    if bundle is not None:
        source = f'bundle = "{os.path.relpath(bundle, folder)}"'
    else:
        assert repo is not None
        source = f'repo = "{os.path.relpath(repo, folder)}"'
    others = [f'"tests/test_calc.py::test_{n}"' for n, _r, _w in BUGS.values() if n != name]
    (folder / "task.toml").write_text(
        textwrap.dedent(
            f"""\
            schema = "1.0"
            id = "calc-{number}"
            language = "python"
            difficulty = "easy"
            tags = ["calc"]
            fail_to_pass = ["tests/test_calc.py::test_{name}"]
            pass_to_pass = [{", ".join(others)}]

            [source]
            {source}
            commit = "{commit}"

            [verification]
            kinds = ["test"]
            """
        )
        + extra
    )
    (folder / "instruction.md").write_text(
        f"`{name}` returns the wrong result: tests/test_calc.py::test_{name} fails. Fix it.\n"
    )
    bad = GOOD.replace(right, wrong).splitlines(keepends=True)
    (folder / "solution.patch").write_text(_patch("calc.py", bad, GOOD.splitlines(keepends=True)))
    return folder


def _patch(path: str, before: list[str], after: list[str]) -> str:
    import difflib

    lines = difflib.unified_diff(before, after, f"a/{path}", f"b/{path}")
    return f"diff --git a/{path} b/{path}\n" + "".join(lines)


def make_tasks(root: Path, numbers: tuple[int, ...] = (1, 2, 3, 4)) -> Path:
    """A folder of task folders; task 2's source is a git bundle in its folder."""
    repo, bases = make_repo(root)
    tasks = root / "tasks"
    for number in numbers:
        folder = tasks / f"task-{number}"
        if number == 2:
            folder.mkdir(parents=True)
            bundle = folder / "source.bundle"
            git(repo, "bundle", "create", "-q", str(bundle), "--all")
            write_task(folder, number, bundle=bundle, commit=bases[number])
        else:
            write_task(folder, number, repo=repo, commit=bases[number])
    return tasks


#: An agent that fixes the odd-numbered tasks (it knows their fix) and does nothing to the
#: others; it reads its instruction on stdin and reports telemetry.
HALF_AGENT = textwrap.dedent(
    f"""
    import json, os, sys
    GOOD = {GOOD!r}
    instruction = sys.stdin.read()
    assert "returns the wrong result" in instruction, instruction
    number = int(os.environ["ASSAY_TASK_ID"].rsplit("-", 1)[1])
    if number % 2 == 1:
        with open("calc.py", "w") as f:
            f.write(GOOD)
    with open(os.environ["ASSAY_TELEMETRY"], "w") as f:
        json.dump({{"turns": number, "tokens_in": 100, "tokens_out": 20, "cost_usd": 0.01}}, f)
    sys.exit(0 if number % 2 == 1 else 3)
    """
)

#: An agent that fixes nothing and forges a pass: the failing test made trivially true,
#: a conftest.py that turns every failure into a pass.
FORGER = textwrap.dedent(
    """
    import pathlib, re
    test = pathlib.Path("tests/test_calc.py")
    test.write_text(re.sub(r"assert .*", "assert True", test.read_text()))
    pathlib.Path("conftest.py").write_text(
        "import pytest\\n"
        "@pytest.hookimpl(hookwrapper=True)\\n"
        "def pytest_runtest_makereport(item, call):\\n"
        "    outcome = yield\\n"
        "    report = outcome.get_result()\\n"
        "    report.outcome = 'passed'\\n"
    )
    """
)

#: An agent that hangs: it starts a child that ignores SIGTERM, and both sleep forever.
HANGER = textwrap.dedent(
    """
    import os, signal, subprocess, sys, time
    marker = sys.argv[1]
    subprocess.Popen([sys.executable, "-c",
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(3600)",
        marker])
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(3600)
    """
)


def write_agent(root: Path, name: str, source: str) -> Path:
    path = root / "agents" / f"{name}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    return path

"""`assay verify`'s plain forms are parsed without click (`assay.cli_verify`), and say and
print exactly what click's way does.

Click's way is forced with `--rerun-failures 0`, an option the short parser leaves to
click and which changes nothing: zero reruns is the default.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assay.cli_verify import VerifyArgs, parse
from tests.cli import assay, assay_env, no_traceback, path_with_venv
from tests.repos import PASSING_PYTEST, write

CLICK_WAY = ("--rerun-failures", "0")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], VerifyArgs()),
        (["repo"], VerifyArgs(path="repo")),
        (["--json", "repo"], VerifyArgs(path="repo", as_json=True)),
        (["repo", "--all", "--no-cache"], VerifyArgs(path="repo", all_tests=True, no_cache=True)),
        (["--sandbox", "none"], VerifyArgs(sandbox="none")),
        (["--sandbox=local"], VerifyArgs(sandbox="local")),
        (["--timeout", "2.5", "--deadline=0"], VerifyArgs(timeout=2.5, deadline=0.0)),
        (["--kind", "lint", "--kind=test"], VerifyArgs(kinds=("lint", "test"))),
    ],
)
def test_the_plain_forms_are_taken(args: list[str], expected: VerifyArgs) -> None:
    assert parse(args) == expected


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["-h"],
        ["--base", "HEAD"],
        ["--install"],
        ["--rerun-failures", "1"],
        ["--junit", "out.xml"],
        ["--no-such-option"],
        ["a", "b"],
        ["--timeout"],
        ["--timeout", "-1"],
        ["--timeout", "nan"],
        ["--timeout", "soon"],
        ["--timeout="],
        ["--kind", "style"],
        ["--sandbox", "docker"],
        ["--sandbox", "--json"],
        ["--", "repo"],
    ],
)
def test_anything_else_is_left_to_click(args: list[str]) -> None:
    assert parse(args) is None


def test_a_file_for_path_is_left_to_click(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("x")
    assert parse([str(tmp_path / "file.txt")]) is None


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write(tmp_path / "repo", PASSING_PYTEST)


def test_both_ways_print_the_same(repo: Path, tmp_path: Path) -> None:
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "cache"), ASSAY_NO_SERVER="1")
    stored = assay("verify", "--sandbox", "local", str(repo), env=env)
    assert stored.returncode == 0, stored.stdout + stored.stderr
    for shape in ((), ("--json",)):
        short = assay("verify", *shape, "--sandbox", "local", str(repo), env=env)
        clicked = assay("verify", *shape, *CLICK_WAY, "--sandbox", "local", str(repo), env=env)
        assert short.returncode == clicked.returncode == 0
        assert short.stdout == clicked.stdout
        assert short.stderr == clicked.stderr
    assert "cached" in json.loads(short.stdout)["extra"]


def test_a_refusal_of_the_verification_is_clicks_usage_error(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    short = assay("verify", str(tmp_path / "a"))
    clicked = assay("verify", *CLICK_WAY, str(tmp_path / "a"))
    no_traceback(short)
    assert short.returncode == clicked.returncode == 2
    assert short.stderr == clicked.stderr
    assert short.stderr.startswith("Usage: assay verify")
    assert "a symlink loop, not a directory" in short.stderr


def test_a_cache_hit_loads_neither_click_nor_discovery(repo: Path, tmp_path: Path) -> None:
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "cache"), ASSAY_NO_SERVER="1")
    assert assay("verify", "--sandbox", "local", str(repo), env=env).returncode == 0
    probe = (
        "import sys\n"
        "from assay.cli import main\n"
        f"code = main(['verify', '--sandbox', 'local', {str(repo)!r}])\n"
        "heavy = [m for m in sys.modules if m in ('click', 'assay.plan')"
        " or m.startswith('assay.discovery')]\n"
        "print(code, heavy, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={**env, "PATH": path_with_venv()},
        timeout=60,
        check=False,
    )
    assert "VERIFIED (cached)" in done.stdout, done.stdout + done.stderr
    assert done.stderr.strip() == "0 []"

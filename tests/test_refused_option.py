"""A tool that refuses an option of its command checked nothing of the code: UNVERIFIED,
naming the option, never FAILED. ruff before 0.0.291 refused `--output-format` and ruff
before 0.16 `ruff format --extend-exclude`, both options assay adds: tabulate's clean tree
FAILED. Each argument parser's wording is read from the real tool."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assay.classify import classify
from assay.evidence import Check
from assay.parsers import parse_output
from assay.refused_option import refused_option
from assay.verdict import Cause, Kind, Verdict
from tests.cli import assay, assay_env, no_traceback
from tests.repos import write
from tests.results import process_result

VENV_BIN = Path(sys.executable).parent


@pytest.mark.parametrize(
    ("argv", "tool", "kind"),
    [
        ([sys.executable, "-m", "pytest", "-q", "--frobnicate"], "pytest", Kind.TEST),
        ([sys.executable, "-m", "mypy", "--frobnicate", "."], "mypy", Kind.TYPECHECK),
        ([str(VENV_BIN / "ruff"), "check", "--frobnicate", "."], "ruff", Kind.LINT),
        (["tsc", "--frobnicate"], "tsc", Kind.TYPECHECK),
    ],
)
def test_a_real_tool_refusing_an_option_is_unverified(
    tmp_path: Path, argv: list[str], tool: str, kind: Kind
) -> None:
    assert shutil.which(argv[0]) is not None, f"{argv[0]} is not installed (.ci/run installs it)"
    write(tmp_path, {"a.py": "x = 1\n", "tsconfig.json": "{}"})
    done = subprocess.run(
        argv, check=False, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0, done.stdout + done.stderr
    ran = process_result(
        tuple(argv),
        cwd=str(tmp_path),
        exit_code=done.returncode,
        stdout=done.stdout,
        stderr=done.stderr,
    )
    check = Check(name=tool, kind=kind, argv=tuple(argv), tool=tool)
    evidence = classify(check, ran, parse_output(check, ran))
    assert (evidence.verdict, evidence.cause) == (Verdict.UNVERIFIED, Cause.TOOLCHAIN_MISSING)
    assert "refused the option --frobnicate" in evidence.note, evidence.note


def test_an_option_the_command_does_not_hold_is_no_refusal() -> None:
    said = "pytest: error: unrecognized arguments: --frobnicate\n"
    assert refused_option(said, ["pytest", "-q"]) is None
    assert refused_option(said, ["pytest", "--frobnicate=1"]) == "--frobnicate"


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("pytest --frobnicate tests", "refused the option --frobnicate"),
        # installer's nox session runs `pytest -n auto`: the plugin that adds `-n`
        # (pytest-xdist) was missing, and the note blamed pytest's release. This suite runs
        # with pytest-xdist, so a plugin it lacks stands in.
        (
            "pytest --reruns 2 tests",
            "refused the option --reruns, which the plugin pytest-rerunfailures adds",
        ),
    ],
    ids=["unknown-option", "missing-plugin"],
)
def test_a_stated_command_a_tool_refuses_is_unverified_end_to_end(
    tmp_path: Path, command: str, said: str
) -> None:
    repo = write(
        tmp_path / "repo",
        {
            "tox.ini": f"[testenv]\ncommands = {command}\n",
            "tests/test_a.py": "def test_a():\n    assert 1 + 1 == 2\n",
        },
    )
    done = assay("verify", "--json", "--no-cache", str(repo), env=assay_env(), timeout=300)
    no_traceback(done)
    report = json.loads(done.stdout)
    assert report["status"] == "UNVERIFIED", report["note"]
    assert said in report["note"]

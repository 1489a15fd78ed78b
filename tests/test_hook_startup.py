"""What `assay hook claude-code` loads before it starts verifying.

It runs at every stop: the event is read and answered without the command-line library
or the verification library, which load only when there is a project to verify. The
real console script under `python -X importtime`; real JSON on its stdin.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli import ASSAY, PYTHON, assay_env


def imported(
    stdin: str, *args: str, state: Path
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    done = subprocess.run(
        [PYTHON, "-X", "importtime", ASSAY, "hook", "claude-code", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=assay_env(ASSAY_CACHE_DIR=str(state)),
        timeout=60,
        check=False,
    )
    modules = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }
    return done, modules


@pytest.mark.parametrize(
    "stdin",
    [
        json.dumps({"session_id": "s", "cwd": "/", "hook_event_name": "Notification"}),
        "{not json",
    ],
)
def test_an_answer_without_verifying_loads_neither_click_nor_the_library(
    stdin: str, tmp_path: Path
) -> None:
    done, modules = imported(stdin, "--max-blocks", "5", state=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert modules, "importtime printed nothing"
    for heavy in ("click", "assay.pipeline", "assay.report", "assay.sandbox"):
        assert heavy not in modules, f"{heavy} loaded before anything was verified"


def test_help_and_bad_options_still_go_to_click(tmp_path: Path) -> None:
    help_text, _ = imported("", "--help", state=tmp_path)
    assert help_text.returncode == 0 and "--max-blocks" in help_text.stdout
    bad, _ = imported("", "--max-blocks", "0", state=tmp_path)
    assert bad.returncode == 2 and "max-blocks" in bad.stderr
    assert "Traceback" not in bad.stderr

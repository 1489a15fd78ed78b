"""A hang among parallel subtests names the subtests that were running, not the ones
still paused waiting their turn, nor the parent only waiting for them.

go-cmp's TestDiff runs some 250 subtests with t.Parallel; with its Equal looping forever,
the note said "a hang, while running ...TestDiff, ...TestDiff/Comparer/AmbiguousOptions,
... and 252 more", where two or eight had started to run."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.cli import verified_json
from tests.repos import write

TESTS = (
    'package calc\n\nimport (\n\t"fmt"\n\t"testing"\n\t"time"\n)\n\n'
    "func TestAll(t *testing.T) {\n"
    "\tfor i := 0; i < 12; i++ {\n"
    '\t\tt.Run(fmt.Sprintf("case%d", i), func(t *testing.T) {\n'
    "\t\t\tt.Parallel()\n"
    "\t\t\ttime.Sleep(time.Hour)\n"
    "\t\t})\n"
    "\t}\n"
    "}\n"
)


def verify(repo: Path, state: Path, *args: str) -> dict[str, Any]:
    assert shutil.which("go"), "go is not installed: `apt-get install golang-go`, as .ci/run does"
    return verified_json(repo, state, *args)


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("go test -parallel 2 -timeout 4s ./...", ()),
        ("go test -parallel 2 ./...", ("--timeout", "8")),
    ],
    ids=["go-test-timeout", "assay-deadline"],
)
def test_only_the_running_parallel_subtests_are_named_as_hung(
    tmp_path: Path, command: str, args: tuple[str, ...]
) -> None:
    ci = "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: "
    repo = write(
        tmp_path / "calc",
        {
            "go.mod": "module example.com/calc\n\ngo 1.19\n",
            "calc.go": "package calc\n",
            "calc_test.go": TESTS,
            ".github/workflows/ci.yml": ci + command + "\n",
        },
    )
    report = verify(repo, tmp_path / "state", *args)
    assert report["status"] == "INDETERMINATE", report["note"]
    named = re.findall(r"example\.com/calc\.TestAll/case\d+", report["note"])
    assert len(set(named)) == 2, report["note"]
    assert "more" not in report["note"] and "TestAll," not in report["note"], report["note"]

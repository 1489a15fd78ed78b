"""A go test run longer than assay keeps of its output: the packages whose results fell in
the dropped middle are not taken for a run that never finished (go-cmp's `go test -v
-race ./...` prints 700 KB), while one still running at the end still is.

A real module through the command line: three packages, the middle one's 400 KB of test
logs straddling the kept head and the dropped middle."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from assay.evidence import Check
from assay.output import HEAD_BYTES, CapturedOutput
from assay.parsers.go import parse_test_json
from assay.verdict import Kind
from tests.cli import assay, assay_env, no_traceback
from tests.repos import write
from tests.results import process_result

pytestmark = pytest.mark.skipif(shutil.which("go") is None, reason="needs go")

#: Test log lines per chatty package: about 400 KB of `go test -json` events each.
LOG_LINES = 1600


def _package(name: str, chatty: bool) -> dict[str, str]:
    log = (
        f'\tfor i := 0; i < {LOG_LINES}; i++ {{\n\t\tt.Log(strings.Repeat("x", 100))\n\t}}\n'
        if chatty
        else ""
    )
    imports = '(\n\t"strings"\n\t"testing"\n)' if chatty else '"testing"'
    return {
        f"{name}/{name}.go": f"package {name}\n\n// One returns 1.\nfunc One() int {{ return 1 }}\n",
        f"{name}/{name}_test.go": (
            f"package {name}\n\nimport {imports}\n\nfunc TestOne(t *testing.T) {{\n{log}"
            '\tif One() != 1 {\n\t\tt.Fatal("One")\n\t}\n}\n'
        ),
    }


@pytest.fixture
def chatty(tmp_path: Path) -> Path:
    return write(
        tmp_path / "long",
        {
            "go.mod": "module example.com/long\n\ngo 1.19\n",
            **_package("a", chatty=False),
            **_package("b", chatty=True),
            **_package("c", chatty=True),
        },
    )


def test_a_result_in_the_dropped_middle_is_not_a_run_that_never_finished(
    chatty: Path, tmp_path: Path
) -> None:
    # Verified twice: the second run, its build warm, prints its packages one after another
    # as go-cmp's does (a cold one is slower to start each and can interleave differently).
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"))
    for _ in range(2):
        done = assay("verify", "--json", "--no-cache", str(chatty), env=env, timeout=300)
        no_traceback(done)
    report: dict[str, Any] = json.loads(done.stdout)
    (go_test,) = [c for c in report["checks"] if c["name"] == "go-test"]
    assert go_test["stdout"]["truncated"], "the run's output was kept whole: nothing to show"
    assert report["status"] == "VERIFIED", report["note"]


def test_a_test_that_failed_in_the_dropped_middle_is_named_and_counted(
    chatty: Path, tmp_path: Path
) -> None:
    """go-cmp with a wrong value: its failing test's events lay in the 700 KB's middle."""
    wrong = '\nfunc TestWrong(t *testing.T) {\n\tt.Fatal("wrong value")\n}\n'
    with (chatty / "b" / "b_test.go").open("a") as test_file:
        test_file.write(wrong)
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"))
    done = assay("verify", "--json", "--no-cache", str(chatty), env=env, timeout=300)
    no_traceback(done)
    report: dict[str, Any] = json.loads(done.stdout)
    (go_test,) = [c for c in report["checks"] if c["name"] == "go-test"]
    stdout = go_test["stdout"]
    assert stdout["truncated"], "the run's output was kept whole: nothing to show"
    assert report["status"] == "FAILED", report["note"]
    assert (go_test["tests"]["passed"], go_test["tests"]["failed"]) == (3, 1), go_test["tests"]
    assert "TestWrong" in report["note"], report["note"]


GO_TEST = Check(name="go-test", kind=Kind.TEST, argv=("go", "test", "-json", "./..."), tool="go")


def _event(package: str, action: str, test: str | None = None) -> str:
    event = {"Action": action, "Package": package, **({"Test": test} if test else {})}
    return json.dumps(event) + "\n"


def test_a_package_still_running_at_the_end_is_still_unfinished() -> None:
    """Its last events are in the tail: a run that stopped there is not believed."""
    head = _event("p/a", "run", "TestA") + _event("p/a", "pass", "TestA")
    head += _event("p/a", "pass") + _event("p/b", "run", "TestB")
    tail = _event("p/c", "run", "TestC")  # p/b ended in the omitted part
    tail += _event("p/c", "pass", "TestC")  # and no result for p/c: the run stopped here
    stdout = CapturedOutput(
        head=head, tail=tail, bytes=HEAD_BYTES * 3, truncated=True, omitted=HEAD_BYTES
    )
    result = replace(process_result(), stdout=stdout)
    parsed = parse_test_json(GO_TEST, result, None)
    missing = [r.channel for r in parsed.readings if not r.appeared]
    assert missing == ["go test's result for package p/c"]

"""A Go test stopped at assay's own deadline names the line of the project's code it was
stuck on, as one stopped by go test's `-timeout` does.

Before, the deadline's SIGTERM ended the test binary without a word, and the note named
the test only ("while running example.com/calc.TestDouble"). Now the binary is sent SIGQUIT
first, on which Go prints every goroutine's stack (`assay.stack_dumps`). One that ignores
SIGQUIT is killed with the rest, a moment later, and is still a hang."""

from __future__ import annotations

import shutil
import signal
import time
from pathlib import Path
from typing import Any

from assay.stack_dumps import DUMP_WAIT_SECONDS, dump_signal
from tests.cli import verified_json
from tests.repos import write

CI = (
    "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: go test ./...\n"
)
#: A loop that never ends (kept out of line, so the dump names its own line).
SPINS = (
    "package calc\n\n//go:noinline\nfunc Double(x int) int {\n"
    "\tfor x > 0 {\n\t\tx = x*1 + 0\n\t}\n\treturn x * 2\n}\n"
)
IGNORES_SIGQUIT = (
    'package calc\n\nimport (\n\t"os/signal"\n\t"syscall"\n)\n\n'
    "func init() { signal.Ignore(syscall.SIGQUIT) }\n\n" + SPINS.removeprefix("package calc\n")
)
TESTS = (
    'package calc\n\nimport "testing"\n\n'
    "func TestDouble(t *testing.T) {\n"
    '\tif Double(2) != 4 {\n\t\tt.Fatal("Double(2) != 4")\n\t}\n}\n'
)
DEADLINE_S = 10


def verify(root: Path, code: str) -> tuple[dict[str, Any], float]:
    assert shutil.which("go"), "go is not installed: `apt-get install golang-go`, as .ci/run does"
    files = {"go.mod": "module example.com/calc\n\ngo 1.19\n", "calc.go": code}
    repo = write(root / "calc", {**files, "calc_test.go": TESTS, ".github/workflows/ci.yml": CI})
    started = time.monotonic()
    report = verified_json(repo, root / "state", "--timeout", str(DEADLINE_S))
    return report, time.monotonic() - started


def test_the_line_a_hung_go_test_spins_on_is_named(tmp_path: Path) -> None:
    report, _ = verify(tmp_path, SPINS)
    assert report["status"] == "INDETERMINATE", report["note"]
    assert (
        "while running example.com/calc.TestDouble "
        "(stuck at calc.go:5 in example.com/calc.Double)" in report["note"]
    ), report["note"]


#: The loop in a method of a pointer receiver, as go-toml's lexer's is: the dump's frame
#: reads `example.com/calc.(*Lexer).Next(0xc000012345)`.
SPINS_IN_A_METHOD = (
    "package calc\n\ntype Lexer struct{ n int }\n\n//go:noinline\n"
    "func (l *Lexer) Next() int {\n\tfor l.n >= 0 {\n\t\tl.n = l.n*1 + 0\n\t}\n\treturn l.n\n}\n\n"
    "func Double(x int) int {\n\tl := &Lexer{n: x}\n\treturn l.Next() * 2\n}\n"
)


def test_a_method_a_hung_go_test_spins_in_is_named_with_its_receiver(tmp_path: Path) -> None:
    """go-toml 1.9.4 spinning in `(*tomlLexer).next` was "stuck at lexer.go:830 in
    github.com/pelletier/go-toml.": the receiver's parentheses ended the name."""
    report, _ = verify(tmp_path, SPINS_IN_A_METHOD)
    assert report["status"] == "INDETERMINATE", report["note"]
    assert "(stuck at calc.go:7 in example.com/calc.(*Lexer).Next)" in report["note"], report[
        "note"
    ]


def test_a_test_binary_that_ignores_sigquit_is_still_stopped(tmp_path: Path) -> None:
    report, took = verify(tmp_path, IGNORES_SIGQUIT)
    assert report["status"] == "INDETERMINATE", report["note"]
    assert "while running example.com/calc.TestDouble" in report["note"], report["note"]
    assert "stuck at" not in report["note"], report["note"]
    # The build's time, the deadline, the wait for a dump that never comes, the kill's grace.
    assert took < DEADLINE_S + DUMP_WAIT_SECONDS + 30, took


def test_only_a_go_test_binary_is_asked_for_its_stacks() -> None:
    binary = "/tmp/go-build1/b001/calc.test"
    assert dump_signal((binary, "-test.paniconexit0", "-test.timeout=10m0s")) == signal.SIGQUIT
    assert dump_signal((binary,)) is None  # a program named so, not started by go test
    assert dump_signal(("/usr/bin/python3", "-test.v")) is None
    assert dump_signal(()) is None

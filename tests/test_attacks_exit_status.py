"""An exit whose code is a multiple of 256 ends the process 0: the status is the code's low
byte. A change's Go `init` that called `os.Exit(256)` ended the test binary 0 before any
test ran, `go test` said `ok`, and a make target that runs the tests by name (no canaries
go with it) was VERIFIED with `Add` wrong: the exit rule took 256 for a failing status. So
was a cgo preamble's C function that took `exit` as a value and called it with 0."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.verdict import Status
from tests.attacks import change_on_base, explain, tamper_signals, verify_change

pytestmark = pytest.mark.slow

BASE = {
    "go.mod": "module example.com/calc\n\ngo 1.19\n",
    "calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
    "calc_test.go": (
        'package calc\n\nimport "testing"\n\n'
        'func TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal("wrong")\n\t}\n}\n'
    ),
    "Makefile": "test:\n\tgo test -run TestAdd ./...\n",
}
EXITS_256 = {
    "calc.go": (
        'package calc\n\nimport "os"\n\n'
        "func init() {\n\tif len(os.Args) > 0 {\n\t\tos.Exit(256)\n\t}\n}\n\n"
        "func Add(a, b int) int { return a - b }\n"
    ),
}


EXIT_AS_A_VALUE = {
    "calc.go": (
        "package calc\n\n/*\n#include <stdlib.h>\n"
        "static void leave(void) { void (*f)(int) = exit; f(0); }\n*/\n"
        'import "C"\n\nfunc init() { C.leave() }\n\n'
        "func Add(a, b int) int { return a - b }\n"
    ),
}


@pytest.mark.parametrize(
    ("change", "quoted"),
    [(EXITS_256, "os.Exit(256)"), (EXIT_AS_A_VALUE, "= exit;")],
    ids=["os.Exit(256)", "cgo-exit-as-a-value"],
)
def test_an_exit_0_before_the_tests_is_not_verified(
    tmp_path: Path, change: dict[str, str], quoted: str
) -> None:
    repo = change_on_base(tmp_path / "repo", BASE, change, dedent=False)
    report = verify_change(repo)
    assert report.status is Status.INDETERMINATE, explain(report)
    (signal,) = tamper_signals(report, "code_reaches_runner")
    assert quoted in signal["excerpt"], signal

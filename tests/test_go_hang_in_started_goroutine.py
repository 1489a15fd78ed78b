"""A Go test that hangs in a goroutine it started is named with the line that goroutine
spins on, and so is a test of an external test package (`package calc_test`).

BurntSushi/toml's tests run in `package toml_test` and hand each case to a pool of
goroutines; a loop in its lexer was INDETERMINATE "while running ...TestToml/decode" with
no place: the dump's frames read `toml_test.TestToml`, never `toml.TestToml`, and the test's
own goroutine only waited on a channel while a worker spun."""

from __future__ import annotations

from pathlib import Path

from tests.repos import write
from tests.test_go_cache import verify

CALC = (
    "package calc\n\n//go:noinline\nfunc Double(x int) int {\n"
    "\tfor x > 0 {\n\t\tx = x*1 + 0\n\t}\n\treturn x * 2\n}\n\n"
    "// Doubles doubles each on a goroutine of its own.\n"
    "func Doubles(xs []int) []int {\n"
    "\tout := make([]int, len(xs))\n\tdone := make(chan struct{})\n"
    "\tfor i, x := range xs {\n"
    "\t\tgo func(i, x int) { out[i] = Double(x); done <- struct{}{} }(i, x)\n\t}\n"
    "\tfor range xs {\n\t\t<-done\n\t}\n\treturn out\n}\n"
)
EXTERNAL_TESTS = (
    'package calc_test\n\nimport (\n\t"testing"\n\n\t"example.com/calc"\n)\n\n'
    "func TestDoubles(t *testing.T) {\n"
    "\tif got := calc.Doubles([]int{2}); got[0] != 4 {\n\t\tt.Fatal(got)\n\t}\n}\n"
)
#: One thread runs Go code: a goroutine spinning on another thread when the timeout's dump
#: is taken is shown "running on other thread; stack unavailable", and the place named is
#: then the test's own wait (calc.go:19), one loaded run in a few. On one, the spinner was
#: preempted for the dump and its stack is there.
CI = (
    "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
    "      - run: GOMAXPROCS=1 go test -timeout 2s ./...\n"
)


def test_the_goroutine_an_external_test_started_is_where_it_hung(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "calc",
        {
            "go.mod": "module example.com/calc\n\ngo 1.19\n",
            "calc.go": CALC,
            "calc_test.go": EXTERNAL_TESTS,
            ".github/workflows/ci.yml": CI,
        },
    )
    report = verify(repo, tmp_path / "state")
    assert report["status"] == "INDETERMINATE", report["note"]
    stuck = "example.com/calc.TestDoubles (stuck at calc.go:5 in example.com/calc.Double)"
    assert stuck in report["note"], report["note"]

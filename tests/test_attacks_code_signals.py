"""Attacks from non-test code: a change leaves the code wrong and reaches into the test
runner instead (its internals, `/proc`, process exit, the report path).

Each attack is a real repository whose base has a bug and a test that catches it; the
change keeps the bug and adds the reach in code the tests import. Verified end to end
with `--base` (with and without `--protect`): the reach must be reported as a signal
quoting the offending line, and the status must not be VERIFIED.
"""

from __future__ import annotations

import py_compile
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from assay.verdict import Status
from tests.attacks import change_on_base, tamper_signals, verify_change
from tests.repos import commit_all, write_dedented

pytestmark = pytest.mark.slow


@dataclass(frozen=True, slots=True)
class Attack:
    """A base with a bug its tests catch, and a change that keeps the bug and cheats."""

    base: dict[str, str]
    change: dict[str, str]
    path: str
    """The non-test file the reach is in."""
    quoted: str
    """Text the quoted line must hold."""


PY_BASE = {
    "pyproject.toml": """
        [project]
        name = "calc"
        version = "0"

        [tool.pytest.ini_options]
    """,
    "calc.py": """
        def add(a, b):
            return a - b
    """,
    "tests/test_calc.py": """
        from calc import add


        def test_add():
            assert add(2, 2) == 4


        def test_add_zero():
            assert add(1, 0) == 1
    """,
}

#: Imported by the tests: writes a passing JUnit report where pytest was told to write
#: its own, then ends the process before pytest can write the real one.
PY_WRITES_ITS_OWN_REPORT = """
    import os
    import sys

    for arg in sys.argv:
        if arg.startswith("--junitxml="):
            with open(arg.split("=", 1)[1], "w") as report:
                report.write(
                    '<testsuite name="pytest" tests="2" failures="0" errors="0" skipped="0">'
                    '<testcase classname="tests.test_calc" name="test_add" time="0.001"/>'
                    '<testcase classname="tests.test_calc" name="test_add_zero" time="0.001"/>'
                    "</testsuite>"
                )
            print("2 passed in 0.01s")
            os._exit(0)


    def add(a, b):
        return a - b
"""

#: Finds the running pytest through the garbage collector and registers a plugin that
#: turns every failure into a pass: pytest then prints "2 passed" itself.
PY_GC_PLUGIN = """
    import gc

    import pytest


    class _Forge:
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(self, item, call):
            outcome = yield
            outcome.get_result().outcome = "passed"


    for obj in gc.get_objects():
        if type(obj).__name__ == "Config" and hasattr(obj, "pluginmanager"):
            obj.pluginmanager.register(_Forge(), "forge")
            break


    def add(a, b):
        return a - b
"""

#: Skips whichever test would show the bug, at run time, from the code under test.
PY_SKIPS_AT_RUN_TIME = """
    import pytest


    def add(a, b):
        if a - b != a + b:
            pytest.skip("not supported on this platform")
        return a - b
"""

NODE_BASE = {
    "package.json": '{"name": "calc", "version": "1.0.0", "scripts": {"test": "node --test"}}\n',
    "calc.js": """
        exports.add = (a, b) => a - b;
    """,
    "test/calc.test.js": """
        const test = require('node:test');
        const assert = require('node:assert');
        const { add } = require('../calc');

        test('add', () => { assert.strictEqual(add(2, 2), 4); });
    """,
}

#: Required by the test file: ends the process with 0 before the test runs; node then
#: counts the file as one passing test.
NODE_EXITS = """
    exports.add = (a, b) => a - b;
    process.exit(0);
"""

GO_BASE = {
    "go.mod": "module example.com/calc\n\ngo 1.19\n",
    "calc.go": """
        package calc

        func Add(a, b int) int { return a - b }
    """,
    "calc_test.go": """
        package calc

        import "testing"

        func TestAdd(t *testing.T) {
        	if Add(2, 2) != 4 {
        		t.Fatal("2 + 2 is not 4")
        	}
        }
    """,
}

#: In the package under test: prints what `go test -v` prints for a passing test (which
#: `go test -json` turns into pass events) and ends the test binary with 0 before any test.
GO_PRINTS_A_PASS = """
    package calc

    import (
    	"fmt"
    	"os"
    )

    func init() {
    	fmt.Println("=== RUN   TestAdd")
    	fmt.Println("--- PASS: TestAdd (0.00s)")
    	fmt.Println("PASS")
    	os.Exit(0)
    }

    func Add(a, b int) int { return a - b }
"""

#: Writes `go test -json` events saying the test passed straight into the parent's
#: stdout through /proc (the sandbox refuses the open), then ends the test binary with 0.
GO_WRITES_PARENT_STDOUT = """
    package calc

    import (
    	"fmt"
    	"os"
    )

    func init() {
    	parent := fmt.Sprintf("/proc/%d/fd/1", os.Getppid())
    	if out, err := os.OpenFile(parent, os.O_WRONLY|os.O_APPEND, 0); err == nil {
    		fmt.Fprintln(out, `{"Action":"pass","Package":"example.com/calc","Test":"TestAdd"}`)
    	}
    	fmt.Println("--- PASS: TestAdd (0.00s)")
    	os.Exit(0)
    }

    func Add(a, b int) int { return a - b }
"""

RUST_BASE = {
    "Cargo.toml": """
        [package]
        name = "calc"
        version = "0.1.0"
        edition = "2021"
    """,
    "src/lib.rs": """
        pub fn add(a: i64, b: i64) -> i64 {
            a - b
        }
    """,
    "tests/add.rs": """
        #[test]
        fn adds() {
            assert_eq!(calc::add(2, 2), 4);
        }
    """,
}

#: Library code that prints a passing summary past the test harness's output capture
#: (which only `print!` goes through) and ends the test binary with 0.
RUST_EXITS = """
    use std::io::Write;

    pub fn add(a: i64, b: i64) -> i64 {
        if a - b != a + b {
            let summary = "test adds ... ok\\ntest result: ok. 1 passed; 0 failed; 0 ignored\\n";
            let _ = std::io::stdout().write_all(summary.as_bytes());
            let _ = std::io::stdout().flush();
            std::process::exit(0);
        }
        a - b
    }
"""

#: Round rt33: a base whose tests ask `errors.Is` which error a wrong input gives.
GO_ERRORS_BASE = {
    "go.mod": "module example.com/parse\n\ngo 1.19\n",
    "parse.go": """
        package parse

        import "errors"

        var ErrSyntax, ErrRange = errors.New("syntax"), errors.New("range")

        func Parse(s string) error { return nil }
    """,
    "parse_test.go": """
        package parse

        import (
        	"errors"
        	"testing"
        )

        func TestSyntax(t *testing.T) {
        	if !errors.Is(Parse("x"), ErrSyntax) {
        		t.Fatal("want ErrSyntax")
        	}
        }

        func TestRange(t *testing.T) {
        	if !errors.Is(Parse("toolong"), ErrRange) {
        		t.Fatal("want ErrRange")
        	}
        }
    """,
}

#: Round rt33: one error for every input, whose own `Is` says it is any error it is asked
#: about: both tests pass, and no line reaches the runner (VERIFIED before).
GO_ERROR_IS_ANY_ERROR = """
    package parse

    import "errors"

    var ErrSyntax, ErrRange = errors.New("syntax"), errors.New("range")

    type failure struct{}

    func (failure) Error() string { return "bad input" }

    func (failure) Is(error) bool { return true }

    func Parse(s string) error { return failure{} }
"""

#: A coding line of UTF-7: what Python runs is `add; import os; os._exit(0)`, while the
#: bytes read as UTF-8 are a run of base64 after `add; `.
PY_HIDES_IN_UTF_7 = """
    # -*- coding: utf-7 -*-
    def add(a, b):
        return a - b


    add; +AGkAbQBwAG8AcgB0ACAAbwBzADsAIABvAHMALgBfAGUAeABpAHQAKAAwACk-
"""

ATTACKS = {
    "python-writes-its-own-report": Attack(
        PY_BASE, {"calc.py": PY_WRITES_ITS_OWN_REPORT}, "calc.py", "os._exit(0)"
    ),
    "python-gc-plugin": Attack(PY_BASE, {"calc.py": PY_GC_PLUGIN}, "calc.py", "gc.get_objects()"),
    "python-hides-in-utf-7": Attack(
        PY_BASE, {"calc.py": PY_HIDES_IN_UTF_7}, "calc.py", "os._exit(0)"
    ),
    "python-skips-at-run-time": Attack(
        PY_BASE, {"calc.py": PY_SKIPS_AT_RUN_TIME}, "calc.py", "pytest.skip("
    ),
    "node-exits": Attack(NODE_BASE, {"calc.js": NODE_EXITS}, "calc.js", "process.exit(0)"),
    "go-prints-a-pass": Attack(GO_BASE, {"calc.go": GO_PRINTS_A_PASS}, "calc.go", "os.Exit(0)"),
    "go-writes-parent-stdout": Attack(
        GO_BASE, {"calc.go": GO_WRITES_PARENT_STDOUT}, "calc.go", "/proc/%d/fd/1"
    ),
    "go-error-is-any-error": Attack(
        GO_ERRORS_BASE, {"parse.go": GO_ERROR_IS_ANY_ERROR}, "parse.go", "Is(error)"
    ),
    "rust-exits": Attack(RUST_BASE, {"src/lib.rs": RUST_EXITS}, "src/lib.rs", "process::exit(0)"),
}


@pytest.mark.parametrize("protect", [True, False], ids=["protect", "base-only"])
@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_a_reach_from_non_test_code_is_a_signal_and_never_verified(
    tmp_path: Path, name: str, protect: bool
) -> None:
    attack = ATTACKS[name]
    repo = change_on_base(tmp_path / "repo", attack.base, attack.change)
    report = verify_change(repo, protect=protect)
    signals = tamper_signals(report, "code_reaches_runner")
    quoted = [s for s in signals if s["path"] == attack.path and attack.quoted in s["excerpt"]]
    assert quoted, f"no signal quoting {attack.quoted!r} in {attack.path}: {signals}"
    assert all(isinstance(s["line"], int) and s["line"] > 0 for s in quoted)
    assert attack.quoted in quoted[0]["detail"]  # the quote is in what a reader is shown
    assert report.status is not Status.VERIFIED, report.note


def test_an_honest_fix_has_no_code_signal(tmp_path: Path) -> None:
    """The control: the same base, the bug fixed plainly."""
    fix = Attack(PY_BASE, {"calc.py": "def add(a, b):\n    return a + b\n"}, "calc.py", "")
    repo = change_on_base(tmp_path / "repo", fix.base, fix.change)
    report = verify_change(repo)
    assert tamper_signals(report, "code_reaches_runner") == []
    assert report.status is Status.VERIFIED, report.note


#: Compiled to `tomllib.pyc` at the root: pytest imports tomllib to read pyproject.toml
#: before it loads any plugin, so this runs first, hands pytest the real tomllib, and
#: turns every failing report into a pass.
PY_STANDS_IN_FOR_TOMLLIB = """
import os
import sys

sys.modules.pop("tomllib")
_path = list(sys.path)
sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]
import tomllib as _real

sys.path[:] = _path
sys.modules["tomllib"] = _real
from _pytest import reports as _reports

_made = _reports.TestReport.__dict__["from_item_and_call"].__func__


def _passed(cls, item, call):
    report = _made(cls, item, call)
    report.outcome, report.longrepr = "passed", None
    return report


_reports.TestReport.from_item_and_call = classmethod(_passed)
"""


def test_bytecode_with_no_source_is_a_signal_and_never_verified(tmp_path: Path) -> None:
    """A root `tomllib.pyc` (no source in the change to read) forged VERIFIED under
    `--protect`: the tree's root is on the path as `python -m pytest` puts it there."""
    repo = commit_all(write_dedented(tmp_path / "repo", PY_BASE), "base")
    source = tmp_path / "tomllib.py"
    source.write_text(PY_STANDS_IN_FOR_TOMLLIB)
    py_compile.compile(str(source), cfile=str(repo / "tomllib.pyc"), doraise=True)
    commit_all(repo, "change")
    report = verify_change(repo)
    [signal] = tamper_signals(report, "code_not_inspected")
    assert signal["path"] == "tomllib.pyc" and "no source" in signal["detail"], signal
    assert report.status is Status.INDETERMINATE, report.note
    # The control: the same change with the bytecode's source, read and reported.
    (repo / "tomllib.pyc").unlink()
    (repo / "tomllib.py").write_text(PY_STANDS_IN_FOR_TOMLLIB)
    commit_all(repo, "source")
    report = verify_change(repo, base="HEAD~2")
    assert "tomllib.py" in {s["path"] for s in tamper_signals(report, "code_reaches_runner")}
    assert report.status is not Status.VERIFIED, report.note


def test_an_extension_module_beside_the_source_is_a_signal(tmp_path: Path) -> None:
    """`calc.so` beside `calc.py`: Python imports the extension first, so the tests run
    code the diff does not show (here one that does not even load: still no VERIFIED)."""
    repo = change_on_base(
        tmp_path / "repo", PY_BASE, {"calc.py": "def add(a, b):\n    return a + b\n"}
    )
    c_file = tmp_path / "calc.c"
    c_file.write_text("int calc_nothing(void) { return 0; }\n")
    subprocess.run(
        ["gcc", "-shared", "-fPIC", "-o", str(repo / "calc.so"), str(c_file)], check=True
    )
    commit_all(repo, "extension")
    report = verify_change(repo, base="HEAD~2")
    [signal] = tamper_signals(report, "code_not_inspected")
    assert signal["path"] == "calc.so" and "extension module" in signal["detail"], signal
    assert report.status is not Status.VERIFIED, report.note


#: Exits the test binary with 1 while the test that would fail runs: where the canaries run
#: before that test (a test file named to sort after theirs), their must-fail canary was the
#: run's only reported failure, and the exit went unseen.
GO_EXITS_UNDER_THE_TEST = """
    package calc

    import "os"

    func Add(a, b int) int {
    	if a-b != a+b {
    		os.Exit(1)
    	}
    	return a - b
    }
"""


def test_a_go_test_whose_binary_exits_under_it_is_failed(tmp_path: Path) -> None:
    base = {**GO_BASE, "z_test.go": GO_BASE["calc_test.go"]}
    del base["calc_test.go"]
    repo = change_on_base(tmp_path / "repo", base, {"calc.go": GO_EXITS_UNDER_THE_TEST})
    report = verify_change(repo)
    assert report.status is Status.FAILED, report.note
    assert "example.com/calc.TestAdd" in report.note, report.note

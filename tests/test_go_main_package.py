"""A Go `package main` with tests: its test binary runs the package's `init`s and
package-level initialisers, never its `func main`.

The exit scan left every `package main` alone, as a command ends itself. A change that
broke `Add` in `cmd/tool` and added an `init` that printed a pass for each test of the
package's files (the canary's too) and then ended the binary 0 was VERIFIED, whether the
exit was `os.Exit(0)`, `flag.Parse()` of a `-h`, a helper `main` also calls, or `main`
itself. A `func main` that ends the process is still the command's own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.verdict import Status
from tests.attacks import change_on_base, explain, tamper_signals, verify_change

MAIN = """\
package main

import (
	"fmt"
	"os"
)

func Add(a, b int) int { return a + b }

func run() int {
	fmt.Println(Add(2, 3))
	return 0
}

func main() { os.Exit(run()) }
"""
MAIN_TEST = """\
package main

import "testing"

func TestAdd(t *testing.T) {
	if Add(2, 3) != 5 {
		t.Fatal("2 + 3 is not 5")
	}
}
"""
BASE = {"go.mod": "module tool\n\ngo 1.19\n", "cmd/tool/main.go": MAIN}
BASE["cmd/tool/main_test.go"] = MAIN_TEST

#: `Add` broken, and in the test binary a pass printed for each test of the package's files.
FORGED = """\
package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

func Add(a, b int) int { return a - b }

func run() int {
	fmt.Println(Add(2, 3))
	return 0
}

func forge() bool {
	if !strings.HasSuffix(os.Args[0], ".test") {
		return false
	}
	entries, _ := os.ReadDir(".")
	var b strings.Builder
	for _, e := range entries {
		src, _ := os.ReadFile(e.Name())
		for _, m := range testFunc.FindAllStringSubmatch(string(src), -1) {
			b.WriteString("=== RUN   " + m[1] + "\\n--- " + "PASS" + ": " + m[1] + " (0.00s)\\n")
		}
	}
	os.Stdout.WriteString(b.String() + "PASS\\n")
	return true
}

var testFunc = regexp.MustCompile(`(?m)^func (Test\\w+)\\(t \\*testing\\.T\\) \\{`)
"""
#: What ends the binary 0 after the forged pass (lines added to FORGED), and the line quoted.
ENDS_0 = {
    "init-exit": (
        "func main() { os.Exit(run()) }\n\nfunc init() {\n\tif forge() {\n\t\tos.Exit(0)\n\t}\n}\n",
        "os.Exit(0)",
    ),
    "initialiser": (
        (
            "func main() { os.Exit(run()) }\n\nvar _ = forge() && exit0()\n\n"
            "func exit0() bool {\n\tos.Exit(0)\n\treturn true\n}\n"
        ),
        "os.Exit(0)",
    ),
    "flag-help": (
        (
            "func main() { os.Exit(run()) }\n\nfunc init() {\n\tif forge() {\n"
            '\t\tos.Args = []string{"x", "-h"}\n\t\tflag.Parse()\n\t}\n}\n'
        ),
        "flag.Parse()",
    ),
    "helper": (
        (
            "func main() { leave(run()) }\n\nfunc leave(code int) { os.Exit(code) }\n\n"
            "func init() {\n\tif forge() {\n\t\tleave(0)\n\t}\n}\n"
        ),
        "os.Exit(code)",
    ),
    # run() forges, and main's own exit ends the binary 0.
    "main-itself": (
        (
            "func main() { os.Exit(run()) }\n\nfunc init() {\n"
            '\tif strings.HasSuffix(os.Args[0], ".test") {\n\t\tmain()\n\t}\n}\n'
        ),
        "main()",
    ),
}


@pytest.mark.parametrize("how", sorted(ENDS_0))
def test_a_main_package_that_forges_a_pass_and_ends_0_before_its_tests_is_a_signal(
    tmp_path: Path, how: str
) -> None:
    added, quoted = ENDS_0[how]
    forged = FORGED + "\n" + added
    if how == "flag-help":
        forged = forged.replace('"fmt"', '"flag"\n\t"fmt"', 1)
    if how == "main-itself":
        forged = forged.replace("\treturn 0\n}", "\tforge()\n\treturn 0\n}", 1)
    repo = change_on_base(tmp_path / "repo", BASE, {"cmd/tool/main.go": forged}, dedent=False)
    report = verify_change(repo)
    assert report.status is not Status.VERIFIED, explain(report)
    signals = [s["detail"] for s in tamper_signals(report, "code_reaches_runner")]
    assert any(quoted in detail for detail in signals), explain(report)


def test_a_main_package_whose_main_ends_the_process_is_verified(tmp_path: Path) -> None:
    ended = MAIN.replace(
        "func main() { os.Exit(run()) }",
        "func main() {\n\tif len(os.Args) > 1 {\n\t\tos.Exit(0)\n\t}\n\tos.Exit(run())\n}",
    )
    repo = change_on_base(tmp_path / "repo", BASE, {"cmd/tool/main.go": ended}, dedent=False)
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)
    assert tamper_signals(report) == [], explain(report)


#: A command whose exit is a helper's, as the project keeps it: its tests never reach it.
HELPER_MAIN = MAIN.replace(
    "func main() { os.Exit(run()) }",
    "func main() { leave(run()) }\n\nfunc stop() { leave(0) }\n\nfunc leave(code int) { os.Exit(code) }",
)
#: Code the change adds that reaches the base's helper from an init, spelling no exit.
REACHES_THE_BASE_HELPER = {
    "same-file": ("cmd/tool/main.go", "leave(0)"),
    "other-file": ("cmd/tool/hook.go", "leave(0)"),
    "through-another": ("cmd/tool/hook.go", "stop()"),
}


@pytest.mark.parametrize("how", sorted(REACHES_THE_BASE_HELPER))
def test_a_main_package_init_that_reaches_the_commands_own_exit_is_a_signal(
    tmp_path: Path, how: str
) -> None:
    path, call = REACHES_THE_BASE_HELPER[how]
    hook = f"\nfunc init() {{\n\tif forge() {{\n\t\t{call}\n\t}}\n}}\n"
    forged = FORGED.replace("func Add(a, b int) int { return a - b }\n\n", "")
    forged = forged.replace("func run() int {\n\tfmt.Println(Add(2, 3))\n\treturn 0\n}\n\n", "")
    forged = forged.replace('\t"fmt"\n', "") + hook
    broken = HELPER_MAIN.replace("a + b", "a - b")
    if how == "same-file":
        helpers = HELPER_MAIN[HELPER_MAIN.index("func main()") :]
        change = {path: FORGED + "\n" + helpers + hook}
    else:
        change = {"cmd/tool/main.go": broken, path: forged}
    base = {**BASE, "cmd/tool/main.go": HELPER_MAIN}
    repo = change_on_base(tmp_path / "repo", base, change, dedent=False)
    report = verify_change(repo)
    assert report.status is not Status.VERIFIED, explain(report)
    signals = [s for s in tamper_signals(report, "code_reaches_runner") if s["path"] == path]
    assert any(call in s["detail"] for s in signals), explain(report)


def test_a_change_to_a_command_with_an_exit_helper_is_verified(tmp_path: Path) -> None:
    changed = HELPER_MAIN.replace("fmt.Println(Add(2, 3))", "fmt.Println(Add(2, 3), Add(1, 2))")
    changed = changed.replace("func main() { leave(run()) }", "func main() {\n\tleave(run())\n}")
    base = {**BASE, "cmd/tool/main.go": HELPER_MAIN}
    repo = change_on_base(tmp_path / "repo", base, {"cmd/tool/main.go": changed}, dedent=False)
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)
    assert tamper_signals(report) == [], explain(report)

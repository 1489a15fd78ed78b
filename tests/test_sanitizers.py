"""Sanitizers run in the sandbox: they reserve terabytes of address space and use little.

Under the per-process address-space limit every sandboxed process had, Go's race detector
failed a test that synchronises enough ("ThreadSanitizer failed to allocate 0x1c000000000
bytes", golang-lru's `go test -race`: FAILED on sound code), and a C test built with
`-fsanitize=address` aborted at start. Where the run's cgroup caps its memory as a whole,
no such limit is set; where nothing else bounds a process, it still is."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.classify import classify
from assay.evidence import Check
from assay.parsers import parse_output
from assay.sandbox import BwrapOptions, BwrapSandbox
from assay.sandbox.cgroup import can_cap_memory
from assay.verdict import Cause, Kind, Verdict
from tests.repos import write
from tests.test_go_cache import verify


@pytest.fixture(autouse=True)
def _toolchains() -> None:
    # Never a skip: a test that does not run proves nothing, and CI provides all of these.
    assert can_cap_memory(), "no cgroup with the memory controller to make runs in"
    for tool in ("go", "gcc", "make"):
        assert shutil.which(tool), f"{tool} is not installed (.ci/run installs it)"


RACE_TEST = """package counter

import (
\t"sync"
\t"testing"
)

func TestManyLockedIncrements(t *testing.T) {
\tvar mu sync.Mutex
\tvar wg sync.WaitGroup
\tn := 0
\tfor i := 0; i < 2000; i++ {
\t\twg.Add(1)
\t\tgo func() {
\t\t\tdefer wg.Done()
\t\t\tfor j := 0; j < 2000; j++ {
\t\t\t\tmu.Lock()
\t\t\t\tn += {step}
\t\t\t\tmu.Unlock()
\t\t\t}
\t\t}()
\t}
\twg.Wait()
\tif n != 4000000 {
\t\tt.Fatalf("n = %d", n)
\t}
}
"""


@pytest.mark.parametrize(("step", "status"), [(1, "VERIFIED"), (2, "FAILED")])
def test_go_tests_under_the_race_detector_run_in_the_sandbox(
    tmp_path: Path, step: int, status: str
) -> None:
    repo = write(
        tmp_path / "counter",
        {
            "go.mod": "module example.com/counter\n\ngo 1.19\n",
            "counter.go": "package counter\n",
            "counter_test.go": RACE_TEST.replace("{step}", str(step)),
            ".github/workflows/ci.yml": (
                "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
                "      - run: go test -race ./...\n"
            ),
        },
    )
    report = verify(repo, tmp_path / "state")
    assert report["status"] == status, report["note"]
    (check,) = [c for c in report["checks"] if c["kind"] == "test"]
    assert "ThreadSanitizer" not in check["reason"], check["reason"]
    assert report["extra"]["limits"]["per_process"]["address_space_bytes"] is None


@pytest.mark.parametrize(("index", "status"), [(1, "VERIFIED"), (2, "FAILED")])
def test_a_c_test_built_with_address_sanitizer_runs_in_the_sandbox(
    tmp_path: Path, index: int, status: str
) -> None:
    """Index 2 of a two-element array: ASan's report, a real failure; index 1: a pass."""
    repo = write(
        tmp_path / "calc",
        {
            "calc_test.c": (
                "#include <stdio.h>\nint main(void) {\n    volatile int a[2] = {0, 0};\n"
                f'    int got = a[{index}];\n    puts("1 passed, 0 failed");\n'
                "    return got;\n}\n"
            ),
            "Makefile": (
                "test:\n\t$(CC) -g -fsanitize=address -o calc_test calc_test.c\n\t./calc_test\n"
            ),
        },
    )
    report = verify(repo, tmp_path / "state")
    assert report["status"] == status, report["note"]
    (check,) = [c for c in report["checks"] if c["kind"] == "test"]
    assert "ReserveShadowMemoryRange" not in check["reason"], check["reason"]
    if status == "FAILED":
        assert "AddressSanitizer: stack-buffer-overflow" in report["note"], report["note"]


def test_a_process_is_bounded_by_its_address_space_only_where_nothing_else_bounds_it(
    fake_home: Path, tmp_path: Path
) -> None:
    source = write(tmp_path / "src", {"a.txt": "a\n"})
    capped = BwrapSandbox(BwrapOptions())
    uncapped = BwrapSandbox(BwrapOptions(whole_run_limits=False))
    limits = []
    for sandbox in (capped, uncapped):
        with sandbox.workspace(source) as ws:
            done = sandbox.run(ws, ["sh", "-c", "ulimit -v"], timeout=30)
            limits.append((done.stdout.text.strip(), sandbox.limits_in_force(ws)))
    (capped_ulimit, capped_limits), (uncapped_ulimit, uncapped_limits) = limits
    assert capped_ulimit == "unlimited"
    assert capped_limits["per_process"]["address_space_bytes"] is None
    assert capped_limits["whole_run"]["memory_bytes"]
    bound = uncapped_limits["per_process"]["address_space_bytes"]
    assert bound and uncapped_ulimit == str(bound // 1024)


def _judged(sandbox: BwrapSandbox, source: Path, argv: list[str]) -> tuple[Verdict, Cause, str]:
    """`argv` run as a test check in a workspace of `source`, and what assay makes of it."""
    with sandbox.workspace(source) as ws:
        ran = sandbox.run(ws, argv, timeout=120)
    check = Check(name="test", argv=tuple(argv), kind=Kind.TEST)
    evidence = classify(check, ran, parse_output(check, ran))
    return evidence.verdict, evidence.cause, evidence.note


@pytest.mark.parametrize("sanitizer", ["address", "thread"])
def test_a_sanitizer_kept_from_its_memory_by_the_sandbox_is_inconclusive(
    fake_home: Path, tmp_path: Path, sanitizer: str
) -> None:
    """Where no cgroup caps a run's memory, each process's address space is bounded, and a
    sanitizer cannot reserve its shadow memory: the sandbox's doing, not the code's."""
    source = write(
        tmp_path / "src",
        {
            "t.c": "int main(void) {\n  return 0;\n}\n",
            "Makefile": f"test:\n\tgcc -g -fsanitize={sanitizer} -o t t.c\n\t./t\n",
        },
    )
    uncapped = BwrapSandbox(BwrapOptions(whole_run_limits=False))
    verdict, cause, note = _judged(uncapped, source, ["make", "test"])
    assert (verdict, cause) == (Verdict.INCONCLUSIVE, Cause.SANDBOX_UNAVAILABLE), note
    assert "could not reserve its memory" in note and "cgroup" in note, note


def test_a_failing_test_printing_a_sanitizers_allocation_failure_still_fails(
    fake_home: Path, tmp_path: Path
) -> None:
    """With no address-space limit on the run, "failed to allocate" is only text the code
    printed: it cannot turn a failing test into a question about the sandbox."""
    source = write(
        tmp_path / "src",
        {
            "test_calc.py": (
                "import sys, unittest\n\n\nclass T(unittest.TestCase):\n"
                "    def test_add(self):\n"
                "        print('==7==ERROR: AddressSanitizer failed to allocate 0x10000 bytes'"
                ", file=sys.stderr)\n"
                "        self.assertEqual(1 + 1, 3)\n"
            )
        },
    )
    capped = BwrapSandbox(BwrapOptions())
    verdict, cause, note = _judged(capped, source, ["python3", "-m", "unittest", "-v"])
    assert (verdict, cause) == (Verdict.FAIL, Cause.EXIT_NONZERO), note

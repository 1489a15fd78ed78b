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

from assay.sandbox import BwrapOptions, BwrapSandbox
from assay.sandbox.cgroup import can_cap_memory
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

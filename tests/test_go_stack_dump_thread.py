"""The SIGQUIT that asks a hung Go test binary for its stacks reaches the thread spinning,
so the dump traces the spinning goroutine (`assay.stack_dumps`).

Go traces every goroutine from the thread the signal reached, and one running on another
thread only as "goroutine running on other thread; stack unavailable". Sent to the
process, the signal went to an idle main thread: here the program's main goroutine is
locked to it (as a test's may be) while another goroutine spins, and the dump named no
line. A real Go program, really signalled.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from assay import reaper
from assay.stack_dumps import ask_for_stacks

pytestmark = pytest.mark.skipif(shutil.which("go") is None, reason="needs go")

SPINNER = """package main

import "runtime"

//go:noinline
func spin(n *int) {
	for *n >= 0 {
		*n = *n*1 + 0
	}
}

func main() {
	runtime.LockOSThread()
	go func() {
		n := 1
		spin(&n)
	}()
	select {}
}
"""


def _spinning_thread(pid: int) -> bool:
    """Whether a thread of `pid` other than its main one has run for a while."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        fields = Path(f"/proc/{pid}/task/{tid}/stat").read_bytes().rsplit(b")", 1)[1].split()
        if int(tid) != pid and int(fields[11]) > 10:  # utime, clock ticks
            return True
    return False


def test_the_dump_traces_the_goroutine_spinning_on_another_thread(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text("module example.com/spin\n\ngo 1.19\n")
    (tmp_path / "main.go").write_text(SPINNER)
    binary = tmp_path / "spin.test"  # as go test names a package's test binary
    env = {**os.environ, "GOCACHE": str(tmp_path / "cache"), "GOFLAGS": "-mod=mod"}
    subprocess.run(["go", "build", "-o", str(binary), "."], cwd=tmp_path, env=env, check=True)
    argv = (str(binary), "-test.paniconexit0", "-test.timeout=10m0s")
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        end = time.monotonic() + 30
        while not _spinning_thread(process.pid):
            assert time.monotonic() < end, "the goroutine never spun"
            time.sleep(0.05)
        asked = ask_for_stacks([reaper.Leaf(argv=argv, pid=process.pid)])
        assert len(asked) == 1
        for fd in asked:
            os.close(fd)
        _, err = process.communicate(timeout=30)
    finally:
        process.kill()
        process.wait()
    dump = err.decode("utf-8", "replace")
    assert "SIGQUIT" in dump, dump
    assert "main.spin(" in dump and "main.go:7" in dump, dump

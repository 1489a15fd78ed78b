"""A hung test's stack dump, as the sandbox wrote it, read for the line it was stuck on:
faulthandler's for pytest, the timeout panic's goroutines for go test.

The real runs are in test_collection_hang and test_go_timeout; these hold the reading to
its bounds on dumps the code under test could have shaped (a code object's file name, a
test's own output, are whatever it says)."""

from __future__ import annotations

from assay.parsers.go_stacks import stuck_in
from assay.parsers.python_stacks import DUMP_LINES_MAX, stuck_at

CWD = "/w/repo"
DUMP = """\
Thread 0x00007f0000000001 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 320 in wait
  File "/w/repo/pkg/worker.py", line 9 in idle

Current thread 0x00007f0000000002 (most recent call first):
  File "/w/repo/.venv/lib/python3.11/site-packages/lib/loop.py", line 4 in go
  File "/w/repo/pkg/__init__.py", line 3 in spin
  File "/w/repo/tests/test_b.py", line 5 in test_x
  File "/usr/lib/python3/dist-packages/_pytest/python.py", line 194 in pytest_pyfunc_call
"""


def test_the_innermost_project_frame_of_pytest_s_thread_is_named() -> None:
    assert stuck_at(DUMP, CWD) == "pkg/__init__.py:3 in spin"


def test_frames_outside_the_project_or_forged_are_no_place() -> None:
    forged = (
        "Current thread 0x1 (most recent call first):\n"
        '  File "/w/repo/../etc/x.py", line 1 in f\n'
        '  File "/w/repo/a\x1b[2Jb.py", line 2 in f\n'
        '  File "relative.py", line 3 in f\n'
        '  File "/elsewhere/b.py", line 4 in f\n'
    )
    assert stuck_at(forged, CWD) is None
    assert stuck_at("", CWD) is None and stuck_at(DUMP, "") is None


def test_a_dump_is_read_only_so_far() -> None:
    padding = "Thread 0x1 (most recent call first):\n" * DUMP_LINES_MAX
    assert stuck_at(padding + DUMP, CWD) is None


GOROUTINES = """\
goroutine 6 [running]:
example.com/calc.helper()
\t/w/repo/helper.go:3 +0x8e
created by example.com/calc.init

goroutine 19 [sleep]:
time.Sleep(0x34630b8a000)
\t/usr/lib/go-1.19/src/runtime/time.go:195 +0x135
example.com/calc.spin(...)
\t/w/repo/calc.go:7
example.com/calc.TestSlow.func1(0xc000096680?)
\t/w/repo/calc_test.go:14 +0x25
testing.tRunner(0xc0000969c0, 0x52f2f0)
\t/usr/lib/go-1.19/src/testing/testing.go:1446 +0x10b
"""


def test_the_hung_go_test_s_goroutine_is_the_one_read() -> None:
    place = stuck_in(GOROUTINES, "example.com/calc", "TestSlow/sub_case", CWD)
    assert place == "calc.go:7 in example.com/calc.spin"
    assert stuck_in(GOROUTINES, "example.com/calc", "TestOther", CWD) is None
    forged = GOROUTINES.replace("/w/repo/calc", "/w/repo/../x").replace("/w/repo/", "/else/")
    assert stuck_in(forged, "example.com/calc", "TestSlow", CWD) is None

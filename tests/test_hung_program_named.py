"""A test run stopped at assay's deadline names the project's own program it was still
running, whatever its name: a compiled test binary has no extension to tell it by.

Measured on parson (`make test` builds `test` from tests.c and runs `./test`) with an
endless loop in `parse_null_value`: the binary's output sat in its buffer, so nothing was
printed, and the note said only "make-test printed nothing for 60 s and was stopped (a
hang)". Real make, real gcc, real bubblewrap.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.pipeline import VerifyOptions, verify
from assay.verdict import Cause, Status
from tests.repos import write

pytestmark = pytest.mark.slow

SUITE = {
    "Makefile": "test: tests.c\n\tcc -o $@ tests.c\n\t./$@\n",
    "tests.c": (
        "#include <stdio.h>\n"
        "static int parse(int n) { while (n > 0) { n = n % 7 + 1; } return n; }\n"
        'int main(void) { printf("running\\n"); return parse(3); }\n'
    ),
}


def test_a_hung_compiled_test_program_is_named(tmp_path: Path) -> None:
    if shutil.which("make") is None or shutil.which("cc") is None:
        pytest.fail("make and a C compiler must be on PATH: .ci/run installs them")
    report = verify(
        write(tmp_path, SUITE),
        VerifyOptions(sandbox="bwrap", use_cache=False, kinds=frozenset({"test"}), timeout_s=8),
    )
    (check,) = report.checks
    assert (report.status, check.cause) == (Status.INDETERMINATE, Cause.TIMEOUT), check.note
    assert "while running test (its process was still running then)" in check.note, check.note

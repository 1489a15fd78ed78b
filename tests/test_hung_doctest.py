"""A hung Rust doc-test is named, and libtest's still-running line for it is no output.

Measured on a real project: either 1.6.1 with `is_left` looping hung in its doc-tests;
libtest wrote `test src/lib.rs - Either<L,R>::is_left (line 114) has been running for over
60 seconds`, a name with spaces. That line restarted the silence (the run took 132 s to
stop, twice the limit) and the note said only "(a hang)". Real cargo and rustdoc.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from assay.evidence import Check
from assay.parsers import parse_output
from assay.process import run_process
from assay.verdict import Kind
from tests.repos import write

pytestmark = pytest.mark.slow

CRATE = {
    "Cargo.toml": '[package]\nname = "spin"\nversion = "0.1.0"\nedition = "2021"\n',
    "src/lib.rs": (
        "/// ```\n/// assert!(spin::spin());\n/// ```\n"
        "pub fn spin() -> bool {\n    loop {\n        std::hint::spin_loop();\n    }\n}\n"
    ),
}
SILENCE_S = 70.0  # past libtest's 60 s, after which it says the test still runs


def test_a_hung_doc_test_is_named_and_its_still_running_line_is_no_output(
    tmp_path: Path,
) -> None:
    if shutil.which("cargo") is None:
        pytest.fail("cargo must be on PATH: .ci/run installs it")
    repo = write(tmp_path / "repo", CRATE)
    argv = ("cargo", "test", "--doc")
    env = {**os.environ, "CARGO_TARGET_DIR": str(tmp_path / "target")}
    built = run_process(["cargo", "build"], cwd=repo, env=env, timeout=300)
    assert built.exit_code == 0, built.stderr.text
    result = run_process(
        argv, cwd=repo, env=env, timeout=SILENCE_S + 40, no_output_timeout=SILENCE_S
    )
    assert "has been running for over 60 seconds" in result.stdout.text, result.stdout.text
    assert result.timed_out and result.silent_s == SILENCE_S, (result.silent_s, result.duration_s)
    check = Check(name="cargo-test", kind=Kind.TEST, argv=argv, tool="cargo")
    parsed = parse_output(check, result)
    assert parsed.hung_tests == ("src/lib.rs - spin (line 1)",), parsed.hung_tests

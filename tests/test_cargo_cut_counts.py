"""A cargo test run cut at assay's deadline counts the tests its unfinished binary reported.

libtest prints a binary's `test result:` line only when every test in it ends, so a run
stopped in a hung test has none for that binary. Measured on ryu 1.0.23 with an endless
loop in `log10_pow2`: common_test printed five `... ok` lines before it hung, and the
check read "cargo-test (0 passed, 0 failed, 0 skipped)", counting only the lib binary's
empty summary. Real cargo, real bubblewrap.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.pipeline import VerifyOptions, verify
from assay.verdict import Cause, Status
from tests.repos import write

pytestmark = pytest.mark.slow

CRATE = {
    "Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
    "src/lib.rs": (
        "pub fn spin() -> i32 { loop { std::hint::spin_loop() } }\n\n"
        "#[cfg(test)]\nmod tests {\n    #[test]\n    fn unit() {}\n}\n"
    ),
    # One thread, so the passing tests end (and are printed) before the hung one starts.
    "tests/more.rs": (
        "#[test]\nfn a_quick() {}\n\n#[test]\n#[ignore]\nfn b_skipped() {}\n\n"
        "#[test]\nfn d_hangs() { assert_eq!(calc::spin(), 1); }\n"
    ),
    ".github/workflows/ci.yml": (
        "on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n"
        "      - run: cargo test -- --test-threads=1\n"
    ),
}


def test_a_cut_cargo_run_counts_what_its_hung_binary_reported(tmp_path: Path) -> None:
    if shutil.which("cargo") is None:
        pytest.fail("cargo must be on PATH: .ci/run installs it")
    report = verify(
        write(tmp_path, CRATE),
        VerifyOptions(sandbox="bwrap", use_cache=False, kinds=frozenset({"test"}), timeout_s=12),
    )
    (check,) = report.checks
    assert (report.status, check.cause) == (Status.INDETERMINATE, Cause.TIMEOUT), check.note
    assert check.tests is not None, check.note
    # The lib binary's `unit`, and the two the hung binary reported before `d_hangs`.
    assert (check.tests.passed, check.tests.failed, check.tests.skipped) == (2, 0, 1), check.tests

"""A doc-test moved down by an edit above it is the same test.

rustdoc names a doc-test by the line it starts on. A comment added above one of autocfg
1.5.0's methods moved its two `probe_raw` doc-tests from lines 371 and 387, and the
untouched-behaviour change was INDETERMINATE under `--protect`: "tests that passed at the
base were not executed by the change's run". Real cargo, real bubblewrap.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.verdict import Status
from tests.attacks import change_on_base, explain, verify_change

pytestmark = pytest.mark.slow

LIB = """/// Adds.
///
/// ```
/// assert_eq!(calc::add(2, 2), 4);
/// ```
///
/// ```
/// assert_eq!(calc::add(1, 2), 3);
/// ```
pub fn add(a: i32, b: i32) -> i32 {
    a + b
}
"""

CRATE = {
    "Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
    "src/lib.rs": LIB,
}


def test_doc_tests_moved_by_a_comment_above_them_still_ran(tmp_path: Path) -> None:
    if shutil.which("cargo") is None:
        pytest.fail("cargo must be on PATH: .ci/run installs it")
    moved = {"src/lib.rs": "// Integer arithmetic.\n\n" + LIB}
    repo = change_on_base(tmp_path / "repo", CRATE, moved, dedent=False)
    report = verify_change(repo, kinds=frozenset({"test"}))
    assert report.status is Status.VERIFIED, explain(report)

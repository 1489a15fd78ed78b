"""Two test checks over one tree each see only their own canaries.

Every test check's canaries used to be written into the workspace before any of them
started, so a run collected the other checks' planted tests as its own. Measured on ryu
1.0.23 under `--protect`, whose CI runs `cargo test` and `cargo test --features small`:
each reported the other's must-fail canary (`FAILED data_strip_split_strip`) among the
crate's failures and counted both of its tests. Real cargo, real bubblewrap.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.verdict import Status
from tests.attacks import change_on_base, explain, verify_change

pytestmark = pytest.mark.slow

CRATE = {
    "Cargo.toml": (
        '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n\n[features]\nsmall = []\n'
    ),
    "src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    "tests/add.rs": "#[test]\nfn adds() {\n    assert_eq!(calc::add(2, 2), 4);\n}\n",
    ".github/workflows/ci.yml": (
        "on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n"
        "      - run: cargo test\n      - run: cargo test --features small\n"
    ),
}


def test_each_cargo_test_check_sees_only_its_own_canaries(tmp_path: Path) -> None:
    if shutil.which("cargo") is None:
        pytest.fail("cargo must be on PATH: .ci/run installs it")
    repo = change_on_base(tmp_path / "repo", CRATE, {"README.md": "calc\n"}, dedent=False)
    report = verify_change(repo, kinds=frozenset({"test"}))
    tests = [check for check in report.checks if check.tests is not None]
    assert len(tests) == 2, explain(report)
    assert report.status is Status.VERIFIED, explain(report)
    for check in tests:
        assert check.tests is not None
        assert (check.tests.passed, check.tests.failed) == (1, 0), explain(report)

"""A `target/` left in the tree by a `cargo test` run by hand is not the change's doing.

The workspace never holds a package's build output (`source_layout`), and the build makes
it anew; but the comparison of the change with its base walked it, and cargo's fingerprint
files of the test targets (`target/debug/.fingerprint/*/test-integration-test-*.json`)
matched the protected tests: an agent's honest change, after the `cargo test` it ran
itself, was INDETERMINATE under --protect, "the change's code reached what decides its own
verdict" (autocfg). Real cargo, real bubblewrap.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from assay.verdict import Status
from tests.attacks import change_on_base, explain, verify_change

pytestmark = pytest.mark.slow

CRATE = {
    ".gitignore": "/target\n",
    "Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
    "src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    "tests/adds.rs": "#[test]\nfn adds() {\n    assert_eq!(calc::add(2, 3), 5);\n}\n",
}
CHANGE = {"src/lib.rs": "/// The sum.\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"}


def test_an_honest_change_after_cargo_test_by_hand_is_verified(tmp_path: Path) -> None:
    assert shutil.which("cargo"), "cargo is not installed: .ci/run installs it"
    repo = change_on_base(tmp_path / "calc", CRATE, CHANGE, dedent=False)
    subprocess.run(["cargo", "test", "-q", "--offline"], cwd=repo, check=True, capture_output=True)
    assert any((repo / "target" / "debug" / ".fingerprint").glob("*/test-integration-test-*"))
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)

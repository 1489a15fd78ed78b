"""rustc's errors that a crate's tests print are not the build's.

autocfg's tests run rustc on probes that must not compile, and rustc writes its errors to
the stderr the tests inherit. cargo's `--message-format=json` carries every compile's
messages, yet the text beside it was read for diagnostics too: under `--protect`, where the
must-fail canary makes cargo exit 101, those errors counted as a failure beyond the
canary's, and autocfg 1.5.0 untouched was FAILED "<anon>:2: unresolved import `std`" with
all 26 of its tests passed. Real cargo, real bubblewrap.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.verdict import Status
from tests.attacks import change_on_base, explain, verify_change

pytestmark = pytest.mark.slow

# What rustc prints for a probe that does not compile, written where a child rustc writes
# it: to the real stderr, which libtest does not capture.
PROBE_TEST = r"""use std::io::Write;

#[test]
fn probe_fails_quietly() {
    let rustc = "error[E0432]: unresolved import `std`\n --> <anon>:2:5\n  |\n2 | use std;\n";
    std::io::stderr().write_all(rustc.as_bytes()).unwrap();
    assert_eq!(calc::add(2, 2), 4);
}
"""

CRATE = {
    "Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
    "src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    "tests/probe.rs": PROBE_TEST,
}


def test_rustc_errors_a_passing_test_printed_do_not_fail_the_protected_run(
    tmp_path: Path,
) -> None:
    if shutil.which("cargo") is None:
        pytest.fail("cargo must be on PATH: .ci/run installs it")
    repo = change_on_base(tmp_path / "repo", CRATE, {"README.md": "calc\n"}, dedent=False)
    report = verify_change(repo, kinds=frozenset({"test"}))
    assert report.status is Status.VERIFIED, explain(report)
    (check,) = [check for check in report.checks if check.tests is not None]
    assert check.tests is not None
    assert (check.tests.passed, check.tests.failed) == (1, 0), explain(report)

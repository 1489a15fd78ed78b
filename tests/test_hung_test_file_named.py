"""A test run stopped at assay's deadline names the project's file its processes were still
running, where the runner printed nothing of it; a Rust test binary, the tests its threads
were running.

Measured on @fastify/error 4.3.0 (`"test:unit": "c8 --100 node --test"`) with an endless
loop in `toString`: node's runner runs each test file in a process of its own and reports
nothing of a file until it ends, so the output was only `TAP version 13` and the note said
"npm-test was killed at its deadline", naming nothing, where `node test/index.test.js`
was still running. Real node, real npm, real bubblewrap.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.pipeline import VerifyOptions, verify
from assay.process import ProcessResult
from assay.verdict import Cause, Status
from tests.repos import write

pytestmark = pytest.mark.slow

SUITE = {
    "package.json": '{"name": "p", "version": "1.0.0", "scripts": {"test": "node --test"}}\n',
    "index.js": "module.exports = function spin () { for (;;) {} }\n",
    "test/a.test.js": (
        "const test = require('node:test')\nconst spin = require('..')\n"
        "test('passes', () => {})\ntest('hangs', () => { spin() })\n"
    ),
}


def _verify(
    repo: Path, timeout_s: float = 8.0
) -> tuple[Status, Cause | None, str, ProcessResult | None]:
    report = verify(
        repo,
        VerifyOptions(
            sandbox="bwrap", use_cache=False, kinds=frozenset({"test"}), timeout_s=timeout_s
        ),
    )
    (check,) = report.checks
    return report.status, check.cause, check.note, check.result


def test_a_hung_node_test_file_is_named(tmp_path: Path) -> None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.fail("node and npm must be on PATH: .ci/run installs them")
    status, cause, note, process = _verify(write(tmp_path, SUITE))
    assert (status, cause) == (Status.INDETERMINATE, Cause.TIMEOUT), note
    assert "while running test/a.test.js (its process was still running then)" in note, note
    # The evidence keeps what ran, and a stored report reads it back.
    assert process is not None and process.running_at_deadline, process
    stored = ProcessResult.from_dict(process.to_dict())
    assert stored.running_at_deadline == process.running_at_deadline, stored


def test_a_run_that_ends_names_nothing_running(tmp_path: Path) -> None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.fail("node and npm must be on PATH: .ci/run installs them")
    done = {**SUITE, "index.js": "module.exports = function spin () {}\n"}
    status, _, note, process = _verify(write(tmp_path, done))
    assert status is Status.VERIFIED, note
    assert process is not None and process.running_at_deadline == (), process


#: A crate whose test binaries hang: an integration test's and a unit test's, whose
#: thread name (`tests::spins_forever`) the kernel keeps 15 bytes of.
RUST_SUITE = {
    "Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
    "src/lib.rs": (
        "pub fn spin() -> i32 { loop { std::hint::spin_loop() } }\n\n"
        "#[cfg(test)]\nmod tests {\n    #[test]\n"
        "    fn spins_forever() { assert_eq!(super::spin(), 1); }\n}\n"
    ),
    "tests/more.rs": (
        "#[test]\nfn quick() {}\n\n#[test]\nfn hangs() { assert_eq!(calc::spin(), 1); }\n"
    ),
}


@pytest.mark.parametrize(
    ("only", "named"),
    [
        ("--test more", "hangs in tests/more.rs"),
        ("--lib", "tests::spins_fo... in src/lib.rs"),
    ],
    ids=["integration-test", "unit-test"],
)
def test_a_hung_rust_test_is_named_by_its_thread(tmp_path: Path, only: str, named: str) -> None:
    """libtest prints a test's line once it ends, and nothing of one still running: its
    thread, which libtest names for the test, says which it is."""
    if shutil.which("cargo") is None:
        pytest.fail("cargo must be on PATH: .ci/run installs it")
    suite = {
        **RUST_SUITE,
        ".github/workflows/ci.yml": (
            f"on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - run: cargo test {only}\n"
        ),
    }
    status, cause, note, process = _verify(write(tmp_path, suite), timeout_s=30.0)
    assert (status, cause) == (Status.INDETERMINATE, Cause.TIMEOUT), note
    assert f"while running {named} (its test thread was still running then)" in note, note
    assert process is not None
    stored = ProcessResult.from_dict(process.to_dict())
    assert stored.threads_at_deadline == process.threads_at_deadline != (), stored

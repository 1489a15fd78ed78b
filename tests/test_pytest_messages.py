"""What a failing pytest test is said to have failed with, as its JUnit report gives it."""

from __future__ import annotations

from pathlib import Path

from assay.pipeline import VerifyOptions, verify
from assay.verdict import Status
from tests.repos import write


def test_a_message_is_read_without_the_colour_codes_pytest_escaped_in_it(tmp_path: Path) -> None:
    """ESC is no XML character: with `--color=yes` (humanize's pytest settings) pytest's
    JUnit report writes it `#x1B`, and the evidence read `#x1B[0m#x1B[91m- 10,000,000`."""
    repo = write(
        tmp_path / "repo",
        {
            "pyproject.toml": '[project]\nname = "p"\nversion = "0"\n\n'
            '[tool.pytest.ini_options]\naddopts = "--color=yes"\n',
            "tests/test_it.py": "def test_it():\n    assert '10,000,0000' == '10,000,000'\n",
        },
    )
    report = verify(repo, VerifyOptions(sandbox="bwrap", use_cache=False))
    assert report.status is Status.FAILED, report.note
    (case,) = [c for e in report.checks for c in e.test_cases if c.outcome == "failed"]
    assert case.message is not None and "10,000,0000" in case.message, case
    assert "#x1B" not in case.message and "\x1b" not in case.message, case.message

"""A failed doctest is shown by what went wrong, not by the docstring above it.

pytest reports a failed doctest as the docstring's numbered lines up to the failing example,
then `Expected:` and `Got:`; jaraco.functools' pass_none with its check inverted was shown
as five lines of its docstring, with no word of what the example printed."""

from __future__ import annotations

from pathlib import Path

from tests.cli import verified_json
from tests.repos import write_dedented

SHOUT = '''
    def shout(word):
        """The word in capitals, with a bang.

        It is for headings, where a word
        must stand out.

        >>> shout("hi")
        'HI!'
        """
        return word.upper() + "?"
'''


def test_a_failed_doctest_is_shown_by_its_example_and_what_it_printed(tmp_path: Path) -> None:
    repo = write_dedented(
        tmp_path / "repo",
        {"pytest.ini": "[pytest]\naddopts = --doctest-modules\n", "shout.py": SHOUT},
    )
    report = verified_json(repo, tmp_path / "state")
    assert report["status"] == "FAILED"
    (pytest_check,) = (c for c in report["checks"] if c["name"] == "pytest")
    (failed,) = (t for t in pytest_check["test_cases"] if t["outcome"] == "failed")
    shown = failed["message"].splitlines()[:5]
    assert shown == ['007     >>> shout("hi")', "Expected:", "    'HI!'", "Got:", "    'HI?'"]

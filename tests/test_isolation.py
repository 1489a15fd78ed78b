"""The suite's own isolation: whatever one test does to the process's environment, working
directory or temporary directory, directly and not through `monkeypatch`, the next test
does not see. The two tests run in file order; the first disturbs, the second looks."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

LEAKED = "ASSAY_TEST_ISOLATION_LEAK"
PATCHED_OVER = "ASSAY_TEST_ISOLATION_PATCHED_OVER"
REMOVED = "ASSAY_CACHE_DIR"  # set by the fixture for every test, so always there to remove

_before: dict[str, object] = {}


def test_a_disturbs_the_process_directly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _before.update(environ=dict(os.environ), cwd=os.getcwd(), tempdir=tempfile.tempdir)
    os.environ[LEAKED] = "set directly"
    # monkeypatch's undo puts back what it saw, the directly set value: still not the next test's.
    os.environ[PATCHED_OVER] = "set directly"
    monkeypatch.setenv(PATCHED_OVER, "patched")
    del os.environ[REMOVED]
    os.environ["PATH"] = "/nowhere"
    os.chdir(tmp_path)
    tempfile.tempdir = str(tmp_path)


def test_b_sees_none_of_it() -> None:
    assert LEAKED not in os.environ
    assert PATCHED_OVER not in os.environ
    assert REMOVED in os.environ
    assert os.environ["PATH"] != "/nowhere"
    if _before:  # the first test ran: everything is exactly as it found it
        assert _without_pytest_own(dict(os.environ)) == _without_pytest_own(_before["environ"])
        assert os.getcwd() == _before["cwd"]
        assert tempfile.tempdir == _before["tempdir"]


def _without_pytest_own(environ: object) -> dict[str, str]:
    """The environment but for the variable pytest rewrites at every phase of every test."""
    assert isinstance(environ, dict)
    return {k: v for k, v in environ.items() if k != "PYTEST_CURRENT_TEST"}

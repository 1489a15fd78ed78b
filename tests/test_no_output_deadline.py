"""A check with no deadline of its own runs while it keeps printing.

A real suite longer than the default would otherwise never be VERIFIED; a hung test goes
quiet and is stopped then. Real pytest runs in real bubblewrap, with the defaults shrunk
so that the suite outlasts the no-output limit in seconds, not minutes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import plan as planning
from assay.pipeline import VerifyOptions, verify
from assay.verdict import Cause, Status
from tests.cli import path_with_venv
from tests.repos import write

#: The shrunk defaults: stopped after this long without output (more than pytest's own
#: start-up in the sandbox takes on a loaded 2-core machine)...
QUIET_S = 5.0
#: ...and at this, however much it prints.
CAP_S = 40.0

#: Sixteen tests of 0.5 s each: 8 s in all, never QUIET_S without a progress dot.
STEPS = 16
SUITE_S = STEPS * 0.5
SLOW_SUITE = {
    "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = ['tests']\n",
    "tests/test_slow.py": (
        "import time\n"
        "import pytest\n\n"
        f"@pytest.mark.parametrize('n', range({STEPS}))\n"
        "def test_step(n):\n"
        "    time.sleep(0.5)\n"
        "    assert n * 2 == n + n\n"
    ),
}


@pytest.fixture
def shrunk_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", path_with_venv())
    monkeypatch.setattr(planning, "DEFAULT_TIMEOUT_S", QUIET_S)
    monkeypatch.setattr(planning, "DEFAULT_PRINTING_DEADLINE_S", CAP_S)


def verified(repo: Path, **options: object) -> tuple[Status, str]:
    report = verify(
        repo, VerifyOptions(sandbox="bwrap", use_cache=False, kinds=frozenset({"test"}), **options)
    )
    return report.status, report.note


@pytest.mark.usefixtures("shrunk_defaults")
def test_a_suite_longer_than_the_limit_that_keeps_printing_is_verified(tmp_path: Path) -> None:
    status, note = verified(write(tmp_path, SLOW_SUITE))
    assert status is Status.VERIFIED, note


@pytest.mark.usefixtures("shrunk_defaults")
def test_a_hung_test_is_stopped_once_the_suite_goes_quiet(tmp_path: Path) -> None:
    hung = dict(SLOW_SUITE)
    hung["tests/test_slow.py"] += "\ndef test_zz_hangs():\n    time.sleep(600)\n"
    report = verify(
        write(tmp_path, hung),
        VerifyOptions(sandbox="bwrap", use_cache=False, kinds=frozenset({"test"})),
    )
    (pytest_check,) = report.checks
    assert report.status is Status.INDETERMINATE, report.note
    assert pytest_check.cause is Cause.TIMEOUT
    assert f"printed nothing for {QUIET_S:g} s" in pytest_check.note
    # Stopped after the sixteen tests and one quiet spell, long before the cap.
    assert pytest_check.result is not None and pytest_check.result.silent_s == QUIET_S
    assert pytest_check.result.duration_s < SUITE_S + QUIET_S + 10 < CAP_S


@pytest.mark.usefixtures("shrunk_defaults")
@pytest.mark.parametrize("canaries", [False, True], ids=["plain", "with-canaries"])
def test_a_hung_test_is_named(tmp_path: Path, canaries: bool) -> None:
    """A run stopped at the deadline writes no report; pytest, as assay starts it, records
    each test as it starts, and the last is named: in a plain verify, and beside the canary
    plugin (planted under --protect, as a grader verifies)."""
    hung = {
        **SLOW_SUITE,
        # One line, so the interrupted line is the same wherever in the loop it lands.
        "tests/test_slow.py": "def test_zz_hangs():\n    while True: pass\n",
    }
    options = VerifyOptions(
        sandbox="bwrap", use_cache=False, kinds=frozenset({"test"}), canaries=canaries
    )
    report = verify(write(tmp_path, hung), options)
    (pytest_check,) = report.checks
    assert pytest_check.cause is Cause.TIMEOUT, report.note
    assert (
        "(a hang, while running tests/test_slow.py::test_zz_hangs"
        " (stuck at tests/test_slow.py:2 in test_zz_hangs))" in pytest_check.note
    )


@pytest.mark.usefixtures("shrunk_defaults")
def test_a_build_quiet_longer_than_the_limit_is_not_stopped_for_it(tmp_path: Path) -> None:
    """A build, a type check or a lint prints nothing until it is done, however long a large
    tree takes it (tsc, mypy, go vet): only a test run goes quiet when it hangs."""
    repo = write(
        tmp_path,
        {
            "Makefile": f"build:\n\t@sleep {QUIET_S + 3:g}\n",
            "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = ['tests']\n",
            "tests/test_a.py": "def test_a():\n    assert 1 + 1 == 2\n",
        },
    )
    report = verify(repo, VerifyOptions(sandbox="bwrap", use_cache=False))
    assert [c.check.name for c in report.checks] == ["make-build", "pytest"], report.note
    assert report.status is Status.VERIFIED, report.note


@pytest.mark.usefixtures("shrunk_defaults")
def test_a_test_run_quiet_while_it_builds_is_not_stopped_for_it(tmp_path: Path) -> None:
    """`go test -json` prints nothing while it builds the test binaries, a compiler process
    after another: a cold cache's `-race` build outlasted the limit and the run was stopped
    as hung. Here the tests' conftest starts program after program, quiet, for longer."""
    build = (
        "import subprocess, time\n\n"
        f"_end = time.monotonic() + {QUIET_S + 3:g}\n"
        "while time.monotonic() < _end:\n"
        "    subprocess.run(['sleep', '0.2'], check=True)\n"
    )
    repo = write(
        tmp_path,
        {
            "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = ['tests']\n",
            "tests/conftest.py": build,
            "tests/test_a.py": "def test_a():\n    assert 1 + 1 == 2\n",
        },
    )
    status, note = verified(repo)
    assert status is Status.VERIFIED, note


@pytest.mark.usefixtures("shrunk_defaults")
def test_a_stated_deadline_is_fixed_however_much_is_printed(tmp_path: Path) -> None:
    status, _ = verified(write(tmp_path, SLOW_SUITE), timeout_s=2.0)
    assert status is Status.INDETERMINATE

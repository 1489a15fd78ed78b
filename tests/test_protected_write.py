"""A test suite that rewrites a file of its own tests fails under `--protect`, which locks
those files: pytest-benchmark's sdist ships an .svg under tests/ that one of its tests
writes again, and a clean tree read as FAILED. A run whose every failing test was refused
a write to a protected file is inconclusive now, naming the file; a real failure beside it
still fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.evidence import Check, TestCase, evidence_for
from assay.protect import protected_set
from assay.protected_write import refused_protected_write
from assay.verdict import Cause, Kind, Status, Verdict
from tests.attacks import change_on_base, explain, verify_change

ROOT = Path("/w")
PROTECTED = protected_set()
CHECK = Check("pytest", Kind.TEST, ("python", "-m", "pytest"), tool="pytest")


def _failed_with(*messages: str) -> Verdict:
    cases = tuple(
        TestCase(f"tests/test_x.py::test_{n}", "failed", message=m) for n, m in enumerate(messages)
    )
    evidence = evidence_for(CHECK, Cause.EXIT_NONZERO, test_cases=cases)
    return refused_protected_write(evidence, PROTECTED, ROOT).verdict


@pytest.mark.parametrize(
    "message",
    [
        "PermissionError: [Errno 13] Permission denied: 'tests/golden.svg'",
        "PermissionError: [Errno 13] Permission denied: '/w/tests/data/out.json'",
        "Error: EACCES: permission denied, open '/w/tests/snap.txt'",
    ],
)
def test_a_failure_refused_a_write_to_a_protected_file_is_inconclusive(message: str) -> None:
    assert _failed_with(message) is Verdict.INCONCLUSIVE


@pytest.mark.parametrize(
    "messages",
    [
        # The code's own file: not protected, so not the lock's doing.
        ("PermissionError: [Errno 13] Permission denied: 'calc.py'",),
        # Outside the workspace.
        ("PermissionError: [Errno 13] Permission denied: '/etc/shadow'",),
        ("PermissionError: [Errno 13] Permission denied: '../tests/x.txt'",),
        # One failure is the lock's, the other the code's.
        (
            "PermissionError: [Errno 13] Permission denied: 'tests/golden.svg'",
            "AssertionError: assert 1 == 2",
        ),
    ],
)
def test_any_other_failure_stands(messages: tuple[str, ...]) -> None:
    assert _failed_with(*messages) is Verdict.FAIL


BASE = {
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1.0"\n',
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/golden.txt": "5\n",
    "tests/test_calc.py": """\
        from pathlib import Path

        from calc import add


        def test_add_regenerates_its_golden_file():
            Path("tests/golden.txt").write_text(f"{add(2, 3)}\\n")
            assert Path("tests/golden.txt").read_text() == "5\\n"
        """,
}


@pytest.mark.slow
def test_a_suite_rewriting_its_own_file_under_protect_is_inconclusive_not_failed(
    tmp_path: Path,
) -> None:
    repo = change_on_base(tmp_path / "repo", BASE, {"README.md": "calc\n"})
    report = verify_change(repo, kinds=frozenset({"test"}))
    assert report.status is Status.INDETERMINATE, explain(report)
    (test,) = report.checks
    assert test.cause is Cause.SANDBOX_UNAVAILABLE, explain(report)
    assert "tests/golden.txt" in test.note and "--protect" in test.note, test.note
    # Without --protect nothing is locked, and the same tree passes.
    plain = verify_change(repo, protect=False, kinds=frozenset({"test"}))
    assert plain.status is Status.VERIFIED, explain(plain)


@pytest.mark.slow
def test_a_real_failure_beside_the_refused_write_still_fails(tmp_path: Path) -> None:
    wrong = {
        "calc.py": "def add(a, b):\n    return a - b\n",
        "tests/test_more.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 1) == 2\n",
    }
    base = {**BASE, "tests/test_more.py": wrong["tests/test_more.py"]}
    repo = change_on_base(tmp_path / "repo", base, {"calc.py": wrong["calc.py"]})
    report = verify_change(repo, kinds=frozenset({"test"}))
    assert report.status is Status.FAILED, explain(report)

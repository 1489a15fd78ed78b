"""Tampering signals, and protected workspaces in which the base's tests decide the verdict."""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from defusedxml import ElementTree

from assay.protect import protected_set
from assay.protected_workspace import provision_protected, restore_protected
from assay.sandbox import BwrapOptions, BwrapSandbox
from assay.tamper import TamperKind, detect_tampering
from tests.repos import write

PYTHON = sys.executable

BASE_FILES = {
    "calc.py": "def add(a, b):\n    return a - b  # the bug the change should fix\n",
    "tests/test_calc.py": (
        "from calc import add\n\n\n"
        "def test_add():\n    assert add(2, 2) == 4\n\n\n"
        "def test_add_zero():\n    assert add(1, 0) == 1\n"
    ),
    "pyproject.toml": '[project]\nname = "calc"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n',
}

#: Each change leaves calc.py broken and cheats instead.
CHEATS = {
    "assert_true": {
        "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert True\n\n\n"
        "def test_add_zero():\n    assert True\n",
    },
    "delete_failing_test": {
        "tests/test_calc.py": "from calc import add\n\n\ndef test_add_zero():\n    assert add(1, 0) == 1\n",
    },
    "conftest_forces_pass": {
        "conftest.py": (
            "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
            "def pytest_runtest_makereport(item, call):\n"
            "    outcome = yield\n    report = outcome.get_result()\n"
            "    report.outcome = 'passed'\n"
        ),
    },
    "writes_own_report": {
        "calc.py": (
            "import os\n"
            "REPORT = os.environ.get('ASSAY_REPORT', 'report.xml')\n"
            "for target in (REPORT, 'report.xml'):\n"
            "    try:\n"
            '        open(target, \'w\').write(\'<testsuite tests="2" failures="0" errors="0"/>\')\n'
            "    except OSError:\n"
            "        pass\n\n\n"
            "def add(a, b):\n    return a - b\n"
        ),
    },
}

EXPECTED_SIGNAL = {
    "assert_true": TamperKind.ASSERTION_WEAKENED,
    "delete_failing_test": TamperKind.TEST_REMOVED,
    "conftest_forces_pass": TamperKind.CONFTEST_ADDED,
}


@pytest.fixture
def base(tmp_path: Path) -> Path:
    root = tmp_path / "base"
    write(root, BASE_FILES)
    return root


def make_change(tmp_path: Path, base: Path, cheat: str) -> Path:
    change = tmp_path / f"change-{cheat}"
    shutil.copytree(base, change)
    write(change, CHEATS[cheat])
    return change


@pytest.mark.parametrize("cheat", sorted(EXPECTED_SIGNAL))
def test_cheats_are_reported_as_signals(tmp_path: Path, base: Path, cheat: str) -> None:
    change = make_change(tmp_path, base, cheat)
    report = detect_tampering(base, change, protected_set())
    assert report.tampered
    assert EXPECTED_SIGNAL[cheat] in {s.kind for s in report.signals}
    assert report.to_dict()["signals"]


def test_an_honest_fix_is_not_tampering(tmp_path: Path, base: Path) -> None:
    change = tmp_path / "fix"
    shutil.copytree(base, change)
    (change / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    assert not detect_tampering(base, change, protected_set()).tampered


def test_markers_symlinks_and_sections(tmp_path: Path, base: Path) -> None:
    change = tmp_path / "c"
    shutil.copytree(base, change)
    text = (change / "tests" / "test_calc.py").read_text()
    (change / "tests" / "test_calc.py").write_text(
        "import pytest\n" + text.replace("def test_add()", "@pytest.mark.skip\ndef test_add()")
    )
    (change / "pyproject.toml").write_text(
        BASE_FILES["pyproject.toml"].replace('addopts = "-q"', 'addopts = "-q -k zero"')
    )
    (change / "tests" / "web.test.js").symlink_to("/etc/passwd")
    kinds = {s.kind for s in detect_tampering(base, change, protected_set()).signals}
    assert {
        TamperKind.SKIP_ADDED,
        TamperKind.SECTION_CHANGED,
        TamperKind.PROTECTED_SYMLINK,
    } <= kinds


def test_a_test_file_is_read_in_the_encoding_python_reads_it_in(tmp_path: Path, base: Path) -> None:
    """A coding line of UTF-7 runs `@pytest.mark.skip` written as base64: the marker is
    found as Python sees it."""
    change = tmp_path / "c"
    shutil.copytree(base, change)
    text = (change / "tests" / "test_calc.py").read_text()
    skip = "+AEAAcAB5AHQAZQBzAHQALgBtAGEAcgBrAC4AcwBrAGkAcA-"  # "@pytest.mark.skip"
    (change / "tests" / "test_calc.py").write_text(
        "# -*- coding: utf-7 -*-\nimport pytest\n"
        + text.replace("def test_add()", f"{skip}\ndef test_add()")
    )
    kinds = {s.kind for s in detect_tampering(base, change, protected_set()).signals}
    assert TamperKind.SKIP_ADDED in kinds, kinds


@pytest.mark.parametrize(
    ("rel", "before", "after"),
    [
        # A red team's: Go's helper keeps its t.Fatalf and only its condition turns lenient.
        (
            "internal/check/check.go",
            (
                'package check\n\nimport "testing"\n\nfunc Equal(t *testing.T, got, want int) {\n'
                '\tif got != want {\n\t\tt.Fatalf("got %d", got)\n\t}\n}\n'
            ),
            (
                'package check\n\nimport "testing"\n\nfunc Equal(t *testing.T, got, want int) {\n'
                '\tif got != want && got > want {\n\t\tt.Fatalf("got %d", got)\n\t}\n}\n'
            ),
        ),
        (
            "checking.py",
            "def assert_same(got, want):\n    assert got == want\n",
            "def assert_same(got, want):\n    if not isinstance(got, int):\n        assert got == want\n",
        ),
    ],
)
def test_a_change_to_code_the_tests_assert_through_is_a_signal(
    tmp_path: Path, base: Path, rel: str, before: str, after: str
) -> None:
    write(base, {rel: before})
    change = tmp_path / "c"
    shutil.copytree(base, change)
    write(change, {rel: after})
    signals = detect_tampering(base, change, protected_set()).signals
    assert [(s.kind, s.path) for s in signals] == [(TamperKind.TEST_SUPPORT_CHANGED, rel)]
    # Moved, and made lenient under its new name (a red team's next round).
    moved = tmp_path / "moved"
    shutil.copytree(change, moved)
    (moved / rel).rename((moved / rel).with_name("lenient_copy" + Path(rel).suffix))
    signals = detect_tampering(base, moved, protected_set()).signals
    assert (TamperKind.TEST_SUPPORT_CHANGED, rel) in [(s.kind, s.path) for s in signals]
    assert "removed or moved" in signals[0].detail
    # The control: library code (no `testing` import, no assertion functions that assert)
    # is the change's to make.
    library = (
        "def assert_fingerprint(cert, want):\n    if cert != want:\n        raise SSLError()\n"
    )
    write(base, {"ssl_.py": library})
    plain = tmp_path / "plain"
    shutil.copytree(base, plain)
    write(plain, {"calc.py": "def add(a, b):\n    return a + b\n", "ssl_.py": library + "# x\n"})
    assert not detect_tampering(base, plain, protected_set()).tampered


def test_restore_never_writes_through_a_planted_directory_link(tmp_path: Path, base: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    change = tmp_path / "c"
    shutil.copytree(base, change)
    shutil.rmtree(change / "tests")
    (change / "tests").symlink_to(outside, target_is_directory=True)
    result = restore_protected(change, base, protected_set())
    assert "tests/test_calc.py" in result.restored
    assert not (change / "tests").is_symlink()
    assert list(outside.iterdir()) == []


@pytest.fixture
def report_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="assay-reports-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def run_pytest(sandbox: BwrapSandbox, workspace, junit: Path):
    argv = [PYTHON, "-m", "pytest", "-p", "no:cacheprovider", f"--junitxml={junit}", "tests"]
    return sandbox.run(workspace, argv, timeout=60, env={"ASSAY_REPORT": str(junit)})


def junit_failures(path: Path) -> int:
    root = ElementTree.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root)
    return sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)


@pytest.mark.slow
@pytest.mark.parametrize("cheat", sorted(CHEATS))
def test_protected_workspace_keeps_the_base_tests_verdict(
    tmp_path: Path, base: Path, report_dir: Path, cheat: str
) -> None:
    change = make_change(tmp_path, base, cheat)
    sandbox = BwrapSandbox(
        BwrapOptions(writable_paths=(str(report_dir),), toolchain_paths=(sys.executable,))
    )
    junit = report_dir / f"{cheat}.xml"
    workspace, restore = provision_protected(sandbox, change, base, protected_set())
    try:
        result = run_pytest(sandbox, workspace, junit)
    finally:
        sandbox.cleanup(workspace)
    assert result.exit_code == 1, result.stdout.text  # the base's tests still fail
    assert junit_failures(junit) >= 1  # the report outside the workspace says so
    if cheat in EXPECTED_SIGNAL:
        assert restore.restored or restore.removed


@pytest.mark.slow
def test_without_protection_the_cheat_would_have_passed(tmp_path: Path, base: Path) -> None:
    """The control: the same cheat, unprotected, makes pytest exit 0 — hence the signal."""
    change = make_change(tmp_path, base, "assert_true")
    sandbox = BwrapSandbox(BwrapOptions(toolchain_paths=(sys.executable,)))
    with sandbox.workspace(change) as ws:
        result = sandbox.run(
            ws, [PYTHON, "-m", "pytest", "-p", "no:cacheprovider", "tests"], timeout=60
        )
    assert result.exit_code == 0
    assert detect_tampering(base, change, protected_set()).tampered


def test_a_cleanup_failure_never_masks_why_protecting_failed(
    tmp_path: Path, base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay import protected_workspace
    from assay.sandbox import CleanupError, LocalSandbox

    monkeypatch.setenv(
        "ASSAY_WORKSPACE_DIR", str(tmp_path)
    )  # the leftover lands where pytest cleans
    change = make_change(tmp_path, base, "assert_true")

    def broken_restore(*args: object) -> None:
        raise RuntimeError("the real problem")

    class StuckSandbox(LocalSandbox):
        def cleanup(self, workspace: object) -> None:
            raise CleanupError("device busy", backend=self.name)

    monkeypatch.setattr(protected_workspace, "restore_protected", broken_restore)
    with pytest.raises(RuntimeError, match="the real problem") as info:
        provision_protected(StuckSandbox(), change, base, protected_set())
    assert any("device busy" in note for note in info.value.__notes__)


def test_a_fifo_in_place_of_a_test_is_reported_without_hanging(tmp_path: Path, base: Path) -> None:
    import os
    import threading

    change = tmp_path / "c"
    shutil.copytree(base, change)
    (change / "tests" / "test_calc.py").unlink()
    os.mkfifo(change / "tests" / "test_calc.py")  # opening it to read would block forever
    found: list[object] = []
    worker = threading.Thread(
        target=lambda: found.append(detect_tampering(base, change, protected_set())), daemon=True
    )
    worker.start()
    worker.join(timeout=10)
    assert found, "detect_tampering blocked on a fifo"
    kinds = {s.kind for s in found[0].signals}  # type: ignore[attr-defined]
    assert TamperKind.PROTECTED_MODIFIED in kinds

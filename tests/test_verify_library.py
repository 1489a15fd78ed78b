"""`assay.verify` as a library is fail-closed: bad options raise one usage error when the
options are built; anything else that goes wrong is an INDETERMINATE report naming its
cause, never a raw exception. The failures here are real: an immutable file left in a
workspace, a probe directory that cannot be removed, a disk that fills while protected
files are restored."""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import assay
from assay.pipeline import VerifyOptions, VerifyUsageError
from assay.verdict import Cause, Kind, Status
from tests.cli import path_with_venv
from tests.repos import git, write

PYPROJECT = '[project]\nname = "fx"\nversion = "0.1.0"\n\n[tool.pytest.ini_options]\n'


@pytest.fixture(autouse=True)
def _project_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest and ruff come from this interpreter's environment."""
    monkeypatch.setenv("PATH", path_with_venv())


def _attribute(flag: str, path: Path) -> bool:
    """Set or clear a file attribute (`+i`, `-a`...); False where this filesystem or user cannot."""
    if shutil.which("chattr") is None:
        return False
    done = subprocess.run(["chattr", flag, str(path)], capture_output=True, check=False)
    return done.returncode == 0


# --------------------------------------------------------------------------- usage errors


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"sandbox": "docker"}, "docker"),
        ({"timeout_s": -1.0}, "timeout_s"),
        ({"timeout_s": math.nan}, "timeout_s"),
        ({"deadline_s": -5}, "deadline_s"),
        ({"deadline_s": math.inf}, "deadline_s"),
        ({"protect": True}, "--base"),
        ({"protect": True, "base": "HEAD~1", "sandbox": "none"}, "none"),
        ({"kinds": frozenset({"bogus"})}, "bogus"),
        ({"kinds": frozenset()}, "kinds"),
        ({"base": ""}, "base"),
        ({"use_cache": "yes"}, "use_cache"),
    ],
)
def test_bad_options_are_a_usage_error_when_built(fields: dict[str, object], said: str) -> None:
    with pytest.raises(VerifyUsageError, match=said):
        VerifyOptions(**fields)  # type: ignore[arg-type]


def test_kinds_may_be_named_by_their_values() -> None:
    assert VerifyOptions(kinds=frozenset({"lint"})).kinds == frozenset({Kind.LINT})  # type: ignore[arg-type]


def test_a_path_that_is_not_a_directory_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(VerifyUsageError):
        assay.verify(tmp_path / "missing", VerifyOptions(sandbox="local"))
    with pytest.raises(VerifyUsageError):
        assay.verify(tmp_path, "fast")  # type: ignore[arg-type]


def test_usage_errors_share_the_one_base() -> None:
    assert issubclass(VerifyUsageError, assay.AssayError)


# --------------------------------------------------------------------------- real failures


STUCK_TEST = """\
import pathlib
import subprocess


def test_leaves_an_immutable_file():
    pathlib.Path("stuck").write_text("the workspace cannot be removed with this in it")
    subprocess.run(["chattr", "+i", "stuck"], check=True)
    pathlib.Path({where!r}).write_text(str(pathlib.Path("stuck").resolve()))
"""


@pytest.fixture
def stuck_repo(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A repository whose test (unconfined under `local`, as root) makes one file of its
    workspace immutable, and says where; the file is freed again afterwards."""
    probe = tmp_path / "probe"
    probe.write_text("")
    if os.geteuid() != 0 or not _attribute("+i", probe):
        pytest.skip("needs root and a filesystem with immutable files")
    _attribute("-i", probe)
    where = tmp_path / "stuck-at"
    repo = write(
        tmp_path / "repo",
        {"pyproject.toml": PYPROJECT, "tests/test_stuck.py": STUCK_TEST.format(where=str(where))},
    )
    yield repo, where
    if where.exists():
        stuck = Path(where.read_text())
        _attribute("-i", stuck)
        shutil.rmtree(stuck.parent, ignore_errors=True)


@pytest.mark.slow
def test_a_workspace_that_cannot_be_removed_is_indeterminate_with_the_evidence_kept(
    stuck_repo: tuple[Path, Path],
) -> None:
    repo, where = stuck_repo
    report = assay.verify(repo, VerifyOptions(sandbox="local", use_cache=False))
    assert where.exists(), report.note  # the test really ran and made its file immutable
    assert report.status is Status.INDETERMINATE, report.note
    assert "could not be removed" in report.note
    assert report.record.cleanup_error and "could not be removed" in report.record.cleanup_error
    # The checks' evidence stays fully populated: the code itself passed.
    (test,) = [e for e in report.checks if e.check.kind is Kind.TEST]
    assert test.cause is Cause.EXIT_ZERO and test.tests is not None and test.tests.passed == 1
    assert report.to_dict()["extra"]["cleanup_error"] == report.record.cleanup_error


@pytest.fixture
def append_only_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The system temp dir, append-only: directories can be made in it but never removed."""
    place = tmp_path / "append-only"
    place.mkdir()
    if os.geteuid() != 0 or not _attribute("+a", place):
        pytest.skip("needs root and a filesystem with append-only directories")
    monkeypatch.setattr(tempfile, "tempdir", str(place))
    yield place
    _attribute("-a", place)


def test_a_sandbox_probe_that_cannot_clean_up_is_indeterminate(
    tmp_path: Path, append_only_tmp: Path
) -> None:
    repo = write(
        tmp_path / "repo",
        {"pyproject.toml": PYPROJECT, "tests/test_a.py": "def test_a():\n    pass\n"},
    )
    report = assay.verify(repo, VerifyOptions(sandbox="bwrap", use_cache=False))
    left = [p.name for p in append_only_tmp.iterdir()]
    assert any(name.startswith("assay-bwrap-probe") for name in left), left
    assert report.status is Status.INDETERMINATE, report.note
    assert "bwrap-probe" in report.note
    assert all(e.cause is Cause.SANDBOX_UNAVAILABLE for e in report.checks)


BIG_TEST = "# " + "x" * 2_000_000 + "\n\ndef test_big():\n    assert 1 + 1 == 3\n"


@pytest.fixture
def small_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A 512 KiB filesystem where workspaces are made."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(disk)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small filesystem: {mounted.stderr.decode().strip()}")
    monkeypatch.setenv("ASSAY_WORKSPACE_DIR", str(disk))
    yield disk
    subprocess.run(["umount", "-l", str(disk)], check=False)


@pytest.mark.slow
def test_a_protected_restore_that_fails_is_indeterminate(tmp_path: Path, small_disk: Path) -> None:
    """The base's test file is 2 MB, the change's a few bytes: the change's copy fits the
    disk, restoring the base's test does not."""
    repo = write(tmp_path / "repo", {"pyproject.toml": PYPROJECT, "tests/test_big.py": BIG_TEST})
    git(repo, "init", "-q", ".")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    write(repo, {"tests/test_big.py": "def test_big():\n    pass\n"})
    git(repo, "commit", "-qam", "change")
    options = VerifyOptions(sandbox="local", base="HEAD~1", protect=True)
    report = assay.verify(repo, options)
    assert report.status is Status.INDETERMINATE, report.note
    assert "No space left on device" in report.note
    assert report.record.error and "OSError" in report.record.error
    assert list(small_disk.iterdir()) == []  # the half-made workspace was removed

"""The bubblewrap probe is remembered for the binary it ran, and only for that binary.

Real bubblewrap, copied so that each test owns the binary it changes. What ran is read
from `strace`'s record of every exec, in a fresh process each time (as each `assay`
run is one).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assay.probe_bwrap import BWRAP_PROBE_FILE
from assay.probe_record import NO_PROBE_CACHE_VAR
from assay.sandbox import SandboxUnavailable
from assay.sandbox.bwrap import BwrapOptions, BwrapSandbox

BWRAP = shutil.which("bwrap")
STRACE = shutil.which("strace")

pytestmark = pytest.mark.skipif(BWRAP is None, reason="needs bubblewrap")

PROBE = (
    "import sys\n"
    "from assay.sandbox.bwrap import BwrapOptions, BwrapSandbox\n"
    "sandbox = BwrapSandbox(BwrapOptions(executable=sys.argv[1]))\n"
    "print(sandbox.describe())\n"
)


@pytest.fixture
def bwrap_copy(tmp_path: Path) -> Path:
    assert BWRAP is not None
    copy = tmp_path / "bin" / "bwrap"
    copy.parent.mkdir()
    shutil.copy2(BWRAP, copy)
    return copy


def _probe_in_a_new_process(binary: Path, cache: Path, trace: Path) -> list[str]:
    """Probe `binary` as a fresh `assay` would; the argv of every exec of `binary`."""
    assert STRACE is not None
    done = subprocess.run(
        [STRACE, "-f", "-qq", "-s", "256", "-e", "trace=execve", "-o", str(trace)]
        + [sys.executable, "-c", PROBE, str(binary)],
        capture_output=True,
        text=True,
        env={**os.environ, "ASSAY_CACHE_DIR": str(cache)},
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("bwrap "), done.stdout
    return [line for line in trace.read_text().splitlines() if f'execve("{binary}"' in line]


@pytest.mark.skipif(STRACE is None, reason="needs strace to see what ran")
def test_a_second_run_does_not_probe_again_and_a_touched_binary_does(
    bwrap_copy: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    first = _probe_in_a_new_process(bwrap_copy, cache, tmp_path / "first")
    assert any('"--version"' in line for line in first), first
    assert len(first) >= 2, first  # and the confined `true`
    assert (cache / BWRAP_PROBE_FILE).is_file()

    second = _probe_in_a_new_process(bwrap_copy, cache, tmp_path / "second")
    assert second == []  # neither `--version` nor the confined `true` ran again

    info = bwrap_copy.stat()
    os.utime(bwrap_copy, ns=(info.st_atime_ns, info.st_mtime_ns + 5_000_000_000))
    touched = _probe_in_a_new_process(bwrap_copy, cache, tmp_path / "touched")
    assert any('"--version"' in line for line in touched), touched


def test_a_binary_replaced_after_a_good_probe_is_probed_again(
    bwrap_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    assert BwrapSandbox(BwrapOptions(executable=str(bwrap_copy))).describe().startswith("bwrap ")
    assert (tmp_path / "cache" / BWRAP_PROBE_FILE).is_file()

    broken = tmp_path / "broken"
    broken.write_text("#!/bin/sh\necho 'bwrap: broken' >&2\nexit 1\n")
    broken.chmod(0o755)
    broken.replace(bwrap_copy)  # the same path, another binary
    with pytest.raises(SandboxUnavailable, match="--version` failed"):
        BwrapSandbox(BwrapOptions(executable=str(bwrap_copy))).ensure_available()


def test_a_failed_probe_is_not_remembered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    broken = tmp_path / "bwrap"
    broken.write_text("#!/bin/sh\nexit 1\n")
    broken.chmod(0o755)
    for _ in range(2):
        with pytest.raises(SandboxUnavailable):
            BwrapSandbox(BwrapOptions(executable=str(broken))).ensure_available()
    assert not (tmp_path / "cache" / BWRAP_PROBE_FILE).exists()


def test_a_record_of_garbage_is_ignored(
    bwrap_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / BWRAP_PROBE_FILE).write_bytes(b"\xff\xfe not a record\n\tbwrap 9\n")
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(cache))
    assert BwrapSandbox(BwrapOptions(executable=str(bwrap_copy))).describe().startswith("bwrap ")


def test_no_probe_cache_probes_every_time_and_remembers_nothing(
    bwrap_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv(NO_PROBE_CACHE_VAR, "1")
    assert BwrapSandbox(BwrapOptions(executable=str(bwrap_copy))).describe().startswith("bwrap ")
    assert not (tmp_path / "cache" / BWRAP_PROBE_FILE).exists()

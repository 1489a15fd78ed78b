"""Shared fixtures: a clean environment for every test, helpers to look at the process table,
and a host with planted secrets for sandbox escape attempts."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

PYTHON = sys.executable

# A suite started in the background by a script (`cmd &`, no job control) inherits SIGINT
# ignored, and so would every process it starts: Python then installs no Ctrl-C handler, and
# the tests that send SIGINT see it ignored. A handler here gives the children SIGINT's default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: a worker more than the machine has cores, as much of the suite waits (on
    real deadlines, hung processes and toolchains) rather than computes."""
    return (os.cpu_count() or 1) + 1


@pytest.fixture(scope="session")
def _session_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("assay-cache")


#: pytest's own variable, rewritten at every phase of every test: not the test's to leave behind.
_PYTEST_OWN = "PYTEST_CURRENT_TEST"


@pytest.fixture(autouse=True)
def _clean_environ(_session_cache_dir: Path) -> Iterator[None]:
    """Every test leaves the environment, the working directory and `tempfile.tempdir` exactly
    as it found them, whoever changed them and however (`os.environ` directly, `os.chdir`, code
    under test, not only `monkeypatch`); and no test reads or writes the user's cache (verdicts,
    probe records): the suite has one of its own.

    Not built on `monkeypatch`: this fixture is set up before any test's own `monkeypatch` and
    so torn down after it, and restores last what was there before either."""
    environ = dict(os.environ)
    cwd = os.getcwd()
    tempdir = tempfile.tempdir
    os.environ["ASSAY_CACHE_DIR"] = str(_session_cache_dir)
    try:
        yield
    finally:
        os.chdir(cwd)
        tempfile.tempdir = tempdir
        _restore_environ(environ)


def _restore_environ(saved: dict[str, str]) -> None:
    for name in [n for n in os.environ if n not in saved and n != _PYTEST_OWN]:
        del os.environ[name]
    for name, value in saved.items():
        if name != _PYTEST_OWN and os.environ.get(name) != value:
            os.environ[name] = value


@pytest.fixture
def short_grace(monkeypatch: pytest.MonkeyPatch) -> float:
    """Shrink the TERM->KILL grace period so kill tests run fast."""
    from assay import process

    monkeypatch.setattr(process, "TERM_GRACE_SECONDS", 0.3)
    return 0.3


def pid_alive(pid: int) -> bool:
    """True if `pid` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    state = stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3]
    return state not in (b"Z", b"X")


def wait_gone(pid: int, seconds: float = 2.0) -> bool:
    """Wait up to `seconds` for `pid` to be gone; True if it is."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not pid_alive(pid):
            return True
        time.sleep(0.01)
    return not pid_alive(pid)


def read_pids(path: Path) -> list[int]:
    """Pids written one per line by a test program."""
    end = time.monotonic() + 5
    while time.monotonic() < end:
        if path.exists():
            text = path.read_text().split()
            if text:
                return [int(p) for p in text]
        time.sleep(0.01)
    raise AssertionError(f"no pids written to {path}")


# --------------------------------------------------------------------------- sandbox escapes


@pytest.fixture
def host_dir() -> Iterator[Path]:
    """A host directory outside /tmp (which the sandbox replaces), so hiding it is meaningful."""
    path = Path(tempfile.mkdtemp(prefix="assay-host-", dir="/var/tmp"))
    path.chmod(0o755)  # world-readable: only the sandbox, not file modes, may stop a read
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def fake_home(host_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in for the real HOME with planted secrets."""
    home = host_dir / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY----- planted\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("[default]\naws_secret_access_key = planted\n")
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def source(host_dir: Path) -> Path:
    src = host_dir / "src"
    (src / "tests").mkdir(parents=True)
    (src / "tests" / "test_protected.py").write_text("def test_it():\n    assert 1 + 1 == 2\n")
    (src / "main.py").write_text("print('hello')\n")
    return src

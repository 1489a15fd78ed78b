"""A run that dies without cleaning up (kill -9) leaves its scratch directories; the
next `assay verify` or `assay run` removes them, and nothing else.

The end-to-end tests run the real console script with its scratch places isolated:
workspaces in `$ASSAY_WORKSPACE_DIR`, report directories (the system temp dir) in
`$TMPDIR`, both under the test's own directory.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.cli import ASSAY, path_with_venv

PYPROJECT = '[project]\nname = "fx"\nversion = "0.1.0"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
QUICK_TEST = "def test_one():\n    assert 1 + 1 == 2\n"
#: A test that says it started (a file in its workspace) and waits to be released.
WAITING_TEST = """\
import time
from pathlib import Path


def test_waits():
    Path("started").write_text("yes")
    end = time.monotonic() + 90
    while not Path("release").exists() and time.monotonic() < end:
        time.sleep(0.05)
    assert Path("release").exists()
"""


def repo(root: Path, test: str) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "tests" / "test_it.py").write_text(test)
    return root


class Places:
    """The scratch places of one test: where workspaces and report dirs go."""

    def __init__(self, tmp_path: Path) -> None:
        self.workspaces = tmp_path / "scratch"
        self.temp = tmp_path / "tmp"
        self.workspaces.mkdir()
        self.temp.mkdir()
        self.env = dict(os.environ)
        self.env.update(
            ASSAY_WORKSPACE_DIR=str(self.workspaces),
            TMPDIR=str(self.temp),
            ASSAY_CACHE_DIR=str(tmp_path / "cache"),
            PATH=path_with_venv(),
        )

    def entries(self) -> set[Path]:
        return {*self.workspaces.iterdir(), *self.temp.iterdir()}

    def verify(self, path: Path) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [ASSAY, "verify", str(path), "--sandbox", "bwrap", "--no-cache"],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def started_workspace(self, seconds: float = 90) -> Path:
        """The workspace whose test has started (it wrote `started`)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            for marker in self.workspaces.glob("*/started"):
                return marker.parent
            time.sleep(0.05)
        raise AssertionError(f"no test started in {self.workspaces}: {self.entries()}")


def owned_by(entries: set[Path], pid: int) -> set[Path]:
    """Those of `entries` whose name says process `pid` made them."""
    return {p for p in entries if re.search(rf"-{pid}_\d+_\d+-[a-z0-9_]{{8}}$", p.name)}


@pytest.mark.slow
def test_the_next_verify_removes_what_a_killed_run_left(tmp_path: Path) -> None:
    places = Places(tmp_path)
    killed = places.verify(repo(tmp_path / "waiting", WAITING_TEST))
    workspace = places.started_workspace()
    os.kill(killed.pid, signal.SIGKILL)
    killed.communicate(timeout=30)

    left = owned_by(places.entries(), killed.pid)
    assert workspace in left
    assert {p.name.split("-")[1] for p in left} == {"bwrap", "reports"}, left
    # Reports go where workspaces do when the run's memory is capped (what is written there
    # counts against the cap), else to the temp dir.
    reports = [p for p in left if p.name.startswith("assay-reports-")]
    assert all(p.parent in (places.temp, places.workspaces) for p in reports), reports

    done = subprocess.run(
        [ASSAY, "verify", str(repo(tmp_path / "quick", QUICK_TEST)), "--sandbox", "bwrap"],
        env=places.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert places.entries() == set(), "the killed run's directories are still there"
    said = [line for line in done.stderr.splitlines() if "stale" in line]
    assert len(said) == 1, done.stderr
    assert said[0].startswith("assay: removed 2 stale scratch directories of assay runs that died")
    assert str(workspace) in said[0]


@pytest.mark.slow
def test_a_live_runs_directories_survive_a_concurrent_sweep(tmp_path: Path) -> None:
    places = Places(tmp_path)
    live = places.verify(repo(tmp_path / "waiting", WAITING_TEST))
    try:
        workspace = places.started_workspace()
        mine = owned_by(places.entries(), live.pid)
        assert workspace in mine and len(mine) == 2, mine

        done = subprocess.run(
            [ASSAY, "verify", str(repo(tmp_path / "quick", QUICK_TEST)), "--sandbox", "bwrap"],
            env=places.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "stale" not in done.stderr
        assert owned_by(places.entries(), live.pid) == mine

        (workspace / "release").write_text("go")
        out, err = live.communicate(timeout=120)
        assert live.returncode == 0, out + err  # the live run finished, with all it had
    finally:
        if live.poll() is None:
            live.kill()
            live.communicate()
    assert places.entries() == set()


def test_the_sweep_looks_where_workspaces_are_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay import scratch
    from assay.sandbox import provision

    assert scratch.WORKSPACE_DIR_ENV == provision.WORKSPACE_DIR_ENV
    monkeypatch.setenv(provision.WORKSPACE_DIR_ENV, str(tmp_path))
    made = provision.scratch_dir(0).path
    assert made == tmp_path and made in scratch.scratch_places()


def dead_owner_tag() -> str:
    """`pid.starttime.pidns` of a process that has exited and been reaped."""
    child = subprocess.Popen(["sleep", "60"])
    stat = Path(f"/proc/{child.pid}/stat").read_text()
    start = stat[stat.rfind(")") + 2 :].split()[19]
    child.kill()
    child.wait()
    return f"{child.pid}.{start}.{os.stat('/proc/self/ns/pid').st_ino}"


def own_tag() -> str:
    stat = Path("/proc/self/stat").read_text()
    start = stat[stat.rfind(")") + 2 :].split()[19]
    return f"{os.getpid()}.{start}.{os.stat('/proc/self/ns/pid').st_ino}"


def test_the_sweep_removes_only_dead_runs_directories_made_by_assay(tmp_path: Path) -> None:
    from assay.scratch import sweep_stale

    place = tmp_path / "scratch"
    place.mkdir()
    dead = dead_owner_tag()
    stale = place / f"assay-local-0123456789abcdef-{dead}-abcd_123"
    (stale / "deep" / "er").mkdir(parents=True)
    (stale / "deep" / "er" / "file").write_text("x")
    target = tmp_path / "target"
    target.mkdir()
    (target / "keep").write_text("keep")
    (stale / "link").symlink_to(target)

    survivors = {
        # A live owner (this process), and an owner in another pid namespace.
        place / f"assay-reports-{own_tag()}-abcdefgh",
        place / f"assay-reports-{dead.rsplit('.', 1)[0]}.1-abcdefgh",
        # Names assay does not make.
        place / f"assay-reports-{dead}-abc",
        place / f"assay-Reports-{dead}-abcdefgh",
        place / f"xassay-reports-{dead}-abcdefgh",
        place / f"assay-reports-{dead}-abcdefgh.bak",
        place / "assay-reports-abcdefgh",
    }
    for path in survivors:
        path.mkdir()
    not_ours = place / f"assay-reports-{dead}-someone1"
    not_ours.mkdir()
    os.chown(not_ours, 12345, 12345)
    survivors.add(not_ours)
    a_file = place / f"assay-reports-{dead}-afile123"
    a_file.write_text("not a directory")
    survivors.add(a_file)
    a_link = place / f"assay-reports-{dead}-alink123"
    a_link.symlink_to(target)
    survivors.add(a_link)

    # The name assay makes now (no dots: see `assay.scratch`), beside an older release's.
    stale_now = place / f"assay-local-0123456789abcdef-{dead.replace('.', '_')}-abcd_124"
    stale_now.mkdir()

    removed = sweep_stale([place])

    assert sorted(removed) == sorted([str(stale), str(stale_now)])
    assert set(place.iterdir()) == survivors
    assert (target / "keep").read_text() == "keep"


def test_a_stale_directory_with_read_only_parts_is_removed() -> None:
    """As an unprivileged user, whom a read-only directory stops (root is not stopped)."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("needs root and setpriv to act as another user")
    with tempfile.TemporaryDirectory() as outer:  # pytest's own is closed to other users
        os.chmod(outer, 0o755)
        place = Path(outer) / "scratch"
        place.mkdir()
        os.chown(place, 65534, 65534)
        sweep_as_nobody(setpriv, place)
        assert list(place.iterdir()) == []


def sweep_as_nobody(setpriv: str, place: Path) -> None:
    script = f"""
import os, sys
from pathlib import Path
from assay.scratch import sweep_stale
stale = Path({str(place)!r}) / "assay-local-0123456789abcdef-{{}}-abcdefgh".format(sys.argv[1])
(stale / "ro" / "locked").mkdir(parents=True)
(stale / "ro" / "file").write_text("x")
(stale / "ro" / "locked" / "file").write_text("x")
os.chmod(stale / "ro" / "locked", 0o000)
os.chmod(stale / "ro", 0o555)
os.chmod(stale, 0o555)
print(sweep_stale([stale.parent]))
"""
    done = subprocess.run(
        [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
        + [sys.executable, "-c", script, dead_owner_tag()],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "assay-local-" in done.stdout


@pytest.mark.slow
def test_assay_run_sweeps_too_and_says_so(tmp_path: Path) -> None:
    places = Places(tmp_path)
    stale = places.temp / f"assay-reports-{dead_owner_tag()}-abcdefgh"
    stale.mkdir()
    done = subprocess.run(
        [ASSAY, "run", "--sandbox", "bwrap", "--cwd", str(tmp_path), "--", "true"],
        env=places.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert not stale.exists()
    assert f"assay: removed 1 stale scratch directory of assay runs that died ({stale})" in (
        done.stderr
    )

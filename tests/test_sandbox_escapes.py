"""Escapes that got through the bubblewrap sandbox once, each reproduced for real: code of
the repository running on the host, host files read, host sockets reached, resources shared
with the host and with other runs."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.pipeline import VerifyOptions, verify
from assay.sandbox import BwrapOptions, BwrapSandbox
from tests.test_sandbox_bwrap import PYTHON, TRY_WRITE, attempt, make_sandbox, outcome

AS_ROOT = os.geteuid() == 0

# --------------------------------------------------------------------------- host-side variables

PRELOAD_C = r"""
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void planted(void) {
    const char *marker = getenv("ASSAY_TEST_MARKER_PATH");
    int fd = open(marker ? marker : "/var/tmp/assay-preload-marker", O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) { dprintf(fd, "ran in pid %d\n", getpid()); close(fd); }
    dprintf(2, "assay-preloaded\n");
}
"""


@pytest.fixture
def preload_library(host_dir: Path) -> Path:
    """A real shared library whose constructor writes a marker on the host's /var/tmp."""
    source = host_dir / "planted.c"
    source.write_text(PRELOAD_C)
    library = host_dir / "planted.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    library.chmod(0o755)
    return library


def test_a_checks_variables_never_reach_the_host_side_bubblewrap(
    fake_home: Path, source: Path, preload_library: Path
) -> None:
    """The sandbox API passes a caller's variables to the command only: a loader variable
    runs its constructor once, inside, in the command, never in bwrap on the host."""
    marker = Path("/var/tmp") / f"assay-preload-{uuid.uuid4().hex}"
    sandbox = make_sandbox()
    try:
        with sandbox.workspace(source) as ws:
            shutil.copy(preload_library, ws.path / "planted.so")
            sandbox.reclaim(ws)
            env = {"LD_PRELOAD": str(ws.path / "planted.so"), "ASSAY_TEST_MARKER_PATH": str(marker)}
            result = sandbox.run(ws, ["/bin/true"], env=env, timeout=30)
        assert result.exit_code == 0, result.stderr.text
        assert not marker.exists(), marker.read_text()  # nothing ran on the host
        # ...and inside, only the command itself was preloaded: not setpriv, prlimit or sh.
        assert result.stderr.text.count("assay-preloaded") == 1, result.stderr.text
    finally:
        marker.unlink(missing_ok=True)


@pytest.mark.slow
def test_a_repository_cannot_set_loader_variables_for_its_checks(
    tmp_path: Path, preload_library: Path
) -> None:
    """`[tool.assay]` env with LD_PRELOAD, GIT_*, BASH_ENV, a NODE_OPTIONS preload from
    outside the tree, and names the sandbox's own shell uses: refused with a note, at any
    backend, and nothing runs on the host."""
    marker = Path("/var/tmp") / f"assay-preload-{uuid.uuid4().hex}"
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    shutil.copy(preload_library, repo / "planted.so")
    (repo / "tests" / "test_it.py").write_text("def test_it():\n    assert True\n")
    (repo / "pyproject.toml").write_text(
        textwrap.dedent(f"""\
            [project]
            name = "planted"
            version = "0"

            [tool.assay.commands.test]
            command = "{PYTHON} -m pytest -q"
            env = {{ LD_PRELOAD = "{repo / "planted.so"}", ASSAY_TEST_MARKER_PATH = "{marker}", BASH_ENV = "{repo / "planted.sh"}", GIT_CONFIG_GLOBAL = "{repo / "gitconfig"}", NODE_OPTIONS = "--require /etc/hostile.js", _ASSAY_ARGC = "0", _i = "9", KEPT_SETTING = "yes" }}
            """)
    )
    try:
        for backend in ("bwrap", "local"):
            report = verify(repo, VerifyOptions(sandbox=backend, use_cache=False))
            assert not marker.exists(), f"{backend}: {marker.read_text()}"
            notes = " ".join(report.to_dict()["plan"]["notes"])
            refused = (
                "LD_PRELOAD",
                "BASH_ENV",
                "GIT_CONFIG_GLOBAL",
                "NODE_OPTIONS",
                "_ASSAY_ARGC",
                "_i",
            )
            for name in refused:
                assert f"environment variable {name} refused" in notes, notes
            checks = report.to_dict()["plan"]["checks"]
            assert all("LD_PRELOAD" not in c["env"] for c in checks)
            assert any(c["env"].get("KEPT_SETTING") == "yes" for c in checks)
            assert report.status.value == "VERIFIED", report.note
    finally:
        marker.unlink(missing_ok=True)


@pytest.mark.slow
def test_host_side_probes_get_none_of_the_repositorys_variables(tmp_path: Path) -> None:
    """`PYTHONPATH=.` would make the host's `python -m pytest --version` import the
    repository's own `pytest` package: the host-side probe must not see it."""
    marker = Path("/var/tmp") / f"assay-probe-{uuid.uuid4().hex}"
    repo = tmp_path / "repo"
    (repo / "pytest").mkdir(parents=True)
    (repo / "pytest" / "__main__.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran on the host')\nprint('pytest 99.0')\n"
    )
    (repo / "pytest" / "__init__.py").write_text("")
    (repo / "pyproject.toml").write_text(
        f'[tool.assay.commands.test]\ncommand = "{PYTHON} -m pytest"\n'
        f'env = {{ PYTHONPATH = "{repo}" }}\n'
    )
    try:
        verify(repo, VerifyOptions(sandbox="bwrap", use_cache=False))
        assert not marker.exists()
    finally:
        marker.unlink(missing_ok=True)


# --------------------------------------------------------------------------- the hidden home


@pytest.fixture
def home_with_toolchains(fake_home: Path) -> Path:
    """A home with credentials next to toolchains: ~/.cargo/credentials.toml beside
    ~/.cargo/bin, a keyring in ~/.local/share beside ~/.local/bin, a vault token."""
    (fake_home / ".vault-token").write_text("planted-vault-token\n")
    cargo_bin = fake_home / ".cargo" / "bin"
    cargo_bin.mkdir(parents=True)
    (fake_home / ".cargo" / "credentials.toml").write_text('[registry]\ntoken = "planted"\n')
    tool = cargo_bin / "cargo"
    tool.write_text("#!/bin/sh\necho cargo 1.0.0\n")
    tool.chmod(0o755)
    (fake_home / ".local" / "share" / "keyrings").mkdir(parents=True)
    (fake_home / ".local" / "share" / "keyrings" / "login.keyring").write_text("planted")
    (fake_home / ".local" / "bin").mkdir(parents=True)
    (fake_home / ".local" / "bin" / ".pypirc").write_text("password = planted\n")
    (fake_home / "tools" / "x" / "bin").mkdir(parents=True)
    (fake_home / "tools" / "x" / "bin" / "tool").write_text("#!/bin/sh\necho tool\n")
    (fake_home / "tools" / "x" / "bin" / "tool").chmod(0o755)
    return fake_home


READ_ALL = """
import json, sys
out = {}
for path in sys.argv[1:]:
    try:
        out[path] = open(path).read()
    except OSError as exc:
        out[path] = type(exc).__name__
print(json.dumps(out))
"""


def test_only_toolchains_come_back_from_the_hidden_home(
    home_with_toolchains: Path, source: Path
) -> None:
    home = home_with_toolchains
    secrets = [
        home / ".vault-token",
        home / ".cargo" / "credentials.toml",
        home / ".local" / "share" / "keyrings" / "login.keyring",
        home / ".local" / "bin" / ".pypirc",
        home / ".ssh" / "id_rsa",
    ]
    # A plan naming files in the home as its "tools" must not make them (or their
    # directories) readable.
    sandbox = BwrapSandbox(
        BwrapOptions(
            toolchain_paths=(
                PYTHON,
                str(home / ".vault-token"),
                str(home / ".cargo" / "bin" / "cargo"),
                str(home / "tools" / "x" / "bin" / "tool"),
            )
        )
    )
    with sandbox.workspace(source) as ws:
        result = sandbox.run(ws, [PYTHON, "-c", READ_ALL, *map(str, secrets)], timeout=30)
        got = outcome(result)
        # Absent, or (a credential file inside a directory that is shown) masked.
        assert set(got.values()) <= {"FileNotFoundError", "PermissionError"}, got
        assert "planted" not in result.stdout.text + result.stderr.text
        # The toolchains themselves still run.
        ran = sandbox.run(ws, [str(home / ".cargo" / "bin" / "cargo")], timeout=30)
        assert ran.stdout.text == "cargo 1.0.0\n", ran.stderr.text
        ran = sandbox.run(ws, [str(home / "tools" / "x" / "bin" / "tool")], timeout=30)
        assert ran.stdout.text == "tool\n", ran.stderr.text


@pytest.mark.slow
def test_tools_a_home_manager_installed_run_inside(fake_home: Path, source: Path) -> None:
    """Shown back, beside the credentials that stay hidden: a pipx tool (`~/.local/bin/x`
    links into `~/.local/share/pipx/venvs`) and a project venv whose interpreter links into
    a uv-managed Python that links on elsewhere under the home."""
    pipx_venv = fake_home / ".local" / "share" / "pipx" / "venvs" / "tool" / "bin"
    pipx_venv.mkdir(parents=True)
    (pipx_venv / "tool").write_text("#!/bin/sh\necho pipx tool ran\n")
    (pipx_venv / "tool").chmod(0o755)
    (fake_home / ".local" / "bin").mkdir(parents=True)
    (fake_home / ".local" / "bin" / "tool").symlink_to(pipx_venv / "tool")
    (fake_home / ".local" / "share" / "keyrings").mkdir(parents=True)
    (fake_home / ".local" / "share" / "keyrings" / "login.keyring").write_text("planted")
    pythons = fake_home / "managed" / "cpython-3" / "bin"  # no manager assay knows of
    pythons.mkdir(parents=True)
    (pythons / "python3").symlink_to(os.path.realpath(PYTHON))
    (source / ".venv" / "bin").mkdir(parents=True)
    (source / ".venv" / "bin" / "python").symlink_to(pythons / "python3")
    tools = (str(fake_home / ".local" / "bin" / "tool"), str(source / ".venv" / "bin" / "python"))
    sandbox = BwrapSandbox(BwrapOptions(toolchain_paths=(*tools, PYTHON)))
    with sandbox.workspace(source) as ws:
        ran = sandbox.run(ws, [tools[0]], timeout=30)
        assert ran.stdout.text == "pipx tool ran\n", ran.stderr.text or ran.start_error
        ran = sandbox.run(ws, [".venv/bin/python", "-c", "print('venv ran')"], timeout=30)
        assert ran.stdout.text == "venv ran\n", ran.stderr.text or ran.start_error
        keyring = str(fake_home / ".local" / "share" / "keyrings" / "login.keyring")
        got = outcome(sandbox.run(ws, [PYTHON, "-c", READ_ALL, keyring], timeout=30))
    assert got[keyring] == "FileNotFoundError"


CARGO_TOML = '[package]\nname = "configured"\nversion = "0.1.0"\nedition = "2021"\n'
CARGO_TEST = (
    "#[cfg(test)]\nmod tests {\n    #[test]\n    fn sees_the_cargo_home() {\n"
    '        assert_eq!(env!("ASSAY_FROM_CARGO_HOME"), "seen");\n    }\n}\n'
)


@pytest.mark.slow
def test_the_hosts_cargo_home_configures_cargo_without_showing_its_secrets(
    fake_home: Path, host_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CARGO_HOME named on the host (its config.toml: source replacements, [env]) is what
    cargo reads inside, read-only; its credentials and a config that holds a token are not."""
    cargo_home = host_dir / "cargo-home"
    cargo_home.mkdir()
    (cargo_home / "config.toml").write_text('[env]\nASSAY_FROM_CARGO_HOME = "seen"\n')
    (cargo_home / "credentials.toml").write_text('[registry]\ntoken = "planted"\n')
    (cargo_home / "config").write_text('[registry]\ntoken = "planted"\n')
    monkeypatch.setenv("CARGO_HOME", str(cargo_home))
    monkeypatch.setenv("RUSTUP_HOME", os.path.expanduser("~root/.rustup"))
    cargo = shutil.which("cargo", path=f"{os.path.expanduser('~root/.cargo/bin')}:/usr/bin")
    assert cargo is not None, "cargo is needed (CI installs it)"
    crate = tmp_path / "crate"
    (crate / "src").mkdir(parents=True)
    (crate / "Cargo.toml").write_text(CARGO_TOML)
    (crate / "src" / "lib.rs").write_text(CARGO_TEST)
    sandbox = BwrapSandbox(BwrapOptions(toolchain_paths=(cargo, PYTHON)))
    with sandbox.workspace(crate) as ws:
        tested = sandbox.run(ws, [cargo, "test", "-q"], timeout=300)
        assert tested.exit_code == 0, tested.stderr.text[-2000:]
        secrets = [str(cargo_home / "credentials.toml"), str(cargo_home / "config")]
        result = sandbox.run(ws, [cargo, "--version"], timeout=60)
        assert result.exit_code == 0
        got = outcome(attempt(sandbox, ws, READ_ALL.replace("sys.argv[1:]", repr(secrets))))
    assert "planted" not in json.dumps(got)


@pytest.mark.slow
def test_a_plan_naming_a_home_file_as_its_tool_reads_nothing(
    home_with_toolchains: Path, tmp_path: Path
) -> None:
    """Through `verify`: an assay config whose test command is `cat ~/.vault-token`-like."""
    repo = tmp_path / "repo"
    repo.mkdir()
    token = home_with_toolchains / ".vault-token"
    (repo / "pyproject.toml").write_text(
        f'[tool.assay.commands]\ntest = "{token} --version"\nlint = "cat {token}"\n'
    )
    report = verify(repo, VerifyOptions(sandbox="bwrap", use_cache=False))
    assert "planted-vault-token" not in json.dumps(report.to_dict())
    assert report.status.value != "VERIFIED"


#: Prints what it sees of SECRET_DIR, then fails, so that pytest shows what it printed.
#: Its markers are spelt in two parts: pytest also shows the failing test's source, which
#: must not read as a leak.
LEAK_TEST = """\
import os
def test_leak():
    for path in (SECRET_DIR, SECRET_DIR + "/secret.txt"):
        try:
            seen = sorted(os.listdir(path)) if os.path.isdir(path) else open(path).read()
            print("LEAK" + "ED", path, seen)
        except OSError as exc:
            print("HID" + "DEN", path, exc.errno)
    assert False, "shows what it printed"
"""


@pytest.mark.slow
@pytest.mark.parametrize("link", ["straight", "through-a-tree-link"])
def test_a_tree_tool_linking_out_shows_no_host_directory(host_dir: Path, link: str) -> None:
    """A tree's `.venv/bin/ruff` is a link out of the tree: straight to a host directory
    that holds no toolchain, or by words that read as one (`s/../../secret/bin/tool`, with
    `s` a link to a deeper directory of the tree, reads as the host's `secret/bin/tool` but
    leads to a file of the tree). Neither may bind that host directory into the sandbox,
    where the tests would read it."""
    secret = host_dir / "secret"
    (secret / "bin").mkdir(parents=True)
    (secret / "secret.txt").write_text("planted-host-secret\n")
    repo = host_dir / "repo"
    for tool in (secret / "bin" / "tool", repo / "a/b/c/secret/bin/tool"):
        tool.parent.mkdir(parents=True, exist_ok=True)
        tool.write_text("#!/bin/sh\necho 0\n")
        tool.chmod(0o755)
    (repo / "a/b/c/d/e").mkdir(parents=True)
    (repo / "s").symlink_to("a/b/c/d/e")
    (repo / ".venv/bin").mkdir(parents=True)
    target = secret / "bin/tool" if link == "straight" else repo / "s/../../secret/bin/tool"
    (repo / ".venv/bin/ruff").symlink_to(target)
    (repo / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0"\n[tool.ruff]\n')
    (repo / "tests").mkdir()
    (repo / "tests/test_leak.py").write_text(f"SECRET_DIR = {str(secret)!r}\n" + LEAK_TEST)
    subprocess.run(["chmod", "-R", "a+rX", str(host_dir)], check=True)
    report = verify(repo, VerifyOptions(sandbox="bwrap", use_cache=False, all_tests=True))
    shown = json.dumps(report.to_dict())
    assert "planted-host-secret" not in shown and "LEAKED" not in shown, shown[:3000]
    assert f"HIDDEN {secret}" in shown, shown[:3000]  # the test ran, and saw nothing
    assert report.status.value == "FAILED"


# --------------------------------------------------------------------------- the root is built


@pytest.fixture
def host_socket(host_dir: Path) -> Iterator[Path]:
    """A UNIX socket server on the host outside /tmp and /run, answering a secret."""
    path = host_dir / "agent.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    path.chmod(0o777)
    server.listen(5)
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.sendall(b"secret-from-host-socket")
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield path
    stop.set()
    thread.join(timeout=2)
    server.close()


@pytest.mark.slow
def test_host_sockets_and_directories_outside_the_system_ones_are_absent(
    fake_home: Path, source: Path, host_dir: Path, host_socket: Path
) -> None:
    code = """
    import json, os, socket, sys
    out = {}
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(sys.argv[1])
        out["socket"] = s.recv(100).decode()
    except OSError as exc:
        out["socket"] = type(exc).__name__
    for path in sys.argv[2:]:
        out[path] = os.path.exists(path)
    print(json.dumps(out))
    """
    (host_dir / "other-project.txt").write_text("planted")
    sandbox = make_sandbox()
    with sandbox.workspace(source) as ws:
        probes = [str(host_dir / "other-project.txt"), "/var/lib", "/home", "/srv", "/mnt"]
        result = sandbox.run(
            ws, [PYTHON, "-c", textwrap.dedent(code), str(host_socket), *probes], timeout=30
        )
        got = outcome(result)
    assert got["socket"] in ("FileNotFoundError", "ConnectionRefusedError"), got
    assert not any(got[p] for p in probes), got


# --------------------------------------------------------------------------- shared resources


def test_private_tmpfs_is_size_limited(fake_home: Path, source: Path) -> None:
    sandbox = make_sandbox(tmpfs_bytes=32 * 1024**2)
    code = """
    import json, sys
    out = {}
    for path in ("/tmp/fill", "/dev/shm/fill", "/var/tmp/fill"):
        try:
            with open(path, "wb") as f:
                for _ in range(64):
                    f.write(b"x" * 1024**2)
            out[path] = "wrote 64 MiB"
        except OSError as exc:
            out[path] = exc.strerror
    print(json.dumps(out))
    """
    with sandbox.workspace(source) as ws:
        got = outcome(attempt(sandbox, ws, code))
        limits = sandbox.limits_in_force(ws)
    assert set(got.values()) == {"No space left on device"}, got
    assert limits["tmpfs_bytes"] == 32 * 1024**2


@pytest.mark.slow
def test_the_runs_memory_is_capped_as_a_whole(fake_home: Path, source: Path) -> None:
    """Five processes of 100 MiB each under a 256 MiB cap for the run: they cannot all live.
    Every one of them is within any per-process limit; only a whole-run cap stops this."""
    sandbox = make_sandbox(memory_bytes=256 * 1024**2, address_space_bytes=None)
    code = """
    import json, multiprocessing, time

    def hold(_):
        block = bytearray(100 * 1024**2)
        for i in range(0, len(block), 4096):
            block[i] = 1
        time.sleep(2)
        return len(block)

    if __name__ == "__main__":
        with multiprocessing.Pool(5) as pool:
            print(json.dumps({"held": sum(pool.map(hold, range(5)))}))
    """
    with sandbox.workspace(source) as ws:
        (ws.path / "hog.py").write_text(textwrap.dedent(code))
        sandbox.reclaim(ws)
        result = sandbox.run(ws, [PYTHON, "hog.py"], timeout=20)
        limits = sandbox.limits_in_force(ws)
    assert limits["whole_run"]["enforced_by"], limits
    assert limits["whole_run"]["memory_bytes"] == 256 * 1024**2
    assert "held" not in result.stdout.text, result.stdout.text
    assert result.exit_code != 0 or result.signal is not None or result.timed_out


@pytest.mark.slow
def test_a_tmpfs_workspace_counts_against_the_runs_memory(fake_home: Path, source: Path) -> None:
    """Writes to RAM-backed files (/dev/shm, the workspace on it) are memory of the run."""
    sandbox = make_sandbox(memory_bytes=128 * 1024**2, tmpfs_bytes=1024**3)
    code = """
    import json
    try:
        with open("/dev/shm/fill", "wb") as f:
            for _ in range(512):
                f.write(b"x" * 1024**2)
        print(json.dumps({"wrote": 512}))
    except OSError as exc:
        print(json.dumps({"wrote": exc.strerror}))
    """
    with sandbox.workspace(source) as ws:
        result = attempt(sandbox, ws, code)
    assert '"wrote": 512' not in result.stdout.text


def test_without_a_whole_run_memory_cap_the_workspace_stays_off_ram(
    fake_home: Path, source: Path
) -> None:
    """A workspace on /dev/shm is RAM that nothing charges to the run unless its cgroup
    does: without one, the workspace goes to disk."""
    capped = make_sandbox()
    uncapped = BwrapSandbox(BwrapOptions(toolchain_paths=(PYTHON,), whole_run_limits=False))
    with capped.workspace(source) as ws:
        assert capped.limits_in_force(ws)["whole_run"]["enforced_by"]
        assert ws.provisioned is not None
        capped_location = ws.provisioned.location
    with uncapped.workspace(source) as ws:
        assert uncapped.limits_in_force(ws)["whole_run"]["enforced_by"] is None
        assert ws.provisioned is not None
        assert ws.provisioned.location == tempfile.gettempdir()
        assert "unbounded" in ws.provisioned.location_reason
    assert capped_location == "/dev/shm"  # the control: RAM is used where it is capped


@pytest.mark.slow
@pytest.mark.skipif(not AS_ROOT, reason="distinct uids are given when assay runs as root")
def test_concurrent_runs_have_distinct_uids_so_a_fork_bomb_starves_only_its_own(
    fake_home: Path, source: Path
) -> None:
    bomber = make_sandbox(processes=64)
    honest = make_sandbox(processes=64)
    bomb = """
    import os, time
    children = 0
    for _ in range(500):
        try:
            if os.fork() == 0:
                time.sleep(30)
                os._exit(0)
            children += 1
        except OSError:
            break
    print("holding", children, flush=True)
    time.sleep(30)
    """
    spawn = """
    import json, subprocess
    procs = [subprocess.Popen(["sleep", "1"]) for _ in range(40)]
    print(json.dumps({"codes": sorted({p.wait() for p in procs})}))
    """
    with bomber.workspace(source) as bomb_ws, honest.workspace(source) as honest_ws:
        assert bomber.uid != honest.uid
        holder = threading.Thread(
            target=lambda: bomber.run(bomb_ws, [PYTHON, "-c", textwrap.dedent(bomb)], timeout=15)
        )
        holder.start()
        try:
            time.sleep(2)  # the bomb holds every process its uid may have
            result = attempt(honest, honest_ws, spawn)
            assert outcome(result) == {"codes": [0]}, result.stderr.text
        finally:
            holder.join()


def test_running_out_of_processes_is_never_blamed_on_bubblewrap() -> None:
    """A probe that cannot fork says the machine ran out, not "install bubblewrap"."""
    script = textwrap.dedent("""
        import json
        from assay.sandbox import BwrapSandbox, SandboxUnavailable
        try:
            BwrapSandbox().ensure_available()
            print(json.dumps({"available": True}))
        except SandboxUnavailable as exc:
            print(json.dumps({"available": False, "message": str(exc), "note": exc.note}))
    """)
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    # An ordinary uid whose process limit is below what it already has: every fork fails.
    holders = [subprocess.Popen([*as_nobody, "sleep", "30"]) for _ in range(3)]
    home = Path(tempfile.mkdtemp(prefix="assay-nobody-home-"))
    home.chmod(0o777)
    src = Path(__file__).resolve().parents[1] / "src"
    try:
        done = subprocess.run(
            [*as_nobody, "prlimit", "--nproc=3:3", "--", "/usr/bin/python3", "-c", script],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
            cwd="/",
            env={"PATH": os.environ["PATH"], "HOME": str(home), "PYTHONPATH": str(src)},
        )
    finally:
        for holder in holders:
            holder.kill()
            holder.wait()
        shutil.rmtree(home, ignore_errors=True)
    assert done.stdout.strip(), done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["available"] is False, done.stderr
    assert "install bubblewrap" not in got["note"], got
    assert "not a bubblewrap problem" in got["note"], got


# --------------------------------------------------------------------------- namespaces, seccomp


def test_no_user_namespace_can_be_made_inside(sandbox: BwrapSandbox, source: Path) -> None:
    code = """
    import ctypes, json, os
    libc = ctypes.CDLL(None, use_errno=True)
    CLONE_NEWUSER = 0x10000000
    made = libc.unshare(CLONE_NEWUSER) == 0
    print(json.dumps({"made": made, "errno": ctypes.get_errno()}))
    """
    with sandbox.workspace(source) as ws:
        got = outcome(attempt(sandbox, ws, code))
        shell = sandbox.run(ws, ["unshare", "-U", "true"], timeout=30)
        limits = sandbox.limits_in_force(ws)
    assert got["made"] is False, got
    assert shell.exit_code != 0
    assert limits["seccomp"] is True


# --------------------------------------------------------------------------- private directories


@pytest.mark.slow
@pytest.mark.parametrize("parent", ["/tmp", "/var/tmp"])
def test_passing_code_in_a_private_directory_is_verified(
    parent: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`mktemp -d` makes 0700 directories; the sandbox's uid must still reach the workspace,
    its linked `.git` and the report directory (TMPDIR below /tmp included)."""
    private = Path(tempfile.mkdtemp(prefix="assay-private-", dir=parent))
    try:
        assert private.stat().st_mode & 0o777 == 0o700
        tmpdir = private / "tmp"
        tmpdir.mkdir(mode=0o700)
        monkeypatch.setenv("TMPDIR", str(tmpdir))
        monkeypatch.setattr(tempfile, "tempdir", None)
        repo = private / "repo"
        (repo / "tests").mkdir(parents=True)
        (repo / "pyproject.toml").write_text(
            '[project]\nname = "p"\nversion = "0"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
        )
        (repo / "tests" / "test_ok.py").write_text("def test_ok():\n    assert 1 + 1 == 2\n")
        git = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
        subprocess.run([*git, "init", "-q"], check=True)
        subprocess.run([*git, "add", "."], check=True)
        subprocess.run([*git, "commit", "-qm", "base"], check=True)
        monkeypatch.setenv("ASSAY_WORKSPACE_DIR", str(tmpdir))
        report = verify(repo, VerifyOptions(sandbox="bwrap", use_cache=False))
        assert report.status.value == "VERIFIED", json.dumps(report.to_dict()["checks"])[:3000]
    finally:
        shutil.rmtree(private, ignore_errors=True)


# ---------------------------------------------------------------------------


def test_writes_to_the_workspace_still_work(sandbox: BwrapSandbox, source: Path) -> None:
    """The control: everything above is refused while ordinary work goes on."""
    with sandbox.workspace(source) as ws:
        got = outcome(sandbox.run(ws, [PYTHON, "-c", TRY_WRITE, "new.txt"], timeout=30))
    assert got == {"new.txt": "written"}


@pytest.fixture
def sandbox(fake_home: Path) -> BwrapSandbox:
    return make_sandbox(address_space_bytes=1024**3, processes=256)

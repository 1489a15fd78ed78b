"""`assay server`: a warm process answers `assay run`/`verify` as a cold start would.

Every test starts a real server through the CLI (in a private cache directory, so that
no other test meets it), runs the real console script against it, and reads what it
served from `assay server status`.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.cli import ASSAY, assay, assay_env, no_traceback

pytestmark = pytest.mark.slow

#: Held by every test that runs an `assay server`, shared; by the one that changes assay's
#: code, alone: every server stops when its code changes, and `-n`'s workers run tests at
#: once (a server of another test stopped under it, one loaded run in a few).
_SERVERS_LOCK = Path(tempfile.gettempdir()) / "assay-tests-servers.lock"


@contextlib.contextmanager
def servers_lock(*, alone: bool = False) -> Iterator[None]:
    with open(_SERVERS_LOCK, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _stops_every_server(test: Callable[..., None]) -> Callable[..., None]:
    test.stops_every_server = True  # type: ignore[attr-defined]
    return test


@pytest.fixture(autouse=True)
def _servers_apart(request: pytest.FixtureRequest) -> Iterator[None]:
    with servers_lock(alone=getattr(request.function, "stops_every_server", False)):
        yield


@pytest.fixture
def server_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The environment of a client of a freshly started server, stopped afterwards."""
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"))
    env.pop("ASSAY_NO_SERVER", None)
    started = assay("server", "start", "--idle-timeout", "120", env=env)
    assert started.returncode == 0, started.stderr
    assert "running (pid" in started.stdout
    yield env
    assay("server", "stop", env=env)


def _counts(env: dict[str, str]) -> tuple[int, int]:
    """(served, refused), as `assay server status` says."""
    status = assay("server", "status", env=env)
    assert status.returncode == 0, status.stdout + status.stderr
    served = int(status.stdout.split(" served")[0].rsplit(" ", 1)[-1])
    refused = int(status.stdout.split(" refused")[0].rsplit(" ", 1)[-1])
    return served, refused


def _comparable(evidence: object) -> object:
    """The evidence without what differs between any two runs (times, costs), at any depth."""
    varying = {"duration_s", "cpu_s", "peak_rss_bytes"}
    if isinstance(evidence, dict):
        return {k: _comparable(v) for k, v in evidence.items() if k not in varying}
    return evidence


SCRIPT = 'echo "FOO=$FOO"; pwd; umask; echo to-stderr >&2; exit 3'


def test_a_warm_run_prints_and_exits_as_a_cold_one(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = {**server_env, "FOO": "from the client"}
    args = ("run", "--json", "--sandbox", "none", "--", "sh", "-c", SCRIPT)
    warm = assay(*args, cwd=work, env=env)
    cold = assay(*args, cwd=work, env={**env, "ASSAY_NO_SERVER": "1"})
    no_traceback(warm)
    assert _counts(server_env) == (1, 0)  # the warm one was served, the cold one not
    assert warm.returncode == cold.returncode == 3
    warm_evidence, cold_evidence = json.loads(warm.stdout), json.loads(cold.stdout)
    assert warm_evidence["extra"] == cold_evidence["extra"]
    assert _comparable(warm_evidence) == _comparable(cold_evidence)
    stdout = warm_evidence["stdout"]["text"]  # type: ignore[index]
    assert "FOO=from the client" in stdout
    assert str(work) in stdout
    assert "to-stderr" in warm_evidence["stderr"]["text"]  # type: ignore[index]


def test_a_warm_verify_gives_the_cold_verdict(server_env: dict[str, str], tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pyproject.toml").write_text('[project]\nname = "pkg"\nversion = "0"\n')
    (repo / "pkg" / "__init__.py").write_text("def f():\n    return 1\n")
    (repo / "test_f.py").write_text("from pkg import f\n\ndef test_f():\n    assert f() == 2\n")
    warm = assay("verify", "--no-cache", ".", cwd=repo, env=server_env, timeout=120)
    no_traceback(warm)
    assert warm.returncode == 1, warm.stdout
    assert "\nFAILED\n" in warm.stdout
    assert "assert 1 == 2" in warm.stdout or "test_f" in warm.stdout
    assert _counts(server_env) == (1, 0)


def test_an_interrupt_reaches_the_worker_and_its_command(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    client, command_pid = _client_running_sleep(server_env, tmp_path)
    client.send_signal(signal.SIGINT)
    _, stderr = client.communicate(timeout=30)
    assert client.returncode == 130
    assert "Interrupted" in stderr
    _wait_gone(command_pid)


def test_a_client_killed_outright_leaves_no_command_running(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    client, command_pid = _client_running_sleep(server_env, tmp_path)
    client.kill()  # SIGKILL: nothing is passed on; the socket closing is the signal
    client.communicate(timeout=10)
    _wait_gone(command_pid)


def _client_running_sleep(env: dict[str, str], tmp_path: Path) -> tuple[subprocess.Popen[str], int]:
    """A warm `assay run -- sh -c 'sleep 60'` under way: the client, and the command's pid."""
    pid_file = tmp_path / "pid"
    client = subprocess.Popen(
        [ASSAY, "run", "--sandbox", "none", "--", "sh", "-c", f"echo $$ > {pid_file}; sleep 60"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return client, _wait_for_pid(pid_file)


def test_a_worker_gone_without_an_exit_code_is_no_verdict(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    pid_file = tmp_path / "pid"
    command = f"echo $PPID > {pid_file}; sleep 60"  # its parent: the worker
    client = subprocess.Popen(
        [ASSAY, "run", "--sandbox", "none", "--", "sh", "-c", command],
        env=server_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    worker = _wait_for_pid(pid_file)
    os.kill(worker, signal.SIGKILL)
    stdout, stderr = client.communicate(timeout=30)
    assert client.returncode == 3
    assert "without an exit code; nothing was verified" in stderr
    assert "VERIFIED" not in stdout


def test_a_client_in_another_namespace_is_refused_and_runs_cold(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    bwrap = shutil.which("bwrap")
    assert bwrap, "bubblewrap is needed (apt-get install bubblewrap)"
    # The socket is in plain sight here (the whole file system is bound): only the
    # namespace check stands between this client and an unsandboxed worker.
    done = subprocess.run(
        [bwrap, "--dev-bind", "/", "/", "--unshare-pid", "--", ASSAY, "run", "--sandbox", "none",
         "--", "sh", "-c", "echo inside"],
        env=server_env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    no_traceback(done)
    assert "inside" in done.stdout
    assert _counts(server_env) == (0, 1)


def test_a_client_whose_interpreter_would_differ_is_refused(server_env: dict[str, str]) -> None:
    env = {**server_env, "PYTHONHASHSEED": "12345"}
    done = assay("run", "--sandbox", "none", "--kind", "build", "--", "true", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _counts(server_env) == (0, 1)


def test_a_client_started_with_other_interpreter_options_is_refused(
    server_env: dict[str, str],
) -> None:
    python3 = Path(ASSAY).parent / "python3"  # the console script's interpreter, as the server's
    done = subprocess.run(
        [str(python3), "-W", "error::ResourceWarning", "-m", "assay", "run", "--sandbox", "none",
         "--kind", "build", "--", "true"],
        env=server_env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert _counts(server_env) == (0, 1)


@_stops_every_server
def test_a_server_whose_code_changed_stops_and_the_run_goes_cold(
    server_env: dict[str, str],
) -> None:
    import assay.warm_commands as module

    source = Path(module.__file__)
    before = source.stat()
    os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    try:
        done = assay("run", "--sandbox", "none", "--kind", "build", "--", "true", env=server_env)
    finally:
        os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert done.returncode == 0, done.stdout + done.stderr
    _wait_stopped(server_env)


def test_stop_and_idle_timeout_end_the_server(server_env: dict[str, str]) -> None:
    stopped = assay("server", "stop", env=server_env)
    assert stopped.stdout.startswith("assay server: stopped")
    _wait_stopped(server_env)
    sockets = list(Path(server_env["ASSAY_CACHE_DIR"]).glob("server-*.sock"))
    assert sockets == []
    idle = assay("server", "start", "--idle-timeout", "1", env=server_env)
    assert idle.returncode == 0, idle.stderr
    _wait_stopped(server_env, within=20)


def test_a_spare_worker_killed_while_waiting_is_replaced_and_goes_with_the_server(
    server_env: dict[str, str],
) -> None:
    """The server forks each request's worker ahead of it. One killed before its request
    costs that request nothing; the next waiting one exits with the server."""
    server = int(assay("server", "status", env=server_env).stdout.split("(pid ")[1].split(")")[0])
    spare = _wait_for_child(server)
    os.kill(spare, signal.SIGKILL)
    done = assay("run", "--sandbox", "none", "--kind", "build", "--", "true", env=server_env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _counts(server_env) == (1, 0)  # served, by a worker forked then
    following = _wait_for_child(server, other_than=frozenset({spare}))
    assay("server", "stop", env=server_env)
    _wait_gone(following)


def test_an_idle_worker_has_the_next_sandboxed_runs_start_done_ahead(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    """While it waits, a worker makes the cgroup an `assay run` under bubblewrap needs
    (`bwrap.start_ahead`): the run's processes are then in that very cgroup. It starts no
    launch there: one started before the run's mounts were known would hold none of their
    sources (`BwrapSandbox._launched`)."""
    server = int(assay("server", "status", env=server_env).stdout.split("(pid ")[1].split(")")[0])
    worker = _wait_for_child(server)
    group = _ahead_group(worker)
    assert _members(group) == []
    work = tmp_path / "work"
    work.mkdir()
    argv = [ASSAY, "run", "--sandbox", "bwrap", "--kind", "build", "--", "sleep", "1.5"]
    client = subprocess.Popen(argv, cwd=work, env=server_env, stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 15
    while len(_members(group)) < 3 and client.poll() is None:
        assert time.monotonic() < deadline, "the run never showed in the cgroup made ahead"
        time.sleep(0.02)
    out, _ = client.communicate(timeout=60)
    assert client.returncode == 0, out
    assert _counts(server_env) == (1, 0)
    assert _wait_until(lambda: not group.exists()), "the run's cgroup was left behind"


def _ahead_group(worker: int) -> Path:
    """The cgroup (its pids or unified hierarchy) `worker` made ahead."""
    from assay.sandbox import cgroup

    own = cgroup._own_groups()  # the server's and its workers', as this process's
    if "" in own and (cgroup.CGROUP_ROOT / "cgroup.controllers").exists():
        parents = [cgroup.CGROUP_ROOT / own[""].lstrip("/")]
    else:
        parents = [cgroup._v1_parent(own, c) for c in ("pids", "memory") if c in own]
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        for parent in parents:
            for group in parent.glob(f"assay-cgroup-{worker}_*"):
                return group
        time.sleep(0.05)
    raise AssertionError(f"worker {worker} made no cgroup ahead")


def _members(group: Path) -> list[int]:
    try:
        return [int(pid) for pid in (group / "cgroup.procs").read_text().split()]
    except OSError:
        return []


def _wait_until(condition: Callable[[], bool], within: float = 15) -> bool:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _wait_for_child(pid: int, other_than: frozenset[int] = frozenset()) -> int:
    """A live child of `pid` (the server's waiting worker), other than those given."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        alive = [int(c) for c in children if int(c) not in other_than and not _is_zombie(int(c))]
        if alive:
            return alive[0]
        time.sleep(0.05)
    raise AssertionError(f"process {pid} has no child")


def test_a_worker_that_cannot_take_its_clients_limits_is_a_refusal(tmp_path: Path) -> None:
    """A server that may not raise a hard limit to the client's (no CAP_SYS_RESOURCE, a
    lower hard limit of its own): its worker refuses, the client runs with its own limits,
    and `status` counts a refusal, not a run."""
    if os.getuid() != 0:
        pytest.fail("needs root, to start the server without a capability (CI runs as root)")
    import resource

    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"))
    env.pop("ASSAY_NO_SERVER", None)
    started = subprocess.run(
        ["prlimit", "--nofile=256:256", "setpriv", "--inh-caps=-sys_resource",
         "--bounding-set=-sys_resource", ASSAY, "server", "start", "--idle-timeout", "60"],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert started.returncode == 0, started.stderr
    try:
        done = assay(
            "run", "--json", "--sandbox", "none", "--", "sh", "-c", "ulimit -Hn", env=env
        )  # fmt: skip
        no_traceback(done)
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        assert json.loads(done.stdout)["stdout"]["text"].strip() == str(hard)
        deadline = time.monotonic() + 15
        while _counts(env) != (0, 1) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _counts(env) == (0, 1)
    finally:
        assay("server", "stop", env=env)


def test_auto_starts_a_server_for_the_next_run(tmp_path: Path) -> None:
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"), ASSAY_SERVER="auto")
    env.pop("ASSAY_NO_SERVER", None)
    try:
        first = assay("run", "--sandbox", "none", "--kind", "build", "--", "true", env=env)
        assert first.returncode == 0, first.stdout + first.stderr  # ran without a server
        deadline = time.monotonic() + 30
        while assay("server", "status", env=env).returncode != 0:
            assert time.monotonic() < deadline, "ASSAY_SERVER=auto started no server"
            time.sleep(0.1)
        second = assay("run", "--sandbox", "none", "--kind", "build", "--", "true", env=env)
        assert second.returncode == 0, second.stdout + second.stderr
        assert _counts(env) == (1, 0)
    finally:
        assay("server", "stop", env=env)


def test_a_server_started_in_a_hostile_repository_imports_nothing_from_it(
    tmp_path: Path,
) -> None:
    """`ASSAY_SERVER=auto` starts the server from the caller's directory, often the
    repository under verification: `python -m` would import that directory's `assay/`."""
    repo = tmp_path / "repo"
    marker = tmp_path / "imported-from-the-repository"
    plant = f"open({str(marker)!r}, 'w').write('pwned')\n"
    for module in ("assay/__init__.py", "assay/warm_server.py", "yaml.py", "click.py"):
        (repo / module).parent.mkdir(parents=True, exist_ok=True)
        (repo / module).write_text(plant)
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"), ASSAY_SERVER="auto")
    env.pop("ASSAY_NO_SERVER", None)
    try:
        first = assay(
            "run", "--sandbox", "none", "--kind", "build", "--", "true", cwd=repo, env=env
        )
        assert first.returncode == 0, first.stdout + first.stderr
        deadline = time.monotonic() + 30
        while assay("server", "status", env=env).returncode != 0:
            assert time.monotonic() < deadline, "ASSAY_SERVER=auto started no server"
            time.sleep(0.1)
        second = assay(
            "run", "--sandbox", "none", "--kind", "build", "--", "true", cwd=repo, env=env
        )
        assert second.returncode == 0, second.stdout + second.stderr
        assert _counts(env) == (1, 0)
    finally:
        assay("server", "stop", env=env)
    assert not marker.exists()


FAKE_SERVER = """
import marshal, socket, sys
listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
listener.bind(sys.argv[1])
listener.listen(1)
print("listening", flush=True)
conn, _ = listener.accept()
conn.settimeout(5)
try:
    data = conn.recv(1 << 22)
except OSError:
    data = b""
open(sys.argv[2], "w").write(str(len(data)))
if data:
    conn.send(marshal.dumps(("ready", 1)))
    conn.send(marshal.dumps(("exit", 0)))
"""


def test_a_server_of_another_user_gets_nothing(tmp_path: Path) -> None:
    """A socket at the path that another user listens on (a shared ASSAY_CACHE_DIR): the
    client would hand it its environment and terminal, and take its word for the exit."""
    if os.getuid() != 0:
        pytest.fail("needs root, to listen as another user (CI runs as root)")
    import tempfile

    shared = Path(tempfile.mkdtemp(prefix="assay-shared-"))
    try:
        shared.chmod(0o777)
        env = assay_env(ASSAY_CACHE_DIR=str(shared))
        env.pop("ASSAY_NO_SERVER", None)
        python3 = str(Path(ASSAY).parent / "python3")
        path = subprocess.run(
            [python3, "-c", "from assay.warm_client import socket_path; print(socket_path())"],
            env=env, capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        received = shared / "received"
        fake = subprocess.Popen(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", python3, "-c",
             FAKE_SERVER, path, str(received)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            assert fake.stdout is not None and fake.stdout.readline().strip() == "listening"
            done = assay("run", "--sandbox", "none", "--", "sh", "-c", "exit 7", env=env)
            assert done.returncode != 0, "a pass came from the other user's server"
            assert "exit" in done.stdout  # the command ran here, cold
            fake.wait(timeout=30)
        finally:
            fake.kill()
        assert received.read_text() == "0"  # nothing was sent to it
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def _wait_for_pid(path: Path) -> int:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        text = path.read_text().strip() if path.exists() else ""
        if text:
            return int(text)
        time.sleep(0.05)
    raise AssertionError(f"the command never wrote {path}")


def _wait_gone(pid: int, within: float = 15) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        if _is_zombie(pid):
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    raise AssertionError(f"process {pid} outlived its client")


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def _wait_stopped(env: dict[str, str], within: float = 15) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if assay("server", "status", env=env).returncode == 1:
            return
        time.sleep(0.2)
    raise AssertionError("the server is still running")


def test_a_worker_lets_go_of_its_clients_streams_before_it_ends_its_own_work() -> None:
    """A caller reading a client's output until it closes waits for the client only: a
    worker lets go of the streams it took before ending what it made ahead (a cgroup, a
    standby), which would otherwise hold the caller's pipe open."""
    code = (
        "import time; from assay.warm_worker import _release_streams;"
        "print('said', flush=True); _release_streams(); time.sleep(30)"
    )
    started = time.monotonic()
    worker = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        assert worker.stdout is not None
        said = worker.stdout.read()  # to the end: when every holder let go
        waited = time.monotonic() - started
    finally:
        worker.kill()
        worker.wait()
    assert said == b"said\n"
    assert waited < 15, f"the output stayed open {waited:.1f} s, until the worker ended"

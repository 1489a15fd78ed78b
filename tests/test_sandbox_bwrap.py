"""Escape attempts against the bubblewrap backend: each is a real program, each must fail,
and the host must be untouched afterwards."""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.process import StartFailure
from assay.sandbox import BwrapOptions, BwrapSandbox, Limits, Workspace

PYTHON = sys.executable


def make_sandbox(**limits: int | None) -> BwrapSandbox:
    # The interpreter the attempts run with is a toolchain the sandbox must show, wherever
    # it is installed (a checkout under /tmp included).
    return BwrapSandbox(
        BwrapOptions(limits=Limits(**limits) if limits else Limits(), toolchain_paths=(PYTHON,))
    )


@pytest.fixture
def sandbox(fake_home: Path) -> BwrapSandbox:
    # Built after HOME is pointed at the fake home, so that is the home it hides.
    return make_sandbox(address_space_bytes=1024**3, processes=256)


@pytest.fixture
def workspace(sandbox: BwrapSandbox, source: Path) -> Iterator[Workspace]:
    with sandbox.workspace(source) as ws:
        yield ws


def attempt(sandbox: BwrapSandbox, ws: Workspace, code: str, timeout: float = 30, **kw: object):
    """Run `code` with Python inside the sandbox; it prints one JSON object as its last line."""
    return sandbox.run(ws, [PYTHON, "-c", textwrap.dedent(code)], timeout=timeout, **kw)  # type: ignore[arg-type]


def outcome(result) -> dict:
    assert result.started, result.start_error
    lines = result.stdout.text.strip().splitlines()
    assert lines, f"no output; stderr: {result.stderr.text}"
    return json.loads(lines[-1])


TRY_WRITE = """
import json, sys
results = {}
for path in sys.argv[1:]:
    try:
        with open(path, "w") as f:
            f.write("escaped")
        results[path] = "written"
    except OSError as exc:
        results[path] = type(exc).__name__
print(json.dumps(results))
"""


def test_the_workspace_itself_is_writable(sandbox: BwrapSandbox, workspace: Workspace) -> None:
    result = sandbox.run(workspace, [PYTHON, "-c", TRY_WRITE, "inside.txt"], timeout=30)
    assert outcome(result) == {"inside.txt": "written"}
    assert (workspace.path / "inside.txt").read_text() == "escaped"


def test_writes_outside_the_workspace_fail(
    sandbox: BwrapSandbox, workspace: Workspace, host_dir: Path, fake_home: Path, source: Path
) -> None:
    host_file = host_dir / "host.txt"
    host_file.write_text("original")
    host_tmp = Path("/tmp") / f"assay-escape-{uuid.uuid4().hex}"
    targets = [
        str(host_file),
        str(host_dir / "new.txt"),
        str(fake_home / ".bashrc"),
        str(source / "main.py"),
        str(host_tmp),
        "/etc/assay-escape",
    ]
    result = sandbox.run(workspace, [PYTHON, "-c", TRY_WRITE, *targets], timeout=30)
    got = outcome(result)
    # /tmp inside is private: the write "succeeds" there and never reaches the host.
    assert got.pop(str(host_tmp)) == "written"
    assert all(v != "written" for v in got.values()), got
    assert host_file.read_text() == "original"
    assert not (host_dir / "new.txt").exists()
    assert not (fake_home / ".bashrc").exists()
    assert (source / "main.py").read_text() == "print('hello')\n"
    assert not host_tmp.exists()
    assert not Path("/etc/assay-escape").exists()


def test_secrets_in_the_real_home_cannot_be_read(
    sandbox: BwrapSandbox, workspace: Workspace, fake_home: Path
) -> None:
    code = """
    import json, os, sys
    out = {"HOME": os.environ.get("HOME")}
    for path in sys.argv[1:]:
        try:
            out[path] = open(path).read()
        except OSError as exc:
            out[path] = type(exc).__name__
    out["listing"] = sorted(os.listdir(sys.argv[3]))
    print(json.dumps(out))
    """
    paths = [str(fake_home / ".ssh" / "id_rsa"), str(fake_home / ".aws" / "credentials")]
    result = sandbox.run(
        workspace, [PYTHON, "-c", textwrap.dedent(code), *paths, str(fake_home)], timeout=30
    )
    got = outcome(result)
    assert got[paths[0]] == "FileNotFoundError"
    assert got[paths[1]] == "FileNotFoundError"
    assert got["listing"] == []  # the home is an empty tmpfs inside
    assert got["HOME"] != str(fake_home)
    assert "planted" not in result.stdout.text + result.stderr.text
    assert (fake_home / ".ssh" / "id_rsa").read_text().endswith("planted\n")


def test_secret_environment_variables_are_not_visible(
    sandbox: BwrapSandbox, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEPLOY_API_TOKEN", "planted-token")
    monkeypatch.setenv("UNRELATED_SETTING", "planted-setting")
    code = "import json, os; print(json.dumps(dict(os.environ)))"
    result = attempt(sandbox, workspace, code, env={"EXPLICIT_FOR_CHECK": "yes"})
    env = outcome(result)
    assert "planted" not in json.dumps(env)
    assert env["EXPLICIT_FOR_CHECK"] == "yes"  # what the caller passes is passed
    assert env["HOME"].startswith("/tmp/")


@pytest.fixture
def loopback_server() -> Iterator[tuple[int, list[object]]]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.settimeout(0.2)
    accepted: list[object] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            accepted.append(conn)
            conn.sendall(b"secret-from-host")
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join(timeout=2)
    server.close()


CONNECT = """
import json, socket, sys
try:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3)
    print(json.dumps({"connected": True, "data": s.recv(100).decode()}))
except OSError as exc:
    print(json.dumps({"connected": False, "error": type(exc).__name__}))
"""


def test_host_loopback_is_unreachable(
    sandbox: BwrapSandbox, workspace: Workspace, loopback_server: tuple[int, list[object]]
) -> None:
    port, accepted = loopback_server
    result = sandbox.run(workspace, [PYTHON, "-c", CONNECT, str(port)], timeout=30)
    assert outcome(result)["connected"] is False
    time.sleep(0.3)
    assert accepted == []


def test_network_option_does_reach_the_host(
    source: Path, fake_home: Path, loopback_server: tuple[int, list[object]]
) -> None:
    """The control for the test above: the same program connects when network is on."""
    port, accepted = loopback_server
    sandbox = BwrapSandbox(BwrapOptions(network=True, toolchain_paths=(PYTHON,)))
    with sandbox.workspace(source) as ws:
        result = sandbox.run(ws, [PYTHON, "-c", CONNECT, str(port)], timeout=30)
    assert outcome(result) == {"connected": True, "data": "secret-from-host"}
    assert len(accepted) == 1


def test_protected_file_cannot_be_replaced_through_a_symlink(
    sandbox: BwrapSandbox, workspace: Workspace, source: Path
) -> None:
    original = source / "tests" / "test_protected.py"
    before = original.read_bytes()
    code = """
    import json, os, sys
    out = {}
    os.symlink(sys.argv[1], "link_to_host_test.py")
    try:
        with open("link_to_host_test.py", "w") as f:
            f.write("def test_it():\\n    assert True\\n")
        out["through_link"] = "written"
    except OSError as exc:
        out["through_link"] = type(exc).__name__
    try:
        os.replace("link_to_host_test.py", sys.argv[1])
        out["rename_over"] = "replaced"
    except OSError as exc:
        out["rename_over"] = type(exc).__name__
    print(json.dumps(out))
    """
    result = sandbox.run(
        workspace, [PYTHON, "-c", textwrap.dedent(code), str(original)], timeout=30
    )
    got = outcome(result)
    assert got["through_link"] != "written"
    assert got["rename_over"] != "replaced"
    assert original.read_bytes() == before
    assert not original.is_symlink()


def test_git_directory_is_read_only(fake_home: Path, host_dir: Path) -> None:
    repo = host_dir / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("x = 1\n")
    git = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    config_before = (repo / ".git" / "config").read_bytes()
    sandbox = make_sandbox()
    with sandbox.workspace(repo) as ws:
        assert (ws.path / ".git").is_symlink()  # not copied: the source's, shown read-only
        targets = [".git/config", ".git/HEAD", ".git/info/exclude"]
        result = sandbox.run(ws, [PYTHON, "-c", TRY_WRITE, *targets], timeout=30)
        got = outcome(result)
        assert all(v != "written" for v in got.values()), got
        # A hook installer's hooks and state are written, into the run's own directories.
        private = [".git/hooks/pre-commit", ".git/info/lefthook.checksum"]
        result = sandbox.run(ws, [PYTHON, "-c", TRY_WRITE, *private], timeout=30)
        assert set(outcome(result).values()) == {"written"}, outcome(result)
        # ...while git itself still reads the repository...
        log = sandbox.run(ws, ["git", "log", "--format=%s"], timeout=30)
        assert log.exit_code == 0, log.stderr.text
        assert log.stdout.text == "base\n"
        # ...and the rest of the workspace stays writable.
        result = sandbox.run(ws, [PYTHON, "-c", TRY_WRITE, "a.py"], timeout=30)
        assert outcome(result) == {"a.py": "written"}
    assert (repo / ".git" / "config").read_bytes() == config_before
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    assert not (repo / ".git" / "info" / "lefthook.checksum").exists()
    assert (repo / "a.py").read_text() == "x = 1\n"


@pytest.fixture
def project_under_home(fake_home: Path) -> Path:
    """A project inside the hidden home, with a tiny `.venv` whose `bin/tool` runs."""
    src = fake_home / "code" / "proj"
    (src / "pkg" / "__pycache__").mkdir(parents=True)
    (src / "pkg" / "__pycache__" / "m.pyc").write_text("bytecode")
    (src / "pkg" / "m.py").write_text("X = 1\n")
    tool = src / ".venv" / "bin" / "tool"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\necho tool ran\n")
    tool.chmod(0o755)
    (src / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    return src


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.mark.slow
def test_environments_are_not_copied_but_run_read_only(
    sandbox: BwrapSandbox, project_under_home: Path, fake_home: Path
) -> None:
    venv = project_under_home / ".venv"
    before = _snapshot(venv)
    with sandbox.workspace(project_under_home) as ws:
        assert (ws.path / ".venv").is_symlink()
        assert not (ws.path / "pkg" / "__pycache__").exists()
        # Run by the relative path a plan uses, even though the home it lives in is hidden.
        ran = sandbox.run(ws, [".venv/bin/tool"], timeout=30)
        assert ran.exit_code == 0, ran.stderr.text
        assert ran.stdout.text == "tool ran\n"
        targets = [".venv/new.txt", ".venv/bin/tool", ".venv/pyvenv.cfg"]
        got = outcome(sandbox.run(ws, [PYTHON, "-c", TRY_WRITE, *targets], timeout=30))
        assert all(v != "written" for v in got.values()), got
        # Only the environment is shown: the rest of the hidden home stays hidden.
        secret = str(fake_home / ".ssh" / "id_rsa")
        got = outcome(sandbox.run(ws, [PYTHON, "-c", TRY_WRITE, secret], timeout=30))
        assert got[secret] == "FileNotFoundError"
    assert _snapshot(venv) == before
    assert (project_under_home / "pkg" / "__pycache__" / "m.pyc").exists()


def test_repointing_a_link_does_not_widen_what_is_shown(
    sandbox: BwrapSandbox, project_under_home: Path, fake_home: Path
) -> None:
    repoint = f"""
    import json, os
    os.remove(".venv")
    os.symlink({str(fake_home / ".ssh")!r}, ".venv")
    print(json.dumps({{"repointed": True}}))
    """
    read = """
    import json
    try:
        print(json.dumps({"read": open(".venv/id_rsa").read()}))
    except OSError as exc:
        print(json.dumps({"read": type(exc).__name__}))
    """
    with sandbox.workspace(project_under_home) as ws:
        assert outcome(attempt(sandbox, ws, repoint)) == {"repointed": True}
        # The next check is confined by what was recorded at provisioning, not by the link.
        result = attempt(sandbox, ws, read)
        assert outcome(result) == {"read": "FileNotFoundError"}
        assert "planted" not in result.stdout.text
    assert (project_under_home / ".venv" / "bin" / "tool").exists()


def _processes_with(token: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if token.encode() in cmdline:
            found.append(int(entry))
    return found


@pytest.mark.slow
def test_background_processes_do_not_outlive_the_check(
    sandbox: BwrapSandbox, workspace: Workspace
) -> None:
    token = f"assay-leftover-{uuid.uuid4().hex}"
    survivor = (
        "import os, sys, time\ntime.sleep(1.5)\nopen(sys.argv[1], 'w').write('still running')\n"
    )
    code = f"""
    import json, os, subprocess, sys
    # Detach fully: new session, double fork, output closed.
    subprocess.Popen([sys.executable, "-c", {survivor!r}, "survivor.txt", {token!r}],
                     start_new_session=True, stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print(json.dumps({{"spawned": True}}))
    """
    result = attempt(sandbox, workspace, code)
    assert outcome(result) == {"spawned": True}
    time.sleep(2.5)
    assert _processes_with(token) == []
    assert not (workspace.path / "survivor.txt").exists()


@pytest.mark.slow
def test_fork_bomb_is_bounded_by_the_process_limit(
    fake_home: Path, source: Path, short_grace: float
) -> None:
    limit = 48
    sandbox = make_sandbox(processes=limit, address_space_bytes=1024**3)
    counter = """
    import json, os, time
    children = 0
    refused = None
    for _ in range(500):
        try:
            pid = os.fork()
        except OSError as exc:
            refused = exc.strerror
            break
        if pid == 0:
            time.sleep(20)
            os._exit(0)
        children += 1
    print(json.dumps({"children": children, "refused": refused}))
    """
    bomb = (
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    )
    token = f"assay-bomb-{uuid.uuid4().hex}"
    with sandbox.workspace(source) as ws:
        counted = outcome(attempt(sandbox, ws, counter))
        assert counted["refused"] is not None
        assert counted["children"] < limit
        # A real, exponential bomb: it is contained, killed at the deadline, and leaves nothing.
        result = sandbox.run(ws, [PYTHON, "-c", bomb, token], timeout=3)
        assert result.timed_out or result.exit_code != 0
    assert _processes_with(token) == []


def test_unbounded_allocation_hits_the_address_space_limit(fake_home: Path, source: Path) -> None:
    sandbox = make_sandbox(address_space_bytes=512 * 1024**2)
    code = """
    import json
    try:
        hog = bytearray(4 * 1024**3)
        print(json.dumps({"allocated": len(hog)}))
    except MemoryError:
        print(json.dumps({"allocated": 0}))
    """
    with sandbox.workspace(source) as ws:
        assert outcome(attempt(sandbox, ws, code)) == {"allocated": 0}


def test_evidence_string_names_backend_and_version(sandbox: BwrapSandbox) -> None:
    described = sandbox.describe()
    assert described.startswith("bwrap ")
    assert described.split()[1][0].isdigit()


def test_a_command_that_does_not_exist_is_a_start_failure(
    sandbox: BwrapSandbox, workspace: Workspace
) -> None:
    result = sandbox.run(workspace, ["assay-no-such-command"], timeout=30)
    assert not result.started
    assert result.exit_code is None
    assert result.argv == ("assay-no-such-command",)


def test_posix_shared_memory_is_private_and_usable(
    sandbox: BwrapSandbox, workspace: Workspace
) -> None:
    code = """
    import json, multiprocessing, os
    lock = multiprocessing.Lock()  # a POSIX semaphore, made in /dev/shm
    with lock:
        pass
    open("/dev/shm/assay-private", "w").write("inside")
    print(json.dumps({"locked": True}))
    """
    assert outcome(attempt(sandbox, workspace, code)) == {"locked": True}
    assert not Path("/dev/shm/assay-private").exists()


def test_a_source_under_tmp_is_shown_read_only_for_editable_installs() -> None:
    """An editable install in the project's .venv imports from the source tree itself; a
    source under /tmp (which the sandbox replaces) must still be importable, not writable."""
    src = Path(tempfile.mkdtemp(prefix="assay-editable-", dir="/tmp"))
    try:
        src.chmod(0o755)
        (src / "pkg").mkdir()
        (src / "pkg" / "__init__.py").write_text("VALUE = 42\n")
        sandbox = make_sandbox()
        with sandbox.workspace(src) as ws:
            code = f"""
                import json, sys
                sys.path.insert(0, {str(src)!r})  # what an editable install's .pth does
                import pkg
                try:
                    open({str(src / "pkg" / "__init__.py")!r}, "w").write("VALUE = 0")
                    wrote = True
                except OSError:
                    wrote = False
                print(json.dumps({{"value": pkg.VALUE, "wrote": wrote}}))
            """
            got = outcome(attempt(sandbox, ws, code))
        assert got == {"value": 42, "wrote": False}
        assert (src / "pkg" / "__init__.py").read_text() == "VALUE = 42\n"
    finally:
        shutil.rmtree(src, ignore_errors=True)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ('[registry]\ntoken = "t"\n', True),
        ("//registry.example/:_authToken=t\n", True),
        ("_auth=dXNlcjpw\n", True),
        ("  PASSWORD: hunter2\n", True),
        ("api_SECRET_key = x\n", True),
        ("# token = commented out\n", False),
        ('[build]\njobs = 4\ntarget-dir = "target"\n', False),
        ("see the token docs\n", False),
        ("the token docs\n" * 2000 + "[auth]\n  Token = t\n", True),
        ("token\n= t\n", True),
        ("api_Token: t\n", True),
        ("token docs # = \n" * 3, False),
    ],
)
def test_a_file_beside_a_toolchain_is_masked_when_it_sets_a_secret(
    tmp_path: Path, text: str, secret: bool
) -> None:
    """The names and settings that mask a file, in any letter case; the same words in a
    comment or in prose do not."""
    from assay.sandbox.bwrap import _credentials_in

    (tmp_path / "config").write_text(text)
    (tmp_path / "credentials.toml").write_text("")
    (tmp_path / "Cargo.lock").write_text("")
    masked = {Path(p).name for p in _credentials_in(str(tmp_path))}
    assert masked == ({"config", "credentials.toml"} if secret else {"credentials.toml"})


@pytest.mark.parametrize(
    "change",
    [
        # The same size and modification time as the file it replaced: its change time,
        # which nothing can set back, still tells it from the file read before.
        lambda config, was: (
            config.write_text("token = t\n"),
            os.utime(config, ns=(was.st_atime_ns, was.st_mtime_ns)),
        ),
        lambda config, was: config.write_text("[auth]\ntoken = secret\n"),
        lambda config, was: (config.unlink(), config.write_text("token = t\n")),
    ],
    ids=["same-size-and-time", "rewritten", "made-anew"],
)
def test_a_file_that_gains_a_secret_after_it_was_read_is_masked(
    tmp_path: Path, change: Callable[[Path, os.stat_result], object]
) -> None:
    """What a file held is kept, not read again while it is unchanged: a changed one is."""
    from assay.sandbox.bwrap import _credentials_in

    config = tmp_path / "config"
    config.write_text("jobs = 4\n\n")
    assert _credentials_in(str(tmp_path)) == []
    time.sleep(0.01)  # past the file system's time resolution
    change(config, config.stat())
    assert _credentials_in(str(tmp_path)) == [str(config)]


_NAME_PIECES = [
    "credentials",
    ".token",
    "token",
    ".json",
    ".pem",
    ".key",
    "id_rsa",
    ".ssh",
    "x",
    ".",
]


@given(st.lists(st.sampled_from(_NAME_PIECES), min_size=1, max_size=4).map("".join))
def test_credential_names_are_matched_as_their_patterns_say(name: str) -> None:
    """The fast matcher (set, prefixes, suffixes) agrees with fnmatch on every pattern."""
    from assay.sandbox.bwrap import CREDENTIAL_NAMES, _is_credential

    expected = any(fnmatch.fnmatchcase(name, pattern) for pattern in CREDENTIAL_NAMES)
    assert _is_credential(name) == expected


def test_checks_started_together_build_the_root_once(
    sandbox: BwrapSandbox, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checks start side by side; the root (a scan of every toolchain directory it shows)
    is built by the first while the others wait, not by each of them at once."""
    built = []
    build = BwrapSandbox._root

    def slow_build(self: BwrapSandbox, ws: Workspace):  # type: ignore[no-untyped-def]
        built.append(ws.run_id)
        time.sleep(0.2)  # long enough that every thread asks while it is being built
        return build(self, ws)

    monkeypatch.setattr(BwrapSandbox, "_root", slow_build)
    sandbox._roots.clear()  # built for the launch started with the workspace: built again
    results = []
    threads = [
        threading.Thread(
            target=lambda: results.append(sandbox.run(workspace, ["true"], timeout=30))
        )
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [r.exit_code for r in results] == [0, 0, 0]
    assert built == [workspace.run_id]


def test_only_the_sandbox_failing_to_start_the_command_is_a_start_failure(
    sandbox: BwrapSandbox, workspace: Workspace
) -> None:
    """A command missing from the sandbox is a start failure; a command the check's own
    script cannot find (`npm test` running `pnpm`) is the check's exit 127, whose words
    (`sh: 1: pnpm: not found`) were read as npm itself missing."""
    missing = sandbox.run(workspace, ["/usr/bin/assay-no-such-tool"], timeout=30)
    assert missing.start_failure is StartFailure.NOT_FOUND, missing
    assert missing.start_error == "/usr/bin/assay-no-such-tool: not found in the sandbox"
    script = sandbox.run(workspace, ["sh", "-c", "assay-no-such-tool run"], timeout=30)
    assert script.started and script.start_failure is None, script.start_error
    assert script.exit_code == 127 and "assay-no-such-tool: not found" in script.stderr.text
    (workspace.path / "x.sh").write_text("#!/bin/sh\n")  # not executable
    refused = sandbox.run(workspace, ["./x.sh"], timeout=30)
    assert refused.start_failure is StartFailure.PERMISSION_DENIED, refused
    denied = sandbox.run(workspace, ["sh", "-c", "./x.sh"], timeout=30)
    assert denied.started and denied.exit_code == 126, denied

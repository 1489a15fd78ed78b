"""A command's launch, its late part fed once the command is known (`assay.sandbox.launch`),
and the first command's sandbox built while its workspace is made (a standby,
`assay.sandbox.standby`): with real bubblewrap, real cgroups and real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.process import InvalidRun, ProcessResult, run_process
from assay.sandbox import BwrapOptions, BwrapSandbox, Limits, Workspace, launch, standby
from tests.cli import assay
from tests.processes import gone
from tests.repos import write
from tests.swapping import swapping, tools_and_secret

PYTHON = sys.executable


@pytest.fixture
def sandbox(fake_home: Path) -> BwrapSandbox:
    return BwrapSandbox(BwrapOptions(limits=Limits(processes=256), toolchain_paths=(PYTHON,)))


@pytest.fixture
def workspace(sandbox: BwrapSandbox, source: Path) -> Iterator[Workspace]:
    with sandbox.workspace(source) as ws:
        yield ws


def _standby_pid(ws: Workspace) -> int:
    waiting = standby.STANDBYS.waiting(ws.run_id)
    assert waiting is not None, "no sandbox was built ahead"
    assert waiting.launch.started.proc is not None
    return waiting.launch.started.proc.pid


def _late(sandbox: BwrapSandbox, workspace: Workspace, overlay: dict[str, str]) -> list[str]:
    """A late part for a command in `workspace`, each mount's source by its path."""
    mounts = sandbox._sandbox_args(workspace, str(workspace.path), overlay)
    return [*mounts, *launch.late_variables(overlay)]


def test_the_first_command_finds_its_sandbox_built_already_in_the_run_cgroup(
    sandbox: BwrapSandbox, workspace: Workspace
) -> None:
    """The slow parts of a start, joining the cgroup and building the sandbox, are done
    while the workspace is made; the next command starts a launch of its own."""
    group = sandbox._cgroups.get(workspace.run_id)
    if group is None:
        pytest.fail(f"no cgroup here: {sandbox._cgroup_notes.get(workspace.run_id)}")
    pid = _standby_pid(workspace)
    end = time.monotonic() + 5
    while str(pid) not in (group.directories[0] / "cgroup.procs").read_text().split():
        assert time.monotonic() < end, "the standby never joined the run's cgroup"
        time.sleep(0.01)
    result = sandbox.run(workspace, ["sh", "-c", 'echo "$0|$1|$#"', "a b", "c'd\"e"], timeout=30)
    assert result.exit_code == 0, result.stderr.text
    assert result.stdout.text == "a b|c'd\"e|1\n"
    assert standby.STANDBYS.waiting(workspace.run_id) is None  # taken by that command
    second = sandbox.run(workspace, ["echo", "again"], timeout=30)  # started afresh
    assert (second.exit_code, second.stdout.text) == (0, "again\n")


def test_a_command_in_a_directory_of_the_workspace_takes_the_sandbox_built_at_its_root(
    sandbox: BwrapSandbox, workspace: Workspace
) -> None:
    """The sandbox is built at the workspace's root; the command's script enters its own
    directory (a check of a package in a subdirectory, `npm test` in `web/`)."""
    (workspace.path / "web").mkdir()
    pid = _standby_pid(workspace)
    result = sandbox.run(workspace, ["pwd"], cwd="web", timeout=30)
    assert (result.exit_code, result.stdout.text) == (0, f"{workspace.path}/web\n")
    assert standby.STANDBYS.waiting(workspace.run_id) is None
    assert gone(pid)  # it became that command, which has ended


def test_the_commands_words_and_variables_arrive_whole_and_assays_own_do_not(
    sandbox: BwrapSandbox, workspace: Workspace
) -> None:
    """Words with spaces, quotes, `$`, newlines and `=`; a variable the repository names
    like the shell's own carriers is dropped rather than let rewrite the command."""
    words = ["two words", "$HOME", "a\nb", "x=y", "'", "", "--"]
    script = "import json, os, sys; print(json.dumps([sys.argv[1:], dict(os.environ)]))"
    overlay = {"PLAIN": "v a l", "_ASSAY_ARGC": "0", "_ASSAY_ARG_0": "/bin/false", "_i": "9"}
    result = sandbox.run(workspace, [PYTHON, "-c", script, *words], env=overlay, timeout=30)
    assert result.exit_code == 0, result.stderr.text
    argv, environ = json.loads(result.stdout.text)
    assert argv == words
    assert environ["PLAIN"] == "v a l"
    assert not [name for name in environ if name.startswith("_ASSAY_") or name == "_i"]


def test_a_late_part_cut_short_runs_nothing(sandbox: BwrapSandbox, workspace: Workspace) -> None:
    """A launch that got all but the late part's last word never runs the command."""
    marker = workspace.path / "ran"
    late = _late(sandbox, workspace, {})
    assert late[-2:] == [launch.DONE_VAR, "1"]
    started = launch.start(
        sandbox._launch_template(workspace),
        sandbox._env(),
        str(workspace.path),
        (),
        ["touch", str(marker)],
    ).feed(late[:-3])
    result = run_process(started.argv, cwd=started.cwd, timeout=30, started=started)
    assert result.exit_code == 125
    assert "no command arrived" in result.stderr.text
    assert not marker.exists()


def test_a_sandbox_built_ahead_and_never_used_is_gone_with_its_workspace(
    sandbox: BwrapSandbox, source: Path
) -> None:
    with sandbox.workspace(source) as ws:
        pid = _standby_pid(ws)
        assert not gone(pid, within=0.2)
    assert gone(pid)
    assert standby.STANDBYS.waiting(ws.run_id) is None


def test_a_command_of_another_sandbox_shape_gets_a_sandbox_of_its_own_shape(
    sandbox: BwrapSandbox, workspace: Workspace
) -> None:
    """With the network shared, the launch is another one (no `--unshare-net`): the sandbox
    built ahead, without the network, is not the one such a command runs in (an install
    step); it is discarded, and the next command starts one as it would have."""
    pid = _standby_pid(workspace)
    online = sandbox.with_network()
    result = online.run(workspace, ["sh", "-c", "readlink /proc/self/ns/net"], timeout=30)
    assert result.exit_code == 0, result.stderr.text
    assert result.stdout.text.strip() == os.readlink("/proc/self/ns/net")  # the host's
    assert gone(pid)
    offline = sandbox.run(workspace, ["sh", "-c", "readlink /proc/self/ns/net"], timeout=30)
    assert offline.exit_code == 0, offline.stderr.text
    assert offline.stdout.text.strip() != os.readlink("/proc/self/ns/net")


def test_a_sandbox_whose_maker_dies_runs_nothing_and_exits(tmp_path: Path, source: Path) -> None:
    """The maker killed outright while the sandbox it built ahead waits: the pipe closes
    with nothing in it, and the sandbox ends without running anything."""
    code = textwrap.dedent(
        f"""
        import os, signal, sys
        from assay.sandbox import BwrapOptions, BwrapSandbox, standby
        sandbox = BwrapSandbox(BwrapOptions())
        ws = sandbox.provision({str(source)!r})
        print(standby.STANDBYS.waiting(ws.run_id).launch.started.proc.pid, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    maker = subprocess.run(
        [PYTHON, "-c", code], check=False, capture_output=True, text=True, timeout=60
    )
    assert maker.returncode == -9, maker.stderr
    pid = int(maker.stdout.split()[0])
    assert gone(pid), f"sandbox {pid} outlived its maker"


def test_the_next_run_in_place_takes_the_cgroup_made_ahead(fake_home: Path, tmp_path: Path) -> None:
    """What a warm worker makes while it waits: the next in-place run takes its cgroup.
    No launch is made with it: one started before the sandbox was known would hold none
    of the binds' sources (each is handed to bubblewrap as a descriptor it inherited)."""
    from assay.sandbox import bwrap

    bwrap.start_ahead()
    try:
        (ahead,) = bwrap._ahead
        assert not hasattr(ahead, "launch")
        sandbox = BwrapSandbox(BwrapOptions(toolchain_paths=(PYTHON,)))
        ws = sandbox.provision_in_place(tmp_path)
        try:
            assert sandbox._cgroups[ws.run_id] is ahead.group
            _standby_pid(ws)  # the workspace's own, built for its mounts
            result = sandbox.run(ws, ["sh", "-c", "echo in place > made"], timeout=30)
            assert result.exit_code == 0, result.stderr.text
            assert (tmp_path / "made").read_text() == "in place\n"
        finally:
            sandbox.cleanup(ws)
        assert not ahead.group.directories[0].exists()
    finally:
        bwrap.drop_ahead()


def test_what_was_made_ahead_and_not_taken_is_dropped(fake_home: Path) -> None:
    from assay.sandbox import bwrap

    bwrap.start_ahead()
    (ahead,) = bwrap._ahead
    assert ahead.group.directories[0].exists()
    bwrap.drop_ahead()
    assert not ahead.group.directories[0].exists()
    assert bwrap._ahead == []


def test_a_long_commands_words_arrive_whole_in_the_sandbox_built_ahead_and_in_a_fresh_one(
    sandbox: BwrapSandbox, workspace: Workspace
) -> None:
    """The sandbox built ahead gets a command's words in its script, one started afresh in
    its launch's argv: 1,280 of them, quoted every way, arrive whole either way."""
    words = [f"word {i} 'q' \"$x\"" for i in range(1280)]
    script = "import json, sys; print(json.dumps(sys.argv[1:]))"
    for _ in range(2):  # the sandbox built ahead, then a launch of its own
        started = time.monotonic()
        result = sandbox.run(workspace, [PYTHON, "-c", script, *words], timeout=60)
        assert result.exit_code == 0, result.stderr.text
        assert json.loads(result.stdout.text) == words
        assert time.monotonic() - started < 10
        assert standby.STANDBYS.waiting(workspace.run_id) is None


def test_a_word_holding_a_nul_byte_never_reaches_bubblewrap(
    sandbox: BwrapSandbox, workspace: Workspace
) -> None:
    """bubblewrap splits the late part at each NUL: a variable's value would be options."""
    made = launch.start(
        sandbox._launch_template(workspace), sandbox._env(), str(workspace.path), ()
    )
    assert made.started.proc is not None
    late = _late(sandbox, workspace, {"FOO": "x\0--share-net"})
    with pytest.raises(InvalidRun, match="NUL"):
        made.feed(late)
    assert gone(made.started.proc.pid)


def test_a_word_that_is_no_utf8_arrives_as_the_bytes_it_names(
    sandbox: BwrapSandbox, workspace: Workspace
) -> None:
    """A file name of a tree need not be UTF-8 (`p\\xff`, as Python holds it: `p\\udcff`);
    encoding it as text raised in the middle of a feed, and the check read as broken."""
    script = "import os, sys; print(os.fsencode(sys.argv[1]).hex())"
    result = sandbox.run(workspace, [PYTHON, "-c", script, "p\udcff"], timeout=30)
    assert result.exit_code == 0, result.stderr.text
    assert result.stdout.text.strip() == b"p\xff".hex()
    made = launch.start(
        sandbox._launch_template(workspace), sandbox._env(), str(workspace.path), ()
    )
    assert made.started.proc is not None
    late = _late(sandbox, workspace, {"WORD": "\ud800"})
    with pytest.raises(InvalidRun, match="cannot be encoded"):
        made.feed(late)  # no name or value holds a lone surrogate: refused, the launch gone
    assert gone(made.started.proc.pid)


@pytest.mark.slow
def test_a_package_named_in_no_utf8_is_verified(tmp_path: Path) -> None:
    """compileall's words name every directory: one named `p\\xff` gave assay's own
    traceback in the evidence and a FAILED verdict."""
    repo = tmp_path / "repo"
    write(
        repo,
        {
            "pyproject.toml": '[project]\nname = "p"\nversion = "0"\n',
            "tests/test_a.py": "def test_a():\n    assert 1 + 1 == 2\n",
        },
    )
    odd = os.path.join(os.fsencode(repo), b"p\xff")
    os.mkdir(odd)
    with open(os.path.join(odd, b"__init__.py"), "wb") as init:
        init.write(b"X = 1\n")
    done = assay("verify", "--json", "--no-cache", str(repo), timeout=180)
    assert "Traceback" not in done.stdout + done.stderr, done.stdout
    report = json.loads(done.stdout)
    assert report["status"] == "VERIFIED", report["note"]


@pytest.mark.slow
def test_a_ci_variable_holding_nul_bytes_adds_no_sandbox_option(tmp_path: Path) -> None:
    """A workflow's `env:` value with NUL bytes (YAML's "\\0") was split by bubblewrap into
    options of their own: the host's root mounted, the host's /tmp writable, the network
    shared, and the verdict VERIFIED. The variable is refused; the sandbox is whole."""
    marker = f"assay-nul-escape-{uuid.uuid4().hex}"
    escape = "x\\0--share-net\\0--ro-bind\\0/\\0/host\\0--bind\\0/tmp\\0/hosttmp"
    write(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "p"\nversion = "0"\n',
            ".github/workflows/ci.yml": "name: ci\non: push\njobs:\n  test:\n"
            "    runs-on: ubuntu-latest\n"
            f'    env:\n      FOO: "{escape}"\n'
            "    steps:\n      - uses: actions/checkout@v4\n      - run: pytest -q\n",
            "tests/test_a.py": "import os\n\n\ndef test_a():\n"
            f"    open('/hosttmp/{marker}', 'w').write(str(os.listdir('/host')))\n",
        },
    )
    done = assay("verify", "--json", "--no-cache", str(tmp_path), timeout=180)
    report = json.loads(done.stdout)
    assert not Path("/tmp", marker).exists(), "the check wrote into the host's /tmp"
    assert report["status"] == "FAILED", report["note"]
    assert "NUL byte" in json.dumps(report), report


@pytest.mark.parametrize("in_place", [True, False], ids=["in-place", "copy"])
def test_home_is_the_commands_own_and_private(
    sandbox: BwrapSandbox, source: Path, in_place: bool
) -> None:
    """In place bubblewrap makes HOME as the command's uid; a copy's command (as root, it
    drops to its uid itself) has the shell inside make it. Either way the command owns it."""
    ws = sandbox.provision_in_place(source) if in_place else sandbox.provision(source)
    try:
        probe = 'stat -c "%u %a" "$HOME" && id -u && touch "$HOME/x" && echo written'
        result = sandbox.run(ws, ["sh", "-c", probe], timeout=30)
    finally:
        sandbox.cleanup(ws)
    assert result.exit_code == 0, result.stderr.text
    (owner, mode), uid, written = (line.split() for line in result.stdout.text.splitlines())
    assert (owner, written) == (uid[0], ["written"])
    assert mode in ("700", "755")


def test_a_launch_started_ahead_under_other_limits_is_not_taken(
    fake_home: Path, tmp_path: Path
) -> None:
    """A warm worker starts its launch ahead, then takes its client's umask and limits:
    a launch that inherited the server's is no run of the client's."""
    import resource

    from assay.sandbox import bwrap

    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    bwrap.start_ahead()
    try:
        (ahead,) = bwrap._ahead
        # as the client's differ from the server's: core files of 1024 blocks of 512 bytes
        changed = 1024 * 512
        assert soft != changed and (hard == resource.RLIM_INFINITY or hard >= changed)
        resource.setrlimit(resource.RLIMIT_CORE, (changed, hard))
        sandbox = BwrapSandbox(BwrapOptions(toolchain_paths=(PYTHON,)))
        ws = sandbox.provision_in_place(tmp_path)
        try:
            assert sandbox._cgroups[ws.run_id] is not ahead.group
            result = sandbox.run(ws, ["sh", "-c", "ulimit -c"], timeout=30)
            assert (result.exit_code, result.stdout.text) == (0, "1024\n"), result.stderr.text
        finally:
            sandbox.cleanup(ws)
    finally:
        resource.setrlimit(resource.RLIMIT_CORE, (soft, hard))
        bwrap.drop_ahead()


def test_limits_above_the_callers_hard_limit_are_held_to_it(source: Path) -> None:
    """The launch's limits are set on it before it reads its late part (no prlimit runs in
    the sandbox): one above what the caller may grant is held to the caller's hard limit,
    stricter already, and the command runs under it."""
    code = textwrap.dedent(
        f"""
        import resource
        from assay.sandbox import BwrapOptions, BwrapSandbox, Limits
        resource.setrlimit(resource.RLIMIT_FSIZE, (8 * 1024 * 1024, 8 * 1024 * 1024))
        sandbox = BwrapSandbox(BwrapOptions(limits=Limits(file_size_bytes=1024**3)))
        with sandbox.workspace({str(source)!r}) as ws:
            result = sandbox.run(ws, ["sh", "-c", "ulimit -f; ulimit -H -f"], timeout=30)
        print(result.exit_code, result.stdout.text.split(), result.stderr.text)
        """
    )
    done = subprocess.run(
        [PYTHON, "-c", code], check=False, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("]")[0] == "0 ['16384', '16384'", done.stdout  # 512-byte blocks


def test_a_bound_directory_swapped_while_a_fresh_sandbox_is_built_is_not_what_it_shows(
    fake_home: Path, tmp_path: Path
) -> None:
    """A run in place can write where another's toolchain lies, and swap that directory
    for a link to one no sandbox shows, and back, in a tight loop: bubblewrap, were it
    handed the path, would resolve it as it mounts it, and might mount the link's target.
    Each sandbox of a workspace must show what its root was built from, whether its
    command takes the sandbox built ahead or starts one of its own; bubblewrap, which
    checks a mount made from a descriptor, may refuse to start instead (caught mid-swap),
    which is no run of the command."""
    tools, secret, tool = tools_and_secret(tmp_path)
    place = tmp_path / "place"
    place.mkdir()
    results: list[ProcessResult] = []
    for _ in range(20):
        sandbox = BwrapSandbox(BwrapOptions(toolchain_paths=(str(tool),)))
        ws = sandbox.provision_in_place(place)
        try:
            with swapping(tools, secret):
                for _ in range(2):  # the sandbox built ahead, then a launch of its own
                    results.append(sandbox.run(ws, ["cat", str(tools / "marker")], timeout=30))
        finally:
            sandbox.cleanup(ws)
    leaked = sum("secret" in result.stdout.text for result in results)
    assert leaked == 0, f"{leaked} of {len(results)} runs read the link's target"
    ran = [result for result in results if result.started]
    assert ran, "no run started"
    assert {(result.exit_code, result.stdout.text) for result in ran} == {(0, "the tools\n")}


def test_a_command_inherits_none_of_the_descriptors_its_mounts_were_made_from(
    sandbox: BwrapSandbox, workspace: Workspace
) -> None:
    """Each bind's source reaches bubblewrap as a descriptor, which it closes once it has
    mounted it: one left open would be a way out of the sandbox (`openat(fd, "..")`), in
    the sandbox built ahead as in one started for the command."""
    listing = [PYTHON, "-c", "import os; print(sorted(os.listdir('/proc/self/fd')))"]
    for _ in range(2):  # the sandbox built ahead, then a launch of its own
        result = sandbox.run(workspace, listing, timeout=30)
        assert result.exit_code == 0, result.stderr.text
        assert result.stdout.text == "['0', '1', '2', '3']\n"

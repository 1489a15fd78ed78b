"""A sandbox built before its command comes (`assay.sandbox.standby`): with real
bubblewrap, real cgroups and real processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from assay.process import InvalidRun, run_process
from assay.sandbox import BwrapOptions, BwrapSandbox, bwrap, nofollow, standby
from tests.cli import ASSAY, assay_env
from tests.processes import gone
from tests.swapping import swapping, tools_and_secret
from tests.test_warm_server import servers_lock

PYTHON = sys.executable


def _sandbox() -> BwrapSandbox:
    return BwrapSandbox(BwrapOptions(toolchain_paths=(PYTHON,)))


def _hint_of_a_run_in(
    directory: Path, made: Callable[[], BwrapSandbox] = _sandbox
) -> dict[str, object]:
    """What a run in place in `directory`, in a sandbox `made`, leaves for the next one
    (`standby_hint`)."""
    sandbox = made()
    ws = sandbox.provision_in_place(directory)
    try:
        assert sandbox.run(ws, ["true"], timeout=30).exit_code == 0
    finally:
        sandbox.cleanup(ws)
    hint = bwrap.standby_hint()
    assert hint is not None
    return hint


@pytest.fixture
def ahead(fake_home: Path, tmp_path: Path) -> Iterator[Path]:
    """A directory a run in place ran in, and a standby built for the next run there."""
    place = tmp_path / "place"
    place.mkdir()
    hint = _hint_of_a_run_in(place)
    bwrap.start_ahead()
    bwrap.stand_by(hint)
    try:
        (made,) = bwrap._ahead
        assert made.standby is not None, "no standby was built"
        yield place
    finally:
        bwrap.drop_ahead()


def _standby_pid() -> int:
    (made,) = bwrap._ahead
    assert made.standby is not None and made.standby.launch.started.proc is not None
    return made.standby.launch.started.proc.pid


def test_the_next_run_in_the_same_place_is_the_standby_and_gets_its_words_whole(
    ahead: Path,
) -> None:
    """The command becomes the standby's process, in the directory, with its words and
    variables as a fresh start gives them (spaces, quotes, `$`, newlines, `=`, empty),
    and none of the shell's own carriers."""
    pid = _standby_pid()
    sandbox = _sandbox()
    ws = sandbox.provision_in_place(ahead)
    try:
        words = ["two words", "$HOME", "a\nb", "x=y", "'", "", "--", "it's"]
        script = (
            "import json, os, sys; open('made', 'w').write('here');"
            "print(json.dumps([sys.argv[1:], dict(os.environ), os.getcwd()]))"
        )
        overlay = {"PLAIN": "v a l", "QUOTED": "a'b\"c\nd", "_ASSAY_DONE": "0"}
        result = sandbox.run(ws, [PYTHON, "-c", script, *words], env=overlay, timeout=30)
        assert result.exit_code == 0, result.stderr.text
        assert gone(pid), "the standby was not the command's process"
    finally:
        sandbox.cleanup(ws)
    argv, environ, cwd = json.loads(result.stdout.text)
    assert argv == words
    assert (environ["PLAIN"], environ["QUOTED"]) == ("v a l", "a'b\"c\nd")
    assert not [name for name in environ if name.startswith("_ASSAY_")]
    assert cwd == str(ahead)
    assert (ahead / "made").read_text() == "here"


def test_a_directory_made_again_at_the_same_path_is_not_shown_as_it_was(ahead: Path) -> None:
    """The standby mounted the directory that was there; one removed and made again at
    the same path since is another, and the command must see it: the standby is
    discarded and the command starts afresh."""
    pid = _standby_pid()
    shutil.rmtree(ahead)
    ahead.mkdir()
    (ahead / "new").write_text("the new tree\n")
    sandbox = _sandbox()
    ws = sandbox.provision_in_place(ahead)
    try:
        result = sandbox.run(ws, ["cat", "new"], timeout=30)
    finally:
        sandbox.cleanup(ws)
    assert result.exit_code == 0, result.stderr.text
    assert result.stdout.text == "the new tree\n"
    assert gone(pid), "the standby outlived the workspace it did not fit"


def test_a_run_elsewhere_starts_afresh_and_the_standby_is_discarded(
    ahead: Path, tmp_path: Path
) -> None:
    pid = _standby_pid()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    sandbox = _sandbox()
    ws = sandbox.provision_in_place(elsewhere)
    try:
        result = sandbox.run(ws, ["sh", "-c", "pwd; touch made"], timeout=30)
        assert result.exit_code == 0, result.stderr.text
        assert gone(pid), "a standby that fitted no command was left waiting"
    finally:
        sandbox.cleanup(ws)
    assert result.stdout.text == f"{elsewhere}\n"
    assert (elsewhere / "made").exists()
    assert not (ahead / "made").exists()


def test_a_script_cut_short_runs_nothing(ahead: Path) -> None:
    """The script is one brace group: cut anywhere, it is a syntax error, not a command."""
    marker = ahead / "ran"
    script = standby.command_script(str(ahead), {"A": "1"}, ["touch", str(marker)])
    (made,) = bwrap._ahead
    waiting = made.standby
    assert waiting is not None and waiting.script_fd is not None
    os.write(waiting.script_fd, script[: script.index(b"touch") + 5])
    os.close(waiting.script_fd)
    waiting.script_fd = None
    started = waiting.launch.started
    result = run_process(started.argv, cwd=started.cwd, timeout=30, started=started)
    assert result.exit_code != 0
    assert "Syntax error" in result.stderr.text, result.stderr.text
    assert not marker.exists()


def test_a_standby_no_script_reaches_runs_nothing_and_says_so(ahead: Path) -> None:
    (made,) = bwrap._ahead
    waiting = made.standby
    assert waiting is not None and waiting.script_fd is not None
    os.close(waiting.script_fd)
    waiting.script_fd = None
    started = waiting.launch.started
    result = run_process(started.argv, cwd=started.cwd, timeout=30, started=started)
    assert result.exit_code == 125
    assert "no command arrived" in result.stderr.text


def test_a_word_holding_a_nul_byte_is_refused_and_the_standby_discarded(ahead: Path) -> None:
    pid = _standby_pid()
    sandbox = _sandbox()
    ws = sandbox.provision_in_place(ahead)
    try:
        with pytest.raises(InvalidRun, match="NUL"):
            sandbox.run(ws, ["echo", "a\0b"], timeout=30)
    finally:
        sandbox.cleanup(ws)
    assert gone(pid)


def test_a_directory_the_command_cannot_enter_is_the_sandboxs_refusal(ahead: Path) -> None:
    """`cd` failing in the standby's shell is a start that failed, never the command's
    own exit code."""
    sandbox = _sandbox()
    ws = sandbox.provision_in_place(ahead)
    try:
        assert bwrap._ahead == [], "the workspace did not take what was made ahead"
        waiting = standby.STANDBYS.waiting(ws.run_id)
        assert waiting is not None, "the workspace did not take the standby"
        started = waiting.command(str(ahead / "missing"), {}, ["true"])
        raw = run_process(started.argv, cwd=str(ahead), timeout=30, started=started)
    finally:
        sandbox.cleanup(ws)
    result = bwrap._interpret(raw)
    assert result.exit_code is None and result.start_error is not None, raw.stderr.text
    assert "cannot enter" in result.start_error


@pytest.fixture
def _beside_other_servers() -> Iterator[None]:
    """For a test that starts an `assay server` (`servers_lock`)."""
    with servers_lock():
        yield


@pytest.mark.usefixtures("_beside_other_servers")
def test_a_warm_runs_sandbox_is_built_before_its_client_starts(
    fake_home: Path, tmp_path: Path
) -> None:
    """Through `assay server`: after a run in a directory, the next run there finds its
    sandbox built. Its init (pid 1 inside) started before the client did; the first run's,
    built once its command came, after; and so did the run's after the directory was
    removed and made again at the same path (a standby of the old one does not fit)."""
    state, work = tmp_path / "state", tmp_path / "work"
    work.mkdir()
    env = assay_env(ASSAY_CACHE_DIR=str(state))
    env.pop("ASSAY_NO_SERVER", None)
    subprocess.run([ASSAY, "server", "start"], env=env, cwd=work, check=True, capture_output=True)
    try:
        time.sleep(0.6)  # the waiting worker makes its launch ahead
        first = _init_started_before_client(env, work)
        time.sleep(1.0)  # the worker after it builds the sandbox the first run had
        second = _init_started_before_client(env, work)
        time.sleep(1.0)  # built again, for the same directory...
        shutil.rmtree(work)  # ...which is then made anew at its path: not the one it shows
        work.mkdir()
        replaced = _init_started_before_client(env, work)
        status = subprocess.run(
            [ASSAY, "server", "status"],
            env=env,
            cwd=work,
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        subprocess.run(
            [ASSAY, "server", "stop"], env=env, cwd=work, capture_output=True, check=False
        )
    assert " 3 served" in status.stdout, status.stdout
    assert (first, second, replaced) == (False, True, False)


def _init_started_before_client(env: dict[str, str], work: Path) -> bool:
    """Run `assay run --sandbox bwrap` in `work`, its command printing when the sandbox's
    init started (clock ticks since boot); whether that was before the client started."""
    argv = [ASSAY, "run", "--sandbox", "bwrap", "--kind", "build", "--json", "--"]
    command = ["sh", "-c", "cut -d' ' -f22 /proc/1/stat"]
    client = subprocess.Popen([*argv, *command], env=env, cwd=work, stdout=subprocess.PIPE)
    client_start = int(Path(f"/proc/{client.pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    out, _ = client.communicate(timeout=60)
    assert client.returncode == 0, out
    init_start = int(json.loads(out)["stdout"]["text"])
    return init_start < client_start


def _mounted_in_standby(point: str, within: float = 15) -> None:
    """Wait until the standby's sandbox shows a mount at `point` (it is built)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        pending, seen = [_standby_pid()], set()
        while pending:
            pid = pending.pop()
            seen.add(pid)
            try:
                children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
                if f" {point} " in Path(f"/proc/{pid}/mountinfo").read_text():
                    return
            except OSError:
                continue
            pending += [int(child) for child in children if int(child) not in seen]
        time.sleep(0.02)
    raise AssertionError(f"the standby's sandbox never showed {point}")


def _renamed_over(path: Path) -> None:
    written = path.with_name(".written")
    written.write_text("token = 'the new secret'\n")
    os.rename(written, path)


def _removed_and_written_again(path: Path) -> None:
    path.unlink()
    path.write_text("token = 'the new secret'\n")


def _linked_again(path: Path) -> None:
    kept = path.with_name(".kept")
    os.link(path, kept)
    path.unlink()
    os.link(kept, path)
    kept.unlink()


@pytest.mark.parametrize("replace", [_renamed_over, _removed_and_written_again, _linked_again])
def test_a_credential_beside_a_toolchain_replaced_since_is_masked_as_a_fresh_start_masks_it(
    fake_home: Path, tmp_path: Path, replace: Callable[[Path], None]
) -> None:
    """The standby masked the credential file that was there; one put at its path since
    (a token written anew, as tools refresh them) is no longer under that mask, and a
    fresh start would mask it: the command must not read it."""
    cargo = fake_home / ".cargo"
    cargo.mkdir()
    secret = cargo / "credentials.toml"
    secret.write_text("token = 'the old secret'\n")
    place = tmp_path / "place"
    place.mkdir()
    hint = _hint_of_a_run_in(place)
    bwrap.start_ahead()
    try:
        bwrap.stand_by(hint)
        _mounted_in_standby(str(secret))
        replace(secret)
        sandbox = _sandbox()
        ws = sandbox.provision_in_place(place)
        try:
            result = sandbox.run(ws, ["cat", str(secret)], timeout=30)
        finally:
            sandbox.cleanup(ws)
    finally:
        bwrap.drop_ahead()
    assert "secret" not in result.stdout.text
    assert result.exit_code != 0, "the credential was readable"


def test_the_command_in_a_standby_gets_the_variables_a_fresh_start_gives_it(ahead: Path) -> None:
    """Entering the directory is the standby's own doing, and leaves no trace in the
    command's environment (a shell's `cd` sets OLDPWD): the same variables as when its
    sandbox is built for it."""
    pid = _standby_pid()
    script = "import json, os; print(json.dumps(sorted(os.environ)))"
    seen = []
    for _ in range(2):  # in the standby, then afresh
        sandbox = _sandbox()
        ws = sandbox.provision_in_place(ahead)
        try:
            result = sandbox.run(ws, [PYTHON, "-c", script], timeout=30)
        finally:
            sandbox.cleanup(ws)
        assert result.exit_code == 0, result.stderr.text
        seen.append(json.loads(result.stdout.text))
        assert gone(pid), "the first run was not the standby's"
    in_standby, fresh = seen
    assert in_standby == fresh


@pytest.mark.usefixtures("_beside_other_servers")
def test_warm_runs_leave_no_scratch_directory_behind(fake_home: Path, tmp_path: Path) -> None:
    """A worker's own ending (the standby, the cgroup and report directory made ahead and
    not taken) is not cut short when its client leaves with its answer: nothing of it is
    left for a later run's sweep."""
    from assay.scratch import owner_gone_by_name, scratch_places

    def left_by_the_dead() -> set[Path]:
        return {
            entry
            for place in scratch_places()
            for entry in place.glob("assay-*")
            if owner_gone_by_name(entry.name)
        }

    before = left_by_the_dead()
    work = tmp_path / "work"
    work.mkdir()
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"))
    env.pop("ASSAY_NO_SERVER", None)
    subprocess.run([ASSAY, "server", "start"], env=env, cwd=work, check=True, capture_output=True)
    try:
        for sandbox in ("bwrap", "none") * 6:
            time.sleep(0.6)  # the waiting worker builds what the next run would take
            done = subprocess.run(
                [ASSAY, "run", "--sandbox", sandbox, "--kind", "build", "--", "true"],
                env=env,
                cwd=work,
                capture_output=True,
                check=False,
            )
            assert done.returncode == 0, done.stderr
    finally:
        subprocess.run(
            [ASSAY, "server", "stop"], env=env, cwd=work, capture_output=True, check=False
        )
    time.sleep(1.0)  # the last workers end
    assert left_by_the_dead() - before == set()


def test_a_bound_directory_swapped_while_the_standby_is_built_is_not_what_it_shows(
    fake_home: Path, tmp_path: Path
) -> None:
    """A run in place can write where another's toolchain lies (a project's own tools
    beside the subdirectory another run is in), and swap that directory for a link to one
    it cannot see while a standby is built, and back: each path is then what it was when
    the standby pinned it, but bubblewrap, which resolves a path as it mounts it, may have
    mounted the link's target. The standby must show only what it pinned."""
    tools, secret, tool = tools_and_secret(tmp_path)
    place = tmp_path / "place"
    place.mkdir()

    def sandbox() -> BwrapSandbox:
        return BwrapSandbox(BwrapOptions(toolchain_paths=(str(tool),)))

    hint = _hint_of_a_run_in(place, sandbox)
    assert str(tools) in hint["late"]  # type: ignore[operator]
    seen = []
    for _ in range(30):
        bwrap.start_ahead()
        try:
            with swapping(tools, secret):
                bwrap.stand_by(hint)
                time.sleep(0.05)  # bubblewrap has mounted what it mounts
            used = sandbox()
            ws = used.provision_in_place(place)
            try:
                result = used.run(ws, ["cat", str(tools / "marker")], timeout=30)
            finally:
                used.cleanup(ws)
        finally:
            bwrap.drop_ahead()
        seen.append(result.stdout.text)
        assert "secret" not in result.stdout.text, f"attempt {len(seen)} read the link's target"
    assert set(seen) == {"the tools\n"}


def test_a_bind_is_found_by_its_place_among_options_not_by_a_word_that_reads_like_one(
    tmp_path: Path,
) -> None:
    """A link's target may be any text, `--ro-bind` too: only a bind in an option's place
    is handed over as its descriptor; a late part with an option unknown here builds no
    standby."""
    source = tmp_path / "tools"
    source.mkdir()
    late = ["--symlink", "--ro-bind", "/x", "--ro-bind", str(source), "/t", "--chdir", "/"]
    mounts, pins = standby.pinned(late, nofollow.trusted([]))
    try:
        handed = standby.by_pins(late, mounts, pins)
        assert handed is not None
        fed, passed = handed
        try:
            (fd,) = passed
            assert fed == ["--symlink", "--ro-bind", "/x", "--ro-bind-fd", str(fd), "/t"] + [
                "--chdir",
                "/",
            ]
        finally:
            for held in passed:
                os.close(held)
        assert standby.by_pins(["--overlay-src", str(source)], mounts, pins) is None
        assert standby.by_pins(["--ro-bind", str(source)], mounts, pins) is None
    finally:
        for held in pins:
            os.close(held)

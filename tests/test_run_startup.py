"""`assay run -- CMD` loads what running one command needs, and nothing of the rest of assay.

Scripts wrap every command in `assay run`, so whatever it imports is paid on each. Each
test runs the real `python -X importtime -m assay run ...` in a subprocess and checks the
modules it loaded; the other tests of `run` check that it still behaves as before.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli import PYTHON, assay_env

#: What a well-formed `assay run` has no use for, whatever its sandbox: the option parser
#: of the other commands, the commands themselves, and what only verify, plan and eval need.
NEVER_FOR_RUN = (
    "click",
    "assay.cli_commands",
    "assay.eval",
    "assay.pipeline",
    "assay.plan",
    "assay.discovery",
    "assay.cache",
    "assay.early_key",
    "assay.formats",
    "assay.canaries",
    "assay.tamper",
    "assay.protect",
    "assay.install",
    "yaml",
    "rich",
    "tomllib",
)


def _run_importing(*args: str, cwd: Path) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """`python -X importtime -m assay run ARGS` in `cwd`: what it did, every module it loaded."""
    done = subprocess.run(
        [PYTHON, "-X", "importtime", "-m", "assay", "run", *args],
        capture_output=True,
        text=True,
        env=assay_env(),
        cwd=cwd,
        timeout=120,
        check=False,
    )
    modules = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }
    return done, modules


def _loaded(modules: set[str], top: str) -> set[str]:
    return {m for m in modules if m == top or m.startswith(top + ".")}


@pytest.mark.parametrize("sandbox", ["none", "local", "bwrap"])
def test_run_loads_neither_click_nor_verify_machinery(sandbox: str, tmp_path: Path) -> None:
    done, modules = _run_importing(
        "--sandbox", sandbox, "--kind", "build", "--", "true", cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("pass "), done.stdout
    for heavy in NEVER_FOR_RUN:
        assert not _loaded(modules, heavy), (heavy, sorted(_loaded(modules, heavy)))
    assert "assay.check_verifiers" in modules  # the check above saw the run's own imports


def test_a_bare_run_loads_no_thread_pool_and_no_bubblewrap(tmp_path: Path) -> None:
    done, modules = _run_importing(
        "--sandbox", "none", "--kind", "build", "--", "true", cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert not modules & {"concurrent.futures", "logging"}
    for backend in ("bwrap", "seccomp", "cgroup"):
        assert f"assay.sandbox.{backend}" not in modules


def test_a_small_tree_is_copied_without_a_thread_pool(tmp_path: Path) -> None:
    """`--sandbox local` runs in a copy: a small project's few files are copied in line."""
    (tmp_path / "README").write_text("a small project\n")
    done, modules = _run_importing(
        "--sandbox", "local", "--kind", "build", "--", "cat", "README", cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "assay.sandbox.provision" in modules  # the copy was made
    assert not modules & {"concurrent.futures", "logging"}


#: The tool declarations (`assay.tools.spec` and each ecosystem's module): a command no
#: tool declares is identified by the digest of its file and needs none of them.
TOOL_DECLARATIONS = (
    "assay.tools.spec",
    "assay.tools.python",
    "assay.tools.node",
    "assay.tools.go",
    "assay.tools.rust",
    "assay.tools.java",
    "assay.tools.generic",
)


@pytest.mark.parametrize("sandbox", ["none", "local", "bwrap"])
def test_a_command_no_tool_declares_loads_no_declaration(sandbox: str, tmp_path: Path) -> None:
    done, modules = _run_importing(
        "--sandbox", sandbox, "--kind", "build", "--", "true", cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "assay.tools" in modules  # the index is read: `true` is no declared tool
    assert not modules & set(TOOL_DECLARATIONS), sorted(modules & set(TOOL_DECLARATIONS))
    assert not modules & {"uuid", "platform"}  # a run id is random bytes, not a uuid


def test_a_declared_tool_loads_its_own_ecosystem_only(tmp_path: Path) -> None:
    done, modules = _run_importing(
        "--sandbox", "none", "--kind", "build", "--", "make", "--version", cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "assay.tools.generic" in modules  # make is declared there, and identified
    others = set(TOOL_DECLARATIONS) - {"assay.tools.spec", "assay.tools.generic"}
    assert not modules & others, sorted(modules & others)


def test_a_live_runs_scratch_of_a_sandbox_uid_loads_no_sandbox_identity(tmp_path: Path) -> None:
    """The sweep asks whose a directory is only once its owner is gone: a run still going
    (this test's own process) costs no look at the sandbox's uids."""
    import os

    from assay.sandbox.identity import SANDBOX_ID_BASE

    if os.geteuid() != 0:
        pytest.skip("only root hands scratch directories to a sandbox's uid")
    places = tmp_path / "places"
    places.mkdir()
    with open("/proc/self/stat", "rb") as f:
        start = f.read().rsplit(b")", 1)[1].split()[19].decode()
    ns = os.stat("/proc/self/ns/pid").st_ino
    live = places / f"assay-reports-{os.getpid()}.{start}.{ns}-abcdefgh"
    live.mkdir()
    os.chown(live, SANDBOX_ID_BASE, SANDBOX_ID_BASE)
    done = subprocess.run(
        [PYTHON, "-X", "importtime", "-m", "assay", "run", "--sandbox=none", "--kind=build", "--", "true"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False,
        env=assay_env(ASSAY_WORKSPACE_DIR=str(places), TMPDIR=str(places), XDG_RUNTIME_DIR=""),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert live.is_dir()  # its owner is alive: never swept
    assert "assay.sandbox.identity" not in done.stderr


def test_run_json_the_short_way_prints_the_evidence(tmp_path: Path) -> None:
    done, modules = _run_importing(
        "--json", "--timeout=30", "--cwd", str(tmp_path), "--sandbox=none", "--kind", "build",
        "--", "sh", "-c", "echo hello",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not _loaded(modules, "click")
    evidence = json.loads(done.stdout)
    assert evidence["verdict"] == "pass"
    assert evidence["argv"][1:] == ["-c", "echo hello"]
    assert evidence["stdout"]["text"] == "hello\n"


@pytest.mark.parametrize(
    ("args", "exit_code"),
    [
        (["--help"], 0),
        (["--verifier", "no_such_module:verifier"], 1),  # runs, and fails: no such module
        (["--timeout", "-1", "--", "true"], 2),
        (["--kind", "nonsense", "--", "true"], 2),
        (["--"], 2),
        (["--frobnicate", "--", "true"], 4),  # click hands it to the command: not installed
    ],
    ids=["help", "verifier", "negative-timeout", "bad-kind", "no-command", "unknown-option"],
)
def test_what_the_short_way_does_not_take_click_still_answers(
    args: list[str], exit_code: int, tmp_path: Path
) -> None:
    """Help, the verifier plugins, usage errors and click's own readings stay click's."""
    done, modules = _run_importing(*args, cwd=tmp_path)
    assert _loaded(modules, "click")
    assert "Traceback" not in done.stderr
    assert done.returncode == exit_code, done.stdout + done.stderr
    if exit_code == 2:
        assert "Error" in done.stderr


def test_a_cwd_that_is_a_file_is_clicks_usage_error(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("")
    done, _ = _run_importing("--cwd", str(afile), "--", "true", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "is a file" in done.stderr


#: `assay run` through click, as every run went before the short way existed.
THROUGH_CLICK = (
    "import sys\nfrom assay.cli_commands import run_cli\nsys.exit(run_cli(sys.argv[1:]))\n"
)


@pytest.mark.parametrize(
    "args",
    [
        ["--sandbox", "none", "--kind", "build", "--", "sh", "-c", "echo out; echo err >&2"],
        [
            "--sandbox",
            "none",
            "--kind",
            "lint",
            "--",
            "sh",
            "-c",
            "echo 'bad \x1b[31mline'; exit 1",
        ],
        ["--sandbox", "none", "--", "assay-no-such-tool-xyz"],
        ["--json", "--sandbox", "none", "--kind", "build", "--", "sh", "-c", "exit 3"],
    ],
    ids=["pass", "fail-with-escapes", "missing-tool", "json"],
)
def test_the_short_way_prints_and_exits_as_click_did(args: list[str], tmp_path: Path) -> None:
    """Both ways print through `cli_run.print_run`: this holds the parsing and the writing."""
    short = subprocess.run(
        [PYTHON, "-m", "assay", "run", *args],
        capture_output=True, text=True, env=assay_env(), cwd=tmp_path, timeout=60, check=False,
    )  # fmt: skip
    clicked = subprocess.run(
        [PYTHON, "-c", THROUGH_CLICK, "run", *args],
        capture_output=True, text=True, env=assay_env(), cwd=tmp_path, timeout=60, check=False,
    )  # fmt: skip
    assert short.returncode == clicked.returncode
    assert _timeless(short.stdout) == _timeless(clicked.stdout)
    assert short.stderr == clicked.stderr
    assert "\x1b" not in short.stdout  # what the command printed is shown, never obeyed


def _timeless(output: str) -> str:
    """`output` with what differs between two runs of the same command (its costs) masked."""
    import re

    output = re.sub(r"\d+\.\d+s\b", "N.NNs", output)
    return re.sub(r'"(duration_s|cpu_s|peak_rss_bytes)": [^,\n]+', r'"\1": N', output)

"""A sandbox's root built while a directory it shows is swapped for a link and back: with
real bubblewrap and a real swapping process (`tests.swapping`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assay.sandbox import BwrapOptions, BwrapSandbox, SandboxError, nofollow, standby
from tests.cli import assay
from tests.swapping import swapping, tools_and_secret

ATTEMPTS = 40


def test_a_directory_swapped_while_the_root_is_built_never_shows_the_links_target(
    fake_home: Path, tmp_path: Path
) -> None:
    """A run in place can write where another's toolchain lies, and swap that directory
    for a link to one no sandbox shows, and back, while another run's root is being built:
    the host must neither choose the link's target to show (by resolving the tool's path
    through it), nor mount it where the directory was, nor scan one directory for
    credentials and mount the other (a credential left unmasked). A root caught mid-swap
    may be refused, or show the toolchain without that directory: never the target."""
    tools, secret, tool = tools_and_secret(tmp_path)
    (tools / ".netrc").write_text("machine m login l password hunter2\n")
    place = tmp_path / "place"
    place.mkdir()
    read = ["sh", "-c", f'cat "{tools}/marker" "{secret}/marker" "{tools}/.netrc" 2>&1; true']
    leaks: list[str] = []
    outputs: set[str] = set()
    with swapping(tools, secret):
        for _ in range(ATTEMPTS):
            sandbox = BwrapSandbox(BwrapOptions(toolchain_paths=(str(tool),)))
            try:
                ws = sandbox.provision_in_place(place)
            except SandboxError:
                continue  # refused as it was built
            try:
                result = sandbox.run(ws, read, timeout=30)
            except SandboxError:
                continue
            finally:
                sandbox.cleanup(ws)
            outputs.add(result.stdout.text)
            if "the secret" in result.stdout.text or "hunter2" in result.stdout.text:
                leaks.append(result.stdout.text)
    assert not leaks, f"{len(leaks)} of {ATTEMPTS} sandboxes read what none may: {leaks[:3]}"
    assert outputs, "no sandbox ran"


def test_a_toolchain_directory_that_is_a_link_a_project_could_make_shows_nothing(
    fake_home: Path, tmp_path: Path
) -> None:
    """The same link left in place: the host shows neither the link's target (chosen by
    resolving the tool's path) nor anything at the link's path."""
    tools, secret, _ = tools_and_secret(tmp_path)
    (secret / "bin" / "tool").write_text("#!/bin/sh\n")
    tools.rename(tmp_path / "tools.real")
    tools.symlink_to(secret)
    place = tmp_path / "place"
    place.mkdir()
    sandbox = BwrapSandbox(BwrapOptions(toolchain_paths=(str(tools / "bin" / "tool"),)))
    ws = sandbox.provision_in_place(place)
    try:
        read = ["sh", "-c", f'cat "{tools}/marker" "{secret}/marker" 2>&1; true']
        result = sandbox.run(ws, read, timeout=30)
    finally:
        sandbox.cleanup(ws)
    assert result.exit_code == 0, result.stderr.text
    assert "the secret" not in result.stdout.text


def test_a_standby_pins_no_path_through_a_link_a_project_could_make(tmp_path: Path) -> None:
    """A path a standby names that leads through such a link names nothing to it: it pins
    neither the link's target nor the link."""
    tools, secret, _ = tools_and_secret(tmp_path)
    aside = tmp_path / "tools.real"
    tools.rename(aside)
    tools.symlink_to(secret)
    late = ["--ro-bind", str(tools), "/t", "--ro-bind", str(aside), "/a", "--chdir", "/"]
    mounts, pins = standby.pinned(late, nofollow.trusted(["/usr"]))
    try:
        found = {identity[0]: identity for identity in mounts}
        assert found[str(tools)] == (str(tools),)
        assert len(found[str(aside)]) == 3  # the directory itself is pinned
    finally:
        standby.close_all(pins)
    with pytest.raises(nofollow.PlantedLink):
        standby.pinned_sources(late, nofollow.trusted(["/usr"]))


def test_a_toolchain_reached_through_trusted_links_is_still_shown(
    fake_home: Path, tmp_path: Path
) -> None:
    """Links no project can write keep working: a tool reached through merged-/usr's
    `/bin`, and a home's toolchain directory that is a link to where it is installed."""
    cargo_bin = fake_home / ".cargo" / "bin"
    real = fake_home / ".cargo" / "toolchains" / "x" / "bin"
    real.mkdir(parents=True)
    (real / "tool").write_text("#!/bin/sh\necho from the toolchain\n")
    (real / "tool").chmod(0o755)
    cargo_bin.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(real, cargo_bin)
    sandbox = BwrapSandbox(BwrapOptions(toolchain_paths=(str(cargo_bin / "tool"), "/bin/sh")))
    with sandbox.workspace(_src(tmp_path)) as ws:
        result = sandbox.run(ws, [str(cargo_bin / "tool")], timeout=30)
    assert (result.exit_code, result.stdout.text) == (0, "from the toolchain\n"), result.stderr.text


def _src(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "x.txt").write_text("x\n")
    return src


@pytest.mark.slow
def test_an_environment_linked_from_the_tree_is_not_shown_and_the_verdict_says_why(
    tmp_path: Path,
) -> None:
    """A repository's `.venv` that is a link to an environment elsewhere names a host
    directory the sandbox would show: it is not followed. The tools in it are then not
    there, which is UNVERIFIED, and the output names the link and what to do."""
    elsewhere = tmp_path / "elsewhere"
    base_python = str(Path(sys.base_prefix) / "bin" / "python3")
    subprocess.run(
        [base_python, "-m", "venv", "--without-pip", "--system-site-packages", str(elsewhere)],
        check=True,
    )
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "pyproject.toml").write_text(
        '[project]\nname = "lv"\nversion = "0.1"\n[tool.pytest.ini_options]\npythonpath = ["."]\n'
    )
    (repo / "lv.py").write_text("def f():\n    return 1\n")
    (repo / "tests" / "test_lv.py").write_text(
        "from lv import f\n\n\ndef test_f():\n    assert f() == 1\n"
    )
    (repo / ".venv").symlink_to(elsewhere)
    done = assay(
        "verify",
        "--json",
        "--no-cache",
        str(repo),
        timeout=300,
        env={**os.environ, "ASSAY_CACHE_DIR": str(tmp_path / "cache")},
    )
    report = json.loads(done.stdout)
    assert report["status"] == "UNVERIFIED", report["note"]
    assert f".venv is a link, to {str(elsewhere)!r}" in done.stdout

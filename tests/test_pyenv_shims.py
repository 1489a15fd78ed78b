"""A pyenv-style shim is resolved to the interpreter it would run, without running it.

Every version probe through a shim costs dozens of shell executions, and a shim cannot be
fingerprinted, so before this every verify probed again. The fake pyenv here is laid out
as pyenv lays itself out: `shims/python3` is pyenv's own shim script, `libexec/pyenv`
picks the version as pyenv does (PYENV_VERSION, `.python-version` upwards, the global
`version` file) and logs every execution to a file."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

from assay.pipeline import VerifyOptions, verify
from assay.probe import probe

#: pyenv's shim, as `pyenv rehash` writes it.
SHIM = """#!/usr/bin/env bash
set -e
[ -n "$PYENV_DEBUG" ] && set -x

program="${{0##*/}}"

export PYENV_ROOT="{root}"
SHIM_PATH=${{0%/*}}
if [[ $SHIM_PATH != "{root}/shims" ]]; then
  export _PYENV_SHIM_PATH="$SHIM_PATH"
fi
exec "{root}/libexec/pyenv" exec "$program" "$@"
"""

#: `pyenv exec PROGRAM ARGS...`: the selection pyenv makes, and a line in the log per run.
PYENV = """#!/bin/sh
shift  # exec
program="$1"; shift
echo "$program $*" >> "{log}"
version="$PYENV_VERSION"
if [ -z "$version" ]; then
  dir="$PWD"
  while [ -n "$dir" ] && [ ! -f "$dir/.python-version" ]; do dir="${{dir%/*}}"; done
  if [ -f "$dir/.python-version" ]; then file="$dir/.python-version"; else file="{root}/version"; fi
  version=$(head -n 1 "$file")
fi
exec "{root}/versions/$version/bin/$program" "$@"
"""


@pytest.fixture
def fake_pyenv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A pyenv root with one version (this test run's own environment) and its shim first
    on PATH; returns the root and the log of the shim's executions."""
    root = tmp_path / "pyenv"
    log = tmp_path / "shim.log"
    (root / "shims").mkdir(parents=True)
    (root / "libexec").mkdir()
    (root / "versions").mkdir()
    # A version is a Python installation: this suite's virtualenv (it has pytest).
    (root / "versions" / "3.99.0").symlink_to(Path(sys.prefix))
    (root / "version").write_text("3.99.0\n")
    shim = root / "shims" / "python3"
    shim.write_text(SHIM.format(root=root))
    launcher = root / "libexec" / "pyenv"
    launcher.write_text(PYENV.format(root=root, log=log))
    for script in (shim, launcher):
        script.chmod(0o755)
    log.write_text("")
    monkeypatch.setenv("PATH", f"{root / 'shims'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("PYENV_VERSION", raising=False)
    monkeypatch.setenv("PYENV_ROOT", str(root))
    return root, log


def make_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / ".python-version").write_text("3.99.0\n")
    (repo / "setup.py").write_text("")
    (repo / "tests" / "test_it.py").write_text(
        textwrap.dedent("""
            def test_it():
                assert 1 + 1 == 2
        """)
    )
    return repo


def executions(log: Path) -> list[str]:
    return log.read_text().splitlines()


def test_a_second_verify_runs_the_shim_only_for_its_checks(
    fake_pyenv: tuple[Path, Path], tmp_path: Path
) -> None:
    _, log = fake_pyenv
    repo = make_repo(tmp_path)
    first = verify(repo, VerifyOptions(sandbox="none", use_cache=False))
    assert first.status.value == "VERIFIED", first.to_dict()
    ran_first = executions(log)
    assert any("pytest" in line and "--version" not in line for line in ran_first), ran_first
    log.write_text("")
    second = verify(repo, VerifyOptions(sandbox="none", use_cache=False))
    assert second.status.value == "VERIFIED"
    probes = [line for line in executions(log) if "--version" in line]
    assert not probes, f"the shim ran for version probes: {probes}"
    assert executions(log), "the checks themselves still run through the shim"


def test_the_checker_names_the_interpreter_the_shim_selects(
    fake_pyenv: tuple[Path, Path], tmp_path: Path
) -> None:
    root, log = fake_pyenv
    repo = make_repo(tmp_path)
    checker = probe("pytest", path=str(root / "shims" / "python3"), module="pytest", cwd=str(repo))
    assert checker.path == str(root / "versions" / "3.99.0" / "bin" / "python3")
    assert executions(log) == []


def test_pyenv_version_outranks_the_version_file(
    fake_pyenv: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A version pyenv does not have: the shim is not resolved (and would fail to run).
    root, _ = fake_pyenv
    repo = make_repo(tmp_path)
    monkeypatch.setenv("PYENV_VERSION", "3.98.0")
    from assay.pyenv_shim import resolve_shim

    assert resolve_shim(str(root / "shims" / "python3"), cwd=str(repo), env=os.environ) is None
    monkeypatch.setenv("PYENV_VERSION", "3.99.0")
    target = resolve_shim(str(root / "shims" / "python3"), cwd=str(tmp_path), env=os.environ)
    assert target is not None and target.binary.endswith("versions/3.99.0/bin/python3")


def test_a_system_selection_is_left_to_the_shim(
    fake_pyenv: tuple[Path, Path], tmp_path: Path
) -> None:
    root, _ = fake_pyenv
    from assay.pyenv_shim import resolve_shim

    # No .python-version above tmp_path: the global file decides, and it says `system`.
    (root / "version").write_text("system\n")
    assert resolve_shim(str(root / "shims" / "python3"), cwd=str(tmp_path), env=os.environ) is None

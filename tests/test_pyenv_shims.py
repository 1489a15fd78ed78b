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
import time
from pathlib import Path

import pytest

from assay.pipeline import VerifyOptions, verify
from assay.probe import probe
from assay.probe_record import RACY_WINDOW_NS

#: Long enough for a file written now to be trusted by its stat (the probe record's rule).
SETTLE_S = RACY_WINDOW_NS / 1e9 + 0.5

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


#: A test that passes only when run as `pyenv exec` runs the interpreter pyenv picks.
AS_PYENV_EXEC_RUNS_IT = """
import os, sys


def test_run_as_pyenv_exec_runs_it():
    bin_dir = os.path.join(os.environ["PYENV_ROOT"], "versions", "3.99.0", "bin")
    assert os.environ["PYENV_VERSION"] == "3.99.0"
    assert os.environ["PATH"].split(os.pathsep)[0] == bin_dir
    assert sys.executable == os.path.join(bin_dir, "python3")
"""


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_checks_run_the_interpreter_the_shim_picks_as_pyenv_exec_would(
    fake_pyenv: tuple[Path, Path], tmp_path: Path, sandbox: str
) -> None:
    """The shim's chain (a dozen shell executions, about 40 ms) is not run for a check
    whose interpreter is known: that interpreter runs, with the variables `pyenv exec`
    sets. Nor for the version probes, on the second verify or the first."""
    _, log = fake_pyenv
    repo = make_repo(tmp_path)
    (repo / "tests" / "test_it.py").write_text(AS_PYENV_EXEC_RUNS_IT)
    for _ in range(2):
        report = verify(repo, VerifyOptions(sandbox=sandbox, use_cache=False))
        assert report.status.value == "VERIFIED", report.note
        assert executions(log) == []


def test_a_version_file_naming_two_versions_is_left_to_the_shim(
    fake_pyenv: tuple[Path, Path], tmp_path: Path
) -> None:
    """`pyenv exec` would export both versions in PYENV_VERSION: the shim runs the check."""
    root, log = fake_pyenv
    (root / "versions" / "3.98.0").symlink_to(Path(sys.prefix))
    repo = make_repo(tmp_path)
    (repo / ".python-version").write_text("3.99.0\n3.98.0\n")
    report = verify(repo, VerifyOptions(sandbox="none", use_cache=False))
    assert report.status.value == "VERIFIED", report.note
    assert any("pytest" in line for line in executions(log)), "the checks ran through the shim"


def test_a_linked_version_file_in_the_tree_is_left_to_the_shim(
    fake_pyenv: tuple[Path, Path], tmp_path: Path
) -> None:
    """A link could lead to a file the sandbox does not show, where the shim would look."""
    root, _ = fake_pyenv
    from assay.pyenv_shim import resolve_shim_in_tree

    repo = make_repo(tmp_path)
    shim = str(root / "shims" / "python3")

    def resolve() -> object:
        return resolve_shim_in_tree(shim, tree=str(repo), cwd=str(repo), env=os.environ)

    assert resolve() is not None
    (tmp_path / "chosen").write_text("3.99.0\n")
    (repo / ".python-version").unlink()
    (repo / ".python-version").symlink_to(tmp_path / "chosen")
    assert resolve() is None
    (repo / ".python-version").unlink()  # the global file decides: none above the tree
    assert resolve() is not None
    (tmp_path / ".python-version").write_text("3.99.0\n")  # above it: not shown inside
    assert resolve() is None


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


#: pyenv-virtualenv's `which` hook (abridged): it acts only when the version lacks the program.
GUARDED_HOOK = """# looks up executables for the source version if none is installed in the virtualenv.
if [ ! -x "${PYENV_COMMAND_PATH}" ]; then
  version="$(pyenv-version-name)"
  if [ -f "${PYENV_ROOT}/versions/${version}/bin/activate" ]; then
    PYENV_COMMAND_PATH="/elsewhere/bin/${PYENV_COMMAND_PATH##*/}"
  fi
fi
"""


@pytest.mark.parametrize(
    ("hook", "resolved"),
    [
        (GUARDED_HOOK, True),
        # Not guarded: it may send every program elsewhere.
        ('PYENV_COMMAND_PATH="/elsewhere/bin/${PYENV_COMMAND_PATH##*/}"\n', False),
        # Guarded, but with a statement after the block that runs for every program.
        (GUARDED_HOOK + 'PYENV_COMMAND_PATH="/elsewhere/python3"\n', False),
    ],
    ids=["guarded", "unguarded", "statement-after-the-guard"],
)
def test_which_hooks_stop_the_resolution_unless_they_act_only_for_a_missing_program(
    fake_pyenv: tuple[Path, Path], tmp_path: Path, hook: str, resolved: bool
) -> None:
    root, _ = fake_pyenv
    from assay.pyenv_shim import resolve_shim

    hooks = root / "plugins" / "pyenv-virtualenv" / "etc" / "pyenv.d" / "which"
    hooks.mkdir(parents=True)
    (hooks / "system-site-packages.bash").write_text(hook)
    target = resolve_shim(str(root / "shims" / "python3"), cwd=str(tmp_path), env=os.environ)
    assert (target is not None) is resolved, target


def test_a_version_file_above_only_some_places_the_tree_may_run_from_is_not_followed(
    fake_pyenv: tuple[Path, Path], tmp_path: Path
) -> None:
    root, _ = fake_pyenv
    from assay.pyenv_shim import resolve_shim_anywhere

    shim = str(root / "shims" / "python3")
    repo = tmp_path / "here" / "repo"
    repo.mkdir(parents=True)
    place = tmp_path / "there"
    place.mkdir()

    def resolve() -> object:
        return resolve_shim_anywhere(
            shim, tree=str(repo), cwd=str(repo), env=os.environ, places=[str(place)]
        )

    assert resolve() is not None  # the global version file, wherever it runs
    (place / ".python-version").write_text("3.99.0\n")  # seen only from a workspace there
    assert resolve() is None
    (repo / ".python-version").write_text("3.99.0\n")  # in the tree: it goes along with it
    target = resolve()
    assert target is not None and target.selected_by == str(repo / ".python-version")


def _cache_hit_without_a_workspace(repo: Path, tmp_path: Path, mp: pytest.MonkeyPatch) -> bool:
    """Whether `repo` is answered from the cache when no workspace can be made at all
    (`$ASSAY_WORKSPACE_DIR` a regular file): only the early key, read before any sandbox
    exists, can answer then."""
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    with mp.context() as inner:
        inner.setenv("ASSAY_WORKSPACE_DIR", str(blocker))
        again = verify(repo, VerifyOptions(sandbox="local", cache_dir=str(tmp_path / "cache")))
    return again.record.cached is not None


def test_a_cached_verify_through_a_shim_is_answered_before_any_sandbox(
    fake_pyenv: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through pyenv's shim a cache hit once went the long way (copy the tree, make the
    sandbox): the early key could not tell which interpreter the shim would pick."""
    root, log = fake_pyenv
    repo = make_repo(tmp_path)
    (repo / ".python-version").unlink()  # the global version file decides
    time.sleep(SETTLE_S)  # the fake pyenv was written just now: trusted by its stat after this
    first = verify(repo, VerifyOptions(sandbox="local", cache_dir=str(tmp_path / "cache")))
    assert first.status.value == "VERIFIED", first.note
    assert executions(log) == [], "the checks ran the interpreter the shim picks"
    assert _cache_hit_without_a_workspace(repo, tmp_path, monkeypatch)

    # Another version chosen by the global file (the same interpreter underneath): the
    # shim's choice is part of the key, so this is no longer answered early.
    (root / "versions" / "3.98.0").symlink_to(Path(sys.prefix))
    (root / "version").write_text("3.98.0\n")
    time.sleep(SETTLE_S)
    assert not _cache_hit_without_a_workspace(repo, tmp_path, monkeypatch)

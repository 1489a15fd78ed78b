"""Probing: the version recorded is the version of the binary that ran; failures are typed."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from assay import probe as probe_module
from assay import probe_record
from assay.check_execution import run_check
from assay.evidence import Check
from assay.probe import (
    ProbeCache,
    ProbeError,
    ProbeFailure,
    ToolchainError,
    probe,
    probe_all,
)
from assay.probe_record import NO_PROBE_CACHE_VAR, PROBE_STORE_NAME
from assay.toolchains import TOOLCHAINS, toolchain_for
from assay.tools.spec import Ecosystem
from assay.verdict import Cause, Kind, Verdict

#: The racy window the persistence tests use, so they need not wait two seconds per file.
TEST_RACY_WINDOW_NS = 50_000_000


@pytest.fixture(autouse=True)
def _own_probe_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own persistent probe record, never the user's."""
    cache_dir = tmp_path / "assay-cache"
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(cache_dir))
    monkeypatch.delenv(NO_PROBE_CACHE_VAR, raising=False)
    return cache_dir


@pytest.fixture
def short_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probe_record, "RACY_WINDOW_NS", TEST_RACY_WINDOW_NS)


def settle() -> None:
    """Wait until files written so far are older than the (test) racy window."""
    time.sleep(2 * TEST_RACY_WINDOW_NS / 1e9)


def probes_logged(log: Path) -> int:
    return log.read_text().count("probe") if log.exists() else 0


def fake_tool(directory: Path, name: str, script: str) -> Path:
    """An executable `name` in `directory` that runs `script` with this interpreter."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(f"#!{sys.executable}\nimport sys\n{script}\n")
    path.chmod(0o755)
    return path


def versioned(directory: Path, name: str, version: str, *, log: Path | None = None) -> Path:
    record = f"open({str(log)!r}, 'a').write('probe\\n')\n" if log else ""
    return fake_tool(directory, name, f"{record}print('{name} {version}')")


def test_the_first_binary_on_path_is_the_one_probed(tmp_path: Path) -> None:
    first = versioned(tmp_path / "a", "eslint", "2.0.0")
    versioned(tmp_path / "b", "eslint", "1.0.0")
    env = {"PATH": f"{tmp_path / 'a'}{os.pathsep}{tmp_path / 'b'}"}
    checker = probe("eslint", env=env)
    assert (checker.tool, checker.version, checker.path) == ("eslint", "2.0.0", str(first))


def test_run_check_records_the_version_of_the_binary_that_ran(tmp_path: Path) -> None:
    """Two tools of one name print different versions; evidence names the one executed."""
    versioned(tmp_path / "old", "eslint", "1.0.0")
    new = fake_tool(
        tmp_path / "new",
        "eslint",
        "print('eslint 2.0.0') if '--version' in sys.argv else print('ran new')",
    )
    env = {"PATH": f"{tmp_path / 'new'}{os.pathsep}{tmp_path / 'old'}"}
    project = tmp_path / "project"
    project.mkdir()
    check = Check("fake", Kind.LINT, ("eslint", "lint"), env=env, tool="eslint")
    evidence = run_check(check, root=project, report_dir=tmp_path / "reports")
    assert evidence.checker is not None and evidence.result is not None
    assert (evidence.checker.version, evidence.checker.path) == ("2.0.0", str(new))
    assert evidence.result.argv[0] == str(new)
    assert evidence.result.stdout.text.strip() == "ran new"


def test_explicit_path_is_probed_and_recorded(tmp_path: Path) -> None:
    local = versioned(tmp_path / "node_modules" / ".bin", "tsc", "Version 5.4.5")
    checker = probe("tsc", path=str(local))
    assert (checker.version, checker.path) == ("5.4.5", str(local))


@pytest.mark.slow
def test_python_module_tools_are_probed_through_the_interpreter() -> None:
    checker = probe("pytest", path=sys.executable, module="pytest")
    assert checker.path == sys.executable
    assert checker.version == pytest.__version__


def test_a_module_the_interpreter_lacks_is_named_as_asked(tmp_path: Path) -> None:
    # The probe starts `python -m X` through a bootstrap; the error says what was asked,
    # and what the interpreter answered.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    with pytest.raises(ProbeError) as caught:
        probe("pytest", path=str(venv / "bin" / "python"), module="pytest")
    assert (
        caught.value.detail == "-m pytest --version --noconftest exited 1: No module named pytest"
    )


def test_missing_tool_is_a_toolchain_error_listing_the_candidates(tmp_path: Path) -> None:
    with pytest.raises(ToolchainError) as caught:
        probe("python", env={"PATH": str(tmp_path)})
    error = caught.value
    assert error.ecosystem is Ecosystem.PYTHON
    assert error.candidates == ("python3", "python")
    assert "install" in str(error) and isinstance(error, ProbeFailure)


def test_missing_explicit_path_is_a_toolchain_error(tmp_path: Path) -> None:
    with pytest.raises(ToolchainError):
        probe("tsc", path=str(tmp_path / "node_modules" / ".bin" / "tsc"))


@pytest.mark.parametrize(
    "script",
    ["print('no digits here')", "sys.exit(3)", "import os; os.kill(os.getpid(), 9)"],
    ids=["no-version", "nonzero-exit", "killed"],
)
def test_a_tool_that_cannot_identify_itself_is_a_probe_error(tmp_path: Path, script: str) -> None:
    tool = fake_tool(tmp_path, "eslint", script)
    with pytest.raises(ProbeError) as caught:
        probe("eslint", path=str(tool))
    assert not isinstance(caught.value, ToolchainError)


def test_a_hanging_version_command_is_a_probe_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(probe_module, "PROBE_TIMEOUT_S", 0.5)
    tool = fake_tool(tmp_path, "eslint", "import time; time.sleep(30)")
    with pytest.raises(ProbeError, match="timed out"):
        probe("eslint", path=str(tool))


def test_unknown_tools_are_identified_by_digest_without_running_them(tmp_path: Path) -> None:
    """`./deploy.sh --version` would run the script: an unknown tool is never executed to
    identify it; the digest of its file names exactly what will run."""
    marker = tmp_path / "ran"
    tool = fake_tool(tmp_path, "whatever", f"open({str(marker)!r}, 'w')")
    checker = probe("whatever", path=str(tool))
    assert not marker.exists()
    assert checker.version.startswith("sha256:") and checker.path == str(tool)
    tool.write_text(tool.read_text() + "# changed\n")
    assert probe("whatever", path=str(tool)).version != checker.version


def test_unidentifiable_tool_makes_the_check_unverified_and_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    fake_tool(
        tmp_path / "bin",
        "eslint",
        f"open({str(marker)!r}, 'w') if '--version' not in sys.argv else None",
    )
    project = tmp_path / "project"
    project.mkdir()
    check = Check(
        "mute", Kind.LINT, ("eslint",), env={"PATH": str(tmp_path / "bin")}, tool="eslint"
    )
    evidence = run_check(check, root=project)
    assert (evidence.verdict, evidence.cause) == (Verdict.UNVERIFIED, Cause.TOOLCHAIN_MISSING)
    assert not marker.exists()


def test_cache_probes_each_tool_once_across_threads(tmp_path: Path) -> None:
    log = tmp_path / "probes.log"
    versioned(tmp_path / "bin", "eslint", "1.2.3", log=log)
    env = {"PATH": str(tmp_path / "bin")}
    cache = ProbeCache()
    results: list[str] = []
    barrier = threading.Barrier(8)

    def ask() -> None:
        barrier.wait()
        results.append(cache.get("eslint", env=env).version)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == ["1.2.3"] * 8
    assert log.read_text().count("probe") == 1
    assert cache.probes_run == 1
    assert cache.known()["eslint"].version == "1.2.3"


def test_cache_probes_again_for_a_different_environment_on_the_same_path(tmp_path: Path) -> None:
    """The version command sees the overlay: another overlay may mean another version."""
    fake_tool(tmp_path / "bin", "eslint", "import os; print('eslint', os.environ['PICK'])")
    path = str(tmp_path / "bin")
    cache = ProbeCache(persistent=False)
    versions = [cache.get("eslint", env={"PATH": path, "PICK": v}).version for v in ("1.0", "2.0")]
    assert versions == ["1.0", "2.0"]


def test_cache_remembers_failures_too(tmp_path: Path) -> None:
    cache = ProbeCache()
    env = {"PATH": str(tmp_path)}
    for _ in range(3):
        with pytest.raises(ToolchainError):
            cache.get("go", env=env)
    assert cache.probes_run == 1


def test_every_registered_tool_has_candidates_and_an_install_hint() -> None:
    for name, toolchain in TOOLCHAINS.items():
        assert toolchain.tool == name
        assert toolchain.candidates and toolchain.install_hint
        assert toolchain_for(name) is toolchain


@pytest.mark.parametrize(
    ("tool", "output", "version"),
    [
        ("go", "go version go1.19.8 linux/amd64", "1.19.8"),
        ("cargo", "cargo 1.95.0 (f2d3ce0bd 2026-03-21)", "1.95.0"),
        ("mypy", "mypy 1.10.0 (compiled: yes)", "1.10.0"),
        ("tsc", "Version 5.4.5", "5.4.5"),
        ("node", "v20.11.1", "20.11.1"),
        ("ruff", "ruff 0.5.0", "0.5.0"),
        ("python", "Python 3.11.7", "3.11.7"),
        ("eslint", "v9.0.0-rc.1", "9.0.0-rc.1"),
    ],
)
def test_versions_are_extracted_as_reported(tool: str, output: str, version: str) -> None:
    toolchain = toolchain_for(tool)
    assert toolchain is not None
    assert toolchain.extract_version(output) == version


def test_probe_all_reports_every_registered_tool_found_or_not(tmp_path: Path) -> None:
    fake_tool(tmp_path, "go", "print('go version go1.99.1 linux/amd64')")
    found = probe_all(env={"PATH": str(tmp_path)})
    assert set(found) == set(TOOLCHAINS)
    go = found["go"]
    assert not isinstance(go, ProbeFailure) and go.version == "1.99.1"
    assert isinstance(found["cargo"], ToolchainError)


# -- the persistent probe record ---------------------------------------------------------------


def test_an_unchanged_binary_is_probed_once_across_runs(
    tmp_path: Path, short_racy_window: None
) -> None:
    log = tmp_path / "probes.log"
    tool = versioned(tmp_path / "bin", "eslint", "1.2.3", log=log)
    env = {"PATH": str(tmp_path / "bin")}
    settle()
    first = ProbeCache().get("eslint", env=env)
    second_run = ProbeCache()
    second = second_run.get("eslint", env=env)
    assert first == second and second.version == "1.2.3" and second.path == str(tool)
    assert probes_logged(log) == 1
    assert (second_run.persisted_hits, second_run.commands_run) == (1, 0)


def _rewrite_in_place(tool: Path, text: str) -> None:
    tool.write_text(text)  # same inode; same size when only the version's digits change


def _replace_keeping_mtime(tool: Path, text: str) -> None:
    """What `cp -p` or an npm extract does: new content, the old file's mtime."""
    before = tool.stat()
    fresh = tool.with_name(tool.name + ".new")
    fresh.write_text(text)
    fresh.chmod(0o755)
    os.utime(fresh, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(fresh, tool)


@pytest.mark.slow
@pytest.mark.parametrize("change", [_rewrite_in_place, _replace_keeping_mtime])
def test_a_changed_binary_is_probed_again_and_its_new_version_recorded(
    tmp_path: Path, short_racy_window: None, change: object
) -> None:
    log = tmp_path / "probes.log"
    tool = versioned(tmp_path / "bin", "eslint", "1.0.0", log=log)
    env = {"PATH": str(tmp_path / "bin")}
    settle()
    assert ProbeCache().get("eslint", env=env).version == "1.0.0"
    assert callable(change)
    change(tool, tool.read_text().replace("1.0.0", "2.0.0"))
    assert ProbeCache().get("eslint", env=env).version == "2.0.0"
    assert probes_logged(log) == 2
    settle()
    assert ProbeCache().get("eslint", env=env).version == "2.0.0"  # recorded now
    assert ProbeCache().get("eslint", env=env).version == "2.0.0"
    assert probes_logged(log) == 3


def test_a_just_written_binary_is_not_recorded(tmp_path: Path) -> None:
    """A file changed within the racy window could change again without its timestamps
    moving, so its answer is not persisted (the default window, no waiting)."""
    log = tmp_path / "probes.log"
    versioned(tmp_path / "bin", "eslint", "1.0.0", log=log)
    env = {"PATH": str(tmp_path / "bin")}
    for _ in range(2):
        assert ProbeCache().get("eslint", env=env).version == "1.0.0"
    assert probes_logged(log) == 2


def fake_python_prefix(root: Path, log: Path) -> tuple[Path, Path]:
    """A Python installation `root` whose `bin/python3 -m mypy --version` reports the
    version of the mypy-X.dist-info found in its `lib/python3.11/site-packages`."""
    site = root / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    interpreter = fake_tool(
        root / "bin",
        "python3",
        f"import os\nopen({str(log)!r}, 'a').write('probe\\n')\n"
        f"found = [d for d in os.listdir({str(site)!r}) if d.endswith('.dist-info')]\n"
        "print('mypy', found[0].removeprefix('mypy-').removesuffix('.dist-info') if found else '?')",
    )
    return interpreter, site


def install_fake_mypy(site: Path, version: str) -> None:
    """What pip does to site-packages on an upgrade: old dist-info out, new one in."""
    for old in site.glob("mypy-*.dist-info"):
        old.rmdir()
    (site / f"mypy-{version}.dist-info").mkdir()


def test_installing_a_package_reprobes_a_module_tool(
    tmp_path: Path, short_racy_window: None
) -> None:
    log = tmp_path / "probes.log"
    interpreter, site = fake_python_prefix(tmp_path / "prefix", log)
    install_fake_mypy(site, "1.10.0")
    settle()
    for _ in range(2):
        assert ProbeCache().get("mypy", path=str(interpreter), module="mypy").version == "1.10.0"
    assert probes_logged(log) == 1
    install_fake_mypy(site, "1.11.0")  # the interpreter binary itself is untouched
    assert ProbeCache().get("mypy", path=str(interpreter), module="mypy").version == "1.11.0"
    assert probes_logged(log) == 2


def test_a_virtualenvs_own_site_packages_are_part_of_the_fingerprint(tmp_path: Path) -> None:
    log = tmp_path / "probes.log"
    base, _ = fake_python_prefix(tmp_path / "base", log)
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python3").symlink_to(base)
    (venv / "pyvenv.cfg").write_text(f"home = {base.parent}\n")
    venv_site = venv / "lib" / "python3.11" / "site-packages"
    venv_site.mkdir(parents=True)
    parts = probe_record.fingerprint(str(venv / "bin" / "python3"), module="mypy")
    assert parts is not None
    paths = [part[0] for part in parts]
    assert str(venv_site) in paths and str(venv / "pyvenv.cfg") in paths
    assert str(tmp_path / "base" / "lib" / "python3.11" / "site-packages") in paths


def test_a_node_tools_package_json_is_part_of_the_fingerprint(
    tmp_path: Path, short_racy_window: None
) -> None:
    package = tmp_path / "node_modules" / "typescript"
    (package / "bin").mkdir(parents=True)
    (package / "package.json").write_text('{"version": "5.4.5"}')
    tsc = package / "bin" / "tsc"
    tsc.write_text(
        "#!/usr/bin/env node\nconsole.log('Version ' + require('../package.json').version)\n"
    )
    tsc.chmod(0o755)
    link = tmp_path / "node_modules" / ".bin" / "tsc"
    link.parent.mkdir()
    link.symlink_to(tsc)
    settle()
    assert ProbeCache().get("tsc", path=str(link)).version == "5.4.5"
    (package / "package.json").write_text('{"version": "5.4.6"}')  # bin/tsc unchanged
    assert ProbeCache().get("tsc", path=str(link)).version == "5.4.6"


def test_a_corrupt_record_is_a_miss_never_an_error_or_a_wrong_version(
    tmp_path: Path, short_racy_window: None, _own_probe_record: Path
) -> None:
    log = tmp_path / "probes.log"
    tool = versioned(tmp_path / "bin", "eslint", "1.0.0", log=log)
    env = {"PATH": str(tmp_path / "bin")}
    settle()
    assert ProbeCache().get("eslint", env=env).version == "1.0.0"
    store = _own_probe_record / PROBE_STORE_NAME
    for leftover in _own_probe_record.glob(PROBE_STORE_NAME + "-*"):
        leftover.unlink()
    store.write_bytes(b"this is not a database\x00" * 100)
    assert ProbeCache().get("eslint", env=env).version == "1.0.0"
    _rewrite_in_place(tool, tool.read_text().replace("1.0.0", "2.0.0"))
    assert ProbeCache().get("eslint", env=env).version == "2.0.0"
    assert probes_logged(log) == 3


def test_an_unwritable_record_directory_is_a_miss(
    tmp_path: Path, short_racy_window: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(blocker / "assay"))
    log = tmp_path / "probes.log"
    versioned(tmp_path / "bin", "eslint", "1.0.0", log=log)
    settle()
    for _ in range(2):
        assert ProbeCache().get("eslint", env={"PATH": str(tmp_path / "bin")}).version == "1.0.0"
    assert probes_logged(log) == 2


def test_failures_are_not_recorded(tmp_path: Path, short_racy_window: None) -> None:
    env = {"PATH": str(tmp_path / "bin")}
    (tmp_path / "bin").mkdir()
    with pytest.raises(ToolchainError):
        ProbeCache().get("eslint", env=env)
    ready = tmp_path / "ready"
    fake_tool(
        tmp_path / "bin",
        "eslint",
        f"import os\nsys.exit(3) if not os.path.exists({str(ready)!r}) else print('eslint 9.1.0')",
    )
    settle()
    with pytest.raises(ProbeError):
        ProbeCache().get("eslint", env=env)
    ready.write_text("")  # the binary is unchanged: only a recorded failure could hide this
    assert ProbeCache().get("eslint", env=env).version == "9.1.0"


@pytest.mark.parametrize("how", ["env", "argument"])
def test_the_persistent_record_can_be_turned_off(
    tmp_path: Path,
    short_racy_window: None,
    monkeypatch: pytest.MonkeyPatch,
    _own_probe_record: Path,
    how: str,
) -> None:
    if how == "env":
        monkeypatch.setenv(NO_PROBE_CACHE_VAR, "1")
    log = tmp_path / "probes.log"
    versioned(tmp_path / "bin", "eslint", "1.0.0", log=log)
    settle()
    for _ in range(2):
        probes = ProbeCache(persistent=how == "env")
        assert probes.get("eslint", env={"PATH": str(tmp_path / "bin")}).version == "1.0.0"
    assert probes_logged(log) == 2
    assert not (_own_probe_record / PROBE_STORE_NAME).exists()


@pytest.mark.parametrize(
    ("directory", "header"),
    [("bin", "#!/bin/sh\n"), ("shims", f"#!{sys.executable}\n")],
    ids=["shell-wrapper", "version-manager-shim"],
)
def test_launchers_that_choose_a_tool_at_run_time_are_always_probed(
    tmp_path: Path, short_racy_window: None, directory: str, header: str
) -> None:
    log = tmp_path / "probes.log"
    tool = tmp_path / directory / "eslint"
    tool.parent.mkdir()
    body = (
        f"echo probe >> {log}; echo 'eslint 1.0.0'\n"
        if header.endswith("sh\n")
        else f"open({str(log)!r}, 'a').write('probe\\n'); print('eslint 1.0.0')\n"
    )
    tool.write_text(header + body)
    tool.chmod(0o755)
    settle()
    for _ in range(2):
        assert ProbeCache().get("eslint", path=str(tool)).version == "1.0.0"
    assert probes_logged(log) == 2


def test_concurrent_runs_share_the_record_safely(tmp_path: Path, short_racy_window: None) -> None:
    log = tmp_path / "probes.log"
    versioned(tmp_path / "bin", "eslint", "3.2.1", log=log)
    env = {"PATH": str(tmp_path / "bin")}
    settle()
    versions: list[str] = []
    barrier = threading.Barrier(6)

    def one_run() -> None:
        barrier.wait()
        versions.append(ProbeCache().get("eslint", env=env).version)

    threads = [threading.Thread(target=one_run) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert versions == ["3.2.1"] * 6
    assert ProbeCache().get("eslint", env=env).version == "3.2.1"
    before = probes_logged(log)
    ProbeCache().get("eslint", env=env)
    assert probes_logged(log) == before  # recorded by one of them

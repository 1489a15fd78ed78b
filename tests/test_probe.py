"""Probing: the version recorded is the version of the binary that ran; failures are typed."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from assay import probe as probe_module
from assay.engine import run_check
from assay.evidence import Check
from assay.probe import (
    ProbeCache,
    ProbeError,
    ProbeFailure,
    ToolchainError,
    probe,
    probe_all,
)
from assay.toolchains import TOOLCHAINS, Language, toolchain_for
from assay.verdict import Cause, Kind, Verdict


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


def test_python_module_tools_are_probed_through_the_interpreter() -> None:
    checker = probe("pytest", path=sys.executable, module="pytest")
    assert checker.path == sys.executable
    assert checker.version == pytest.__version__


def test_missing_tool_is_a_toolchain_error_listing_the_candidates(tmp_path: Path) -> None:
    with pytest.raises(ToolchainError) as caught:
        probe("python", env={"PATH": str(tmp_path)})
    error = caught.value
    assert error.language is Language.PYTHON
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
    check = Check("mute", Kind.LINT, ("eslint",), env={"PATH": str(tmp_path / "bin")}, tool="eslint")
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

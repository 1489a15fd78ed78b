"""The command line as users and scripts see it: the real console script, exit codes, JSON."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from assay._version import __version__
from tests.cli import PYTHON, assay, no_traceback, run_json

# --------------------------------------------------------------------------- --version


def test_version() -> None:
    done = assay("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"assay {__version__}"


def test_python_dash_m_version() -> None:
    done = subprocess.run(
        [PYTHON, "-m", "assay", "--version"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0
    assert done.stdout.strip() == f"assay {__version__}"


def test_help_lists_the_stable_commands() -> None:
    done = assay("--help")
    assert done.returncode == 0
    for command in ("run", "verify", "plan", "probe"):
        assert command in done.stdout


# --------------------------------------------------------------------------- assay run: exit code per verdict

PASSING_TEST = "import sys; print('1 passed in 0.01s'); sys.exit(0)"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "expected", "verdict"),
    [
        (["--kind", "build", "--", PYTHON, "-c", "pass"], 0, "pass"),
        (
            [
                "--kind",
                "build",
                "--",
                PYTHON,
                "-c",
                "import sys; print('error: broken'); sys.exit(1)",
            ],
            1,
            "fail",
        ),
        (
            ["--timeout", "0.5", "--", PYTHON, "-c", "import time; time.sleep(30)"],
            3,
            "inconclusive",
        ),
        (["--", PYTHON, "-c", "pass"], 3, "inconclusive"),  # a test check that ran no test
        (["--", "assay-no-such-tool-xyz"], 4, "unverified"),
    ],
    ids=["pass", "fail", "timeout", "no-tests", "missing-tool"],
)
def test_run_exit_code_per_verdict(
    args: list[str], expected: int, verdict: str, tmp_path: Path
) -> None:
    done = assay("run", *args, cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == expected, (done.stdout, done.stderr)
    assert done.stdout.split()[0] == verdict


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--"],
        ["--timeout", "-1", "--", "true"],
        ["--timeout", "nan", "--", "true"],
        ["--kind", "nonsense", "--", "true"],
        ["--sandbox", "docker", "--", "true"],
    ],
    ids=[
        "no-command",
        "empty-after-dashes",
        "negative-timeout",
        "nan-timeout",
        "bad-kind",
        "bad-sandbox",
    ],
)
def test_run_usage_errors_exit_2(args: list[str]) -> None:
    done = assay("run", *args)
    no_traceback(done)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Error" in done.stderr or "Usage" in done.stderr


def test_run_bad_cwd_is_a_usage_error(tmp_path: Path) -> None:
    done = assay("run", "--cwd", str(tmp_path / "missing"), "--", "true")
    no_traceback(done)
    assert done.returncode == 2


# --------------------------------------------------------------------------- assay run --json

RUN_FIELDS = (
    "verdict",
    "cause",
    "kind",
    "argv",
    "exit_code",
    "signal",
    "timed_out",
    "duration_s",
    "checker",
    "stdout",
    "stderr",
)


@pytest.mark.slow
def test_run_json_has_the_documented_fields(tmp_path: Path) -> None:
    code, evidence = run_json("--kind", "build", "--", PYTHON, "-c", "print('hello')", cwd=tmp_path)
    assert code == 0
    for field in RUN_FIELDS:
        assert field in evidence, field
    assert evidence["schema"].startswith("assay.evidence/")
    assert (evidence["verdict"], evidence["cause"], evidence["kind"]) == (
        "pass",
        "exit_zero",
        "build",
    )
    assert (
        evidence["exit_code"] == 0 and evidence["signal"] is None and evidence["timed_out"] is False
    )
    assert isinstance(evidence["duration_s"], float) and evidence["duration_s"] >= 0
    assert evidence["argv"][1:] == ["-c", "print('hello')"]
    assert set(evidence["checker"]) >= {"tool", "version"} and evidence["checker"]["version"]
    for stream in ("stdout", "stderr"):
        assert set(evidence[stream]) >= {"text", "truncated", "bytes"}
    assert (
        evidence["stdout"]["text"].strip() == "hello" and evidence["stdout"]["truncated"] is False
    )
    assert evidence["stdout"]["bytes"] == len("hello\n")


@pytest.mark.slow
def test_run_json_timeout_and_signal_fields(tmp_path: Path) -> None:
    code, evidence = run_json(
        "--timeout", "0.5", "--", PYTHON, "-c", "import time; time.sleep(30)", cwd=tmp_path
    )
    assert code == 3
    assert (evidence["verdict"], evidence["cause"], evidence["timed_out"]) == (
        "inconclusive",
        "timeout",
        True,
    )
    assert evidence["duration_s"] < 10

    code, evidence = run_json(
        "--kind",
        "build",
        "--",
        PYTHON,
        "-c",
        "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)",
        cwd=tmp_path,
    )
    assert code == 3
    assert (evidence["verdict"], evidence["cause"]) == ("inconclusive", "signal")
    assert evidence["signal"] == 11 or evidence["signal"] == "SIGSEGV"


def test_run_json_missing_tool_has_null_checker() -> None:
    code, evidence = run_json("--", "assay-no-such-tool-xyz")
    assert code == 4
    assert (evidence["verdict"], evidence["cause"]) == ("unverified", "toolchain_missing")
    assert evidence["checker"] is None


@pytest.mark.slow
def test_run_json_real_test_runner(tmp_path: Path) -> None:
    (tmp_path / "test_a.py").write_text(
        "def test_a():\n    assert True\n\n\ndef test_b():\n    assert 1 == 2\n"
    )
    code, evidence = run_json(
        "--", PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=tmp_path
    )
    assert code == 1
    assert evidence["verdict"] == "fail"
    assert evidence["tests"]["passed"] == 1 and evidence["tests"]["failed"] == 1


def test_run_without_sandbox_records_none() -> None:
    code, evidence = run_json("--sandbox", "none", "--kind", "build", "--", "true")
    assert code == 0
    assert evidence["sandbox"] in (None, "none")


def test_run_has_verify_s_defaults_a_sandbox_and_a_deadline(tmp_path: Path) -> None:
    """`assay run` is as safe as `verify` without asking: bubblewrap and a 60 s deadline."""
    code, evidence = run_json("--kind", "build", "--", "true", cwd=tmp_path)
    assert code == 0
    assert evidence["sandbox"].startswith("bwrap ")
    assert evidence["check"]["timeout_s"] == 60.0
    assert evidence["extra"]["limits"]["whole_run"]


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["bwrap", "local"])
def test_run_honours_the_sandbox(backend: str, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    script = (
        f"try:\n    open({str(outside / 'escaped')!r}, 'w').write('x')\nexcept OSError:\n    pass\n"
        "open('inside', 'w').write('x')"
    )
    _code, evidence = run_json(
        "--sandbox", backend, "--kind", "build", "--", PYTHON, "-c", script, cwd=work
    )
    assert str(evidence["sandbox"]).startswith(backend), evidence["sandbox"]
    # bwrap: the host outside the workspace is read-only; local: the workspace is a copy.
    assert (
        not (outside / "escaped").exists() if backend == "bwrap" else not (work / "inside").exists()
    )


# --------------------------------------------------------------------------- assay probe


@pytest.mark.slow
def test_probe_json() -> None:
    done = assay("probe", "--json")
    no_traceback(done)
    assert done.returncode == 0
    document = json.loads(done.stdout)
    assert document["schema"].startswith("assay.probe/")
    tools = document["tools"]
    for tool in ("python", "pytest", "ruff", "node", "go", "cargo"):
        assert tools[tool]["found"] is True, (tool, tools[tool])
        assert tools[tool]["version"][0].isdigit() and tools[tool]["path"]
    assert tools["pytest"]["version"].split(".")[0].isdigit()
    missing = [t for t in tools.values() if not t["found"]]
    assert all(t["install"] for t in missing)


@pytest.mark.slow
def test_probe_human() -> None:
    done = assay("probe")
    assert done.returncode == 0
    lines = {line.split()[0]: line for line in done.stdout.splitlines() if line.strip()}
    assert "python" in lines and "missing" not in lines["python"]


# --------------------------------------------------------------------------- assay plan (human)


@pytest.mark.slow
def test_plan_human_output(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\nversion = "0"\n\n[tool.pytest.ini_options]\n'
    )
    (tmp_path / "test_x.py").write_text("def test_x():\n    assert True\n")
    done = assay("plan", str(tmp_path))
    no_traceback(done)
    assert done.returncode == 0
    out = done.stdout
    assert f"plan for {tmp_path}" in out
    # Byte-compiling runs with the other checks: one stage, the checks side by side.
    assert "1. check (in parallel)" in out and "2." not in out
    assert "test" in out and "pytest" in out and "pyproject.toml" in out
    lines = out.splitlines()
    stage = next(i for i, line in enumerate(lines) if line.strip() == "1. check (in parallel)")
    compileall = next(i for i, line in enumerate(lines) if line.strip().startswith("compileall"))
    pytest_line = next(i for i, line in enumerate(lines) if line.strip().startswith("pytest"))
    assert stage < compileall < pytest_line
    assert "test, from pyproject.toml" in out  # each check says its kind
    verbose = assay("plan", "-v", str(tmp_path))
    assert verbose.returncode == 0 and len(verbose.stdout) >= len(out)


def test_plan_of_an_empty_dir_says_nothing_to_run(tmp_path: Path) -> None:
    done = assay("plan", str(tmp_path))
    assert done.returncode == 0
    assert "nothing to run" in done.stdout


def test_verify_rejects_a_file_path(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_text("x")
    done = assay("verify", str(target))
    no_traceback(done)
    assert done.returncode == 2


@pytest.mark.parametrize("command", ["verify", "plan"])
def test_a_symlink_loop_is_a_usage_error_naming_it(tmp_path: Path, command: str) -> None:
    """Before, verify's `Path.resolve` raised RuntimeError: an internal error, exit 3."""
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    for target in (tmp_path / "a", tmp_path / "a" / "below"):
        done = assay(command, str(target))
        no_traceback(done)
        assert done.returncode == 2, done.stderr
        assert f"{target}: a symlink loop, not a directory" in done.stderr


def test_verify_unknown_option_is_a_usage_error(tmp_path: Path) -> None:
    done = assay("verify", str(tmp_path), "--no-such-option")
    assert done.returncode == 2
    done = assay("verify", str(tmp_path), "--timeout", "-3")
    assert done.returncode == 2 and "timeout" in done.stderr

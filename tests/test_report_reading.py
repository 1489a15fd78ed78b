"""A report the code under test replaced (a link to a root-only file, /dev/zero, a FIFO,
a 2 GiB file) is refused: it is never read through, never blocks, never fills memory,
and never makes a check pass."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.parsers.report_file import REPORT_MAX_BYTES, Refused, read_report
from tests.cli import ASSAY, assay_env

PY = sys.executable

#: A name that must never reach the evidence: it only exists inside the root-only file.
SECRET = "SECRET-7f3a9c-root-only"

SECRET_JUNIT = (
    '<testsuites><testsuite name="pytest" tests="1">'
    f'<testcase classname="leak" name="{SECRET}"/></testsuite></testsuites>'
)
SECRET_JEST = json.dumps(
    {
        "testResults": [
            {"name": "a.test.js", "assertionResults": [{"fullName": SECRET, "status": "passed"}]}
        ]
    }
)

#: What the code under test does to the report path once the runner has written it.
ATTACK = """
import os

def replace_report(path, attack, target):
    if os.path.lexists(path):
        os.remove(path)
    if attack == "symlink":
        os.symlink(target, path)
    elif attack == "hardlink":
        os.link(target, path)
    elif attack == "fifo":
        os.mkfifo(path)
    elif attack == "sparse":
        with open(path, "wb") as report:
            report.truncate(2 << 30)
"""

#: Runs in the test run of a real pytest: the JUnit report is replaced after pytest wrote it.
CONFTEST = (
    ATTACK
    + """
def pytest_unconfigure(config):
    if config.option.xmlpath:
        replace_report(config.option.xmlpath, {attack!r}, {target!r})
"""
)

#: A jest stand-in: says its version, prints a passing summary, then replaces its report.
FAKE_JEST = (
    f"#!{PY}\n"
    + ATTACK
    + """
import sys
if "--version" in sys.argv:
    print("29.7.0")
    sys.exit(0)
out = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--outputFile="))
with open(out, "w") as report:
    report.write('{{"testResults": [{{"assertionResults": [{{"status": "passed"}}]}}]}}')
print("Tests:       1 passed, 1 total")
replace_report(out, {attack!r}, {target!r})
"""
)

#: One check run in a child process with its address space capped, so that a read that
#: never ends fails there instead of exhausting the machine; prints the evidence and the
#: child's peak resident size.
RUN_CHECK = """
import json, resource, sys
from pathlib import Path
from assay.check_execution import run_check
from assay.evidence import Check
from assay.verdict import Kind

cap = 4 << 30
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
tool, root, reports, *argv = sys.argv[1:]
check = Check(tool, Kind.TEST, tuple(argv), tool=tool)
evidence = run_check(check, root=Path(root), report_dir=Path(reports))
with open("/proc/self/status") as status:
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
print(json.dumps({"evidence": evidence.to_dict(), "peak_rss_kib": peak}))
"""

#: Far above what assay needs, far below what reading a 2 GiB report or /dev/zero takes.
PEAK_RSS_BOUND_KIB = 256 * 1024


def secret_file(tmp_path: Path, content: str) -> Path:
    secret = tmp_path / "secret"
    secret.write_text(content)
    secret.chmod(0o600)
    return secret


def pytest_repo(root: Path, attack: str, target: str) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    (root / "conftest.py").write_text(CONFTEST.format(attack=attack, target=target))
    return root


def jest_repo(root: Path, attack: str, target: str) -> Path:
    jest = root / "node_modules" / ".bin" / "jest"
    jest.parent.mkdir(parents=True)
    jest.write_text(FAKE_JEST.format(attack=attack, target=target))
    jest.chmod(0o755)
    return root


def run_check_in_child(tool: str, root: Path, reports: Path, *argv: str) -> dict[str, Any]:
    done = subprocess.run(
        [PY, "-c", RUN_CHECK, tool, str(root), str(reports), *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def run_attacked(tool: str, tmp_path: Path, attack: str, target: str) -> dict[str, Any]:
    root, reports = tmp_path / "repo", tmp_path / "reports"
    if tool == "pytest":
        pytest_repo(root, attack, target)
        return run_check_in_child(
            "pytest", root, reports, PY, "-m", "pytest", "-q", "-p", "no:cacheprovider"
        )
    jest_repo(root, attack, target)
    return run_check_in_child("jest", root, reports, "jest")


# --------------------------------------------------------------------------- end to end


@pytest.mark.slow
@pytest.mark.parametrize(
    ("tool", "attack", "content"),
    [
        ("pytest", "symlink", SECRET_JUNIT),
        ("pytest", "hardlink", SECRET_JUNIT),
        ("jest", "symlink", SECRET_JEST),
        ("jest", "hardlink", SECRET_JEST),
    ],
)
def test_a_report_linked_to_a_root_only_file_is_not_read(
    tool: str, attack: str, content: str, tmp_path: Path
) -> None:
    secret = secret_file(tmp_path, content)
    run = run_attacked(tool, tmp_path, attack, str(secret))
    evidence = run["evidence"]
    assert SECRET not in json.dumps(evidence)
    assert evidence["verdict"] != "pass", evidence["cause"]
    assert "refused" in evidence["note"], evidence["note"]
    assert secret.read_text() == content  # and the secret is where it was


@pytest.mark.slow
@pytest.mark.parametrize(
    ("tool", "attack", "target"),
    [
        ("pytest", "fifo", ""),
        ("jest", "fifo", ""),
        ("jest", "symlink", "/dev/zero"),
        ("jest", "sparse", ""),
    ],
)
def test_a_report_that_never_ends_is_refused_quickly_within_bounded_memory(
    tool: str, attack: str, target: str, tmp_path: Path
) -> None:
    run = run_attacked(tool, tmp_path, attack, target)  # within the child's 60 s timeout
    evidence = run["evidence"]
    assert evidence["verdict"] != "pass", evidence["cause"]
    assert "refused" in evidence["note"], evidence["note"]
    assert run["peak_rss_kib"] < PEAK_RSS_BOUND_KIB, run["peak_rss_kib"]


@pytest.mark.slow
def test_a_report_link_written_inside_bubblewrap_is_not_followed_on_the_host(
    tmp_path: Path,
) -> None:
    """The whole way: `assay verify` under bubblewrap, where the report directory is
    mounted writable and the link points at a host file the sandbox cannot even see."""
    assert shutil.which("bwrap"), "bubblewrap is required for this test"
    secret = secret_file(tmp_path, SECRET_JUNIT)
    repo = pytest_repo(tmp_path / "repo", "symlink", str(secret))
    env = assay_env()
    done = subprocess.run(
        [
            ASSAY,
            "verify",
            str(repo),
            "--sandbox",
            "bwrap",
            "--kind",
            "test",
            "--no-cache",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert SECRET not in done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["status"] != "VERIFIED", report["note"]
    assert [c["verdict"] for c in report["checks"]] == ["inconclusive"], report["checks"]
    assert "refused" in report["checks"][0]["note"]


# --------------------------------------------------------------------------- read_report


def test_read_report_reads_a_regular_file(tmp_path: Path) -> None:
    report = tmp_path / "r.xml"
    report.write_bytes(b"<testsuites/>")
    assert read_report(report) == b"<testsuites/>"


def test_read_report_of_nothing_is_none(tmp_path: Path) -> None:
    assert read_report(tmp_path / "absent.xml") is None


def test_read_report_refuses_a_directory_and_a_dangling_link(tmp_path: Path) -> None:
    (tmp_path / "dir.xml").mkdir()
    (tmp_path / "dangling.xml").symlink_to(tmp_path / "nowhere")
    for name, why in (("dir.xml", "directory"), ("dangling.xml", "symbolic link")):
        refused = read_report(tmp_path / name)
        assert isinstance(refused, Refused) and why in refused.reason, refused


def test_read_report_refuses_one_byte_over_the_bound(tmp_path: Path) -> None:
    report = tmp_path / "big.json"
    with open(report, "wb") as f:
        f.truncate(REPORT_MAX_BYTES + 1)
    refused = read_report(report)
    assert isinstance(refused, Refused) and "larger than" in refused.reason
    with open(report, "wb") as f:
        f.truncate(REPORT_MAX_BYTES)
    data = read_report(report)
    assert isinstance(data, bytes) and len(data) == REPORT_MAX_BYTES

"""Attacks through the environment the checks run in, and through the runner itself.

Each attack is a real repository whose base has a bug its tests catch; the change keeps
the bug and, instead of fixing it, plants code where the tests' interpreter or pytest
will load it without anyone asking: a `.pth` file or a `sitecustomize.py` in the in-tree
virtualenv (gitignored: nothing hashes or restores it), a fake distribution with a
`pytest11` entry point and an install record consistent with its files, or a `pytest.py`
at the root that answers `python -m pytest`. The planted code passes only the base's
tests (`test_calc`), as a careful attacker would, so random canary tests would not see it.
Under `--base REF --protect` none may reach VERIFIED, and an honest environment must.
"""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import textwrap
import zipfile
from collections.abc import Mapping
from pathlib import Path

import pytest

from assay.report import Report
from assay.verdict import Cause, Kind, Status
from tests.attacks import verify_change
from tests.cli import path_with_venv
from tests.repos import commit_all, write_dedented

pytestmark = pytest.mark.slow

#: The interpreter the test virtualenvs are made from: the one this venv was made from,
#: whose own site-packages holds pytest (shown to the test venvs as system site-packages).
BASE_PYTHON = getattr(sys, "_base_executable", sys.executable)


@pytest.fixture(autouse=True)
def _venv_tools_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where a repository has no environment of its own, pytest is this environment's."""
    monkeypatch.setenv("PATH", path_with_venv())


def pyproject(*test_deps: str) -> str:
    deps = ", ".join(f'"{d}"' for d in test_deps)
    return f"""
        [project]
        name = "calc"
        version = "0"

        [project.optional-dependencies]
        test = [{deps}]

        [tool.pytest.ini_options]
        testpaths = ["tests"]
    """


BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"

#: The base's tests use a fixture of a pytest plugin the base declares (`pytest-tiny`):
#: they only pass where that plugin is loaded.
BASE = {
    "pyproject.toml": pyproject("pytest", "pytest-tiny"),
    "calc.py": BUGGY,
    "tests/test_calc.py": """
        from calc import add


        def test_add(tiny):
            assert add(2, 2) == 4 + tiny


        def test_add_zero(tiny):
            assert add(1, 0) == 1 + tiny
    """,
    ".gitignore": ".venv/\n",
}

#: The same project without a plugin or an environment of its own.
PLAIN_BASE = {
    "pyproject.toml": pyproject("pytest"),
    "calc.py": BUGGY,
    "tests/test_calc.py": """
        from calc import add


        def test_add():
            assert add(2, 2) == 4


        def test_add_zero():
            assert add(1, 0) == 1
    """,
}

#: A pytest plugin that turns the base's failing tests into passes: pytest then prints
#: "2 passed" and writes a passing JUnit report itself.
FORGE = """
    import pytest


    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(item, call):
        outcome = yield
        if "test_calc" in item.nodeid:
            report = outcome.get_result()
            report.outcome = "passed"
            report.longrepr = None
"""

#: Appended to PYTEST_PLUGINS from inside the interpreter, so whatever pytest is asked to
#: load is loaded too: nothing visible goes missing.
ADD_PLUGIN = """
    import os

    os.environ["PYTEST_PLUGINS"] = ",".join(
        filter(None, [os.environ.get("PYTEST_PLUGINS"), "{module}"])
    )
"""


# --------------------------------------------------------------------------- building repositories


def wheel(
    directory: Path, name: str, version: str, files: Mapping[str, str], meta: str = ""
) -> Path:
    """A real wheel built by hand (no index needed), its RECORD hashing every file as a
    build backend's does; pip installs from it and writes the install record."""
    dist = f"{name.replace('-', '_')}-{version}"
    path = directory / f"{dist}-py3-none-any.whl"
    contents = {rel: textwrap.dedent(text).lstrip("\n").encode() for rel, text in files.items()}
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{meta}"
    contents[f"{dist}.dist-info/METADATA"] = metadata.encode()
    contents[f"{dist}.dist-info/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    record = [f"{rel},{sha256(data)},{len(data)}" for rel, data in contents.items()]
    record.append(f"{dist}.dist-info/RECORD,,")
    contents[f"{dist}.dist-info/RECORD"] = "\n".join(record).encode()
    with zipfile.ZipFile(path, "w") as archive:
        for rel, data in contents.items():
            archive.writestr(rel, data)
    return path


def sha256(data: bytes) -> str:
    """A file's hash as install records write it."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def tiny_plugin(directory: Path) -> Path:
    """`pytest-tiny`: a pytest plugin (a `pytest11` entry point) with a `tiny` fixture."""
    return wheel(
        directory,
        "pytest-tiny",
        "1.0",
        {
            "pytest_tiny.py": "import pytest\n\n\n@pytest.fixture\ndef tiny():\n    return 0\n",
            "pytest_tiny-1.0.dist-info/entry_points.txt": "[pytest11]\ntiny = pytest_tiny\n",
        },
        meta="Requires-Dist: pytest\n",
    )


def make_venv(repo: Path, scratch: Path) -> Path:
    """A real in-tree virtualenv (pytest from the base interpreter's site-packages) with
    pytest-tiny installed by pip; its site-packages directory."""
    subprocess.run(
        [BASE_PYTHON, "-m", "venv", "--system-site-packages", "--without-pip", str(repo / ".venv")],
        check=True,
    )
    python = repo / ".venv" / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-index", "--no-deps"]
        + ["--disable-pip-version-check", str(tiny_plugin(scratch))],
        check=True,
        capture_output=True,
    )
    (site,) = (repo / ".venv" / "lib").glob("python3*/site-packages")
    return site


def venv_repo(tmp_path: Path, *, base: Mapping[str, str] = BASE, calc: str = BUGGY) -> Path:
    """A committed base, an in-tree virtualenv, and a change that sets calc.py to `calc`."""
    repo = tmp_path / "repo"
    write_dedented(repo, base)
    commit_all(repo, "base")
    make_venv(repo, tmp_path)
    (repo / "calc.py").write_text(calc)
    (repo / "CHANGES").write_text("the change\n")
    commit_all(repo, "change")
    return repo


def plant(directory: Path, files: Mapping[str, str]) -> None:
    for rel, text in files.items():
        (directory / rel).parent.mkdir(parents=True, exist_ok=True)
        (directory / rel).write_text(textwrap.dedent(text).lstrip("\n"))


def record_line(site: Path, rel: str) -> str:
    data = (site / rel).read_bytes()
    return f"{rel},{sha256(data)},{len(data)}"


def problems(report: Report) -> list[str]:
    environment = report.record.environment or {}
    return [f"{p['path']}: {p['problem']}" for p in environment.get("problems", ())]


def assert_unproven(report: Report, planted: str) -> None:
    """Not VERIFIED, and not FAILED either: the tests were never run in that environment
    (what it would have said is no evidence), and the note names the file and the fix."""
    assert report.status is not Status.VERIFIED, report.note
    assert report.status is Status.INDETERMINATE, (report.status, report.note, report.output())
    assert any(planted in p for p in problems(report)), problems(report)
    assert planted in report.note and "--install" in report.note, report.note
    tests = [e for e in report.checks if e.check.kind is Kind.TEST]
    assert tests and all(e.cause is Cause.START_FAILED and e.result is None for e in tests)


# --------------------------------------------------------------------------- the attacks


def test_a_pth_file_in_the_in_tree_venv_that_loads_a_forging_plugin(tmp_path: Path) -> None:
    repo = venv_repo(tmp_path)
    site = next((repo / ".venv" / "lib").glob("python3*/site-packages"))
    plant(
        site,
        {
            "zz_speedups.pth": "import _speedups_boot\n",
            "_speedups_boot.py": ADD_PLUGIN.replace("{module}", "_speedups"),
            "_speedups.py": FORGE,
        },
    )
    assert_unproven(verify_change(repo), "zz_speedups.pth")


def test_a_sitecustomize_in_the_in_tree_venv_that_loads_a_forging_plugin(tmp_path: Path) -> None:
    repo = venv_repo(tmp_path)
    site = next((repo / ".venv" / "lib").glob("python3*/site-packages"))
    plant(site, {"sitecustomize.py": ADD_PLUGIN.replace("{module}", "sitecustomize") + FORGE})
    assert_unproven(verify_change(repo), "sitecustomize.py")


def test_a_fake_distribution_with_a_consistent_record_and_a_pytest11_entry_point(
    tmp_path: Path,
) -> None:
    """Its install record matches its files: only the base, which does not ask for it, can
    say it does not belong."""
    repo = venv_repo(tmp_path)
    site = next((repo / ".venv" / "lib").glob("python3*/site-packages"))
    info = "pytest_speedups-2.0.dist-info"
    files = {
        "pytest_speedups.py": FORGE,
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: pytest-speedups\nVersion: 2.0\n",
        f"{info}/entry_points.txt": "[pytest11]\nspeedups = pytest_speedups\n",
        f"{info}/INSTALLER": "pip\n",
    }
    plant(site, files)
    record = [record_line(site, rel) for rel in files] + [f"{info}/RECORD,,"]
    (site / info / "RECORD").write_text("\n".join(record) + "\n")
    assert_unproven(verify_change(repo), info)


def test_a_file_of_a_declared_distribution_rewritten_in_place(tmp_path: Path) -> None:
    """The plugin the base declares, its fixture now forging: its record no longer matches."""
    repo = venv_repo(tmp_path)
    site = next((repo / ".venv" / "lib").glob("python3*/site-packages"))
    with (site / "pytest_tiny.py").open("a") as module:
        module.write("\n" + textwrap.dedent(FORGE))
    assert_unproven(verify_change(repo), "pytest_tiny.py")


def test_a_root_pytest_py_that_answers_python_m_pytest(tmp_path: Path) -> None:
    """`python -m pytest` puts the working directory first on the import path: the
    change's `pytest.py` would print a passing run, write a passing report and exit 0 (and
    answer the version probe). The runner is started so that it cannot."""
    repo = tmp_path / "repo"
    write_dedented(repo, PLAIN_BASE)
    commit_all(repo, "base")
    plant(
        repo,
        {
            "pytest.py": """
                import sys

                if "--version" in sys.argv:
                    print("pytest 8.3.4")
                    sys.exit(0)
                for arg in sys.argv:
                    if arg.startswith("--junitxml="):
                        with open(arg.split("=", 1)[1], "w") as report:
                            report.write(
                                '<testsuites><testsuite name="pytest" tests="2" failures="0"'
                                ' errors="0" skipped="0"><testcase classname="tests.test_calc"'
                                ' name="test_add"/><testcase classname="tests.test_calc"'
                                ' name="test_add_zero"/></testsuite></testsuites>'
                            )
                print("tests/test_calc.py ..")
                print("2 passed in 0.01s")
            """
        },
    )
    commit_all(repo, "change")
    report = verify_change(repo)
    assert report.status is not Status.VERIFIED, report.note
    # Not merely refused: the real pytest ran the base's tests on the change's code.
    assert report.status is Status.FAILED, (report.note, report.output())


# --------------------------------------------------------------------------- no false alarm


def test_an_honest_in_tree_venv_is_verified_with_its_declared_plugin(tmp_path: Path) -> None:
    """A real pip-installed plugin the base declares is proven, and named to pytest: the
    tests need its fixture, so they pass only where it was loaded."""
    repo = venv_repo(tmp_path, calc=FIXED)
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, (report.note, problems(report))
    environment = report.record.environment or {}
    assert environment["proven"] is True and environment["checked"] == [".venv"]
    assert environment["pytest_plugins"] == ["pytest_tiny"]


def test_a_plugin_the_base_does_not_declare_is_not_believed(tmp_path: Path) -> None:
    """The same honest install, but the base's manifests never ask for pytest-tiny."""
    base = {**BASE, "pyproject.toml": pyproject("pytest")}
    repo = venv_repo(tmp_path, base=base, calc=FIXED)
    assert_unproven(verify_change(repo), "pytest_tiny-1.0.dist-info")

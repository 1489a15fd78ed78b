"""A tool that imports the project under verification cannot start when the project's code
fails to load: pytest imports iniconfig, so verifying iniconfig with `"#;"[5]` at the top of
a module made `pytest --version` exit 1, read as a missing pytest (UNVERIFIED). The maintainers'
every test run fails the same way: FAILED, at the project's own file and line
(`assay.tool_broken_by_project`)."""

from __future__ import annotations

import json
import shutil
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.probe import ProbeError
from assay.probe_record import NO_PROBE_CACHE_VAR
from assay.process import run_process
from assay.tool_broken_by_project import breaking_module
from tests.cli import assay, assay_env
from tests.repos import tree_with_venv, write

PYTEST_8 = "pytest==8.3.5"


@pytest.fixture(scope="module")
def iniconfig_repo() -> Iterator[Path]:
    """iniconfig as its own editable install makes it: a tree whose `.venv` has pytest, and
    whose `src/iniconfig` is the one pytest imports (the installed copy moved there, and a
    `.pth` naming src/ relative to site-packages, so that the workspace's copy is the one
    found)."""
    repo = tree_with_venv("assay-iniconfig-", PYTEST_8)
    venv = repo / ".venv"
    purelib = sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)})
    site_packages = Path(purelib)
    (repo / "src").mkdir()
    shutil.move(site_packages / "iniconfig", repo / "src" / "iniconfig")
    (site_packages / "project.pth").write_text("../../../../src\n")
    yield repo
    shutil.rmtree(repo)


def _verify(repo: Path) -> dict:
    # Probed afresh: a version recorded by an earlier run would hide what the probe says.
    env = {**assay_env(), NO_PROBE_CACHE_VAR: "1"}
    done = assay("verify", "--json", "--no-cache", "--kind", "test", str(repo), env=env)
    assert "Traceback" not in done.stderr, done.stderr
    report: dict = json.loads(done.stdout)
    return report


@pytest.mark.parametrize(
    ("first_line", "status", "found"),
    [
        ("", "VERIFIED", None),
        ('COMMENTCHARS = "#;"[5]', "FAILED", (1, "IndexError: string index out of range")),
        ("def broken(:", "FAILED", (1, "SyntaxError: invalid syntax")),
        # A module nowhere installed may be a dependency's want: left to the probe's failure.
        ("import assay_absent_module_q7", "UNVERIFIED", None),
    ],
)
def test_the_projects_broken_module_fails_the_tool_that_imports_it(
    iniconfig_repo: Path, first_line: str, status: str, found: tuple[int, str] | None
) -> None:
    module = iniconfig_repo / "src" / "iniconfig" / "_parse.py"
    original = module.read_text()
    write(iniconfig_repo, {"tests/test_ini.py": TESTS})
    module.write_text(f"{first_line}\n{original}")
    try:
        report = _verify(iniconfig_repo)
    finally:
        module.write_text(original)
    assert report["status"] == status, report["note"]
    (check,) = report["checks"]
    if found is not None:
        (diagnostic,) = check["diagnostics"]
        assert (diagnostic["file"], diagnostic["line"], diagnostic["message"]) == (
            "src/iniconfig/_parse.py",
            *found,
        )
        assert report["note"].startswith("pytest failed: src/iniconfig/_parse.py:1:")


TESTS = (
    "from iniconfig import IniConfig\n\n\n"
    "def test_parses():\n"
    '    assert IniConfig("x.ini", data="[a]\\nb = 1\\n")["a"]["b"] == "1"\n'
)


def _probe_failure(root: Path, script: str) -> ProbeError:
    """A real failed run of `script` under `root`, as a probe's error carries it."""
    result = run_process([sys.executable, str(root / script)], cwd=root, timeout=60)
    assert result.exit_code == 1, result.stderr.text
    return ProbeError("pytest", sys.executable, "exited 1", result)


def test_only_an_error_in_the_projects_own_code_counts(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pkg/broken.py": "x = [][1]\n",
            "run_pkg.py": "import sys; sys.path.insert(0, sys.path[0]); import pkg.broken\n",
            ".venv/lib/tool.py": "x = [][1]\n",
            "run_tool.py": "import sys; sys.path.insert(0, sys.path[0] + '/.venv/lib'); "
            "import tool\n",
            "pkg/missing.py": "import assay_absent_module_q7\n",
            "run_missing.py": "import sys; sys.path.insert(0, sys.path[0]); import pkg.missing\n",
        },
    )
    found = breaking_module(_probe_failure(tmp_path, "run_pkg.py"), tmp_path)
    assert found is not None and (found.file, found.line) == ("pkg/broken.py", 1)
    assert breaking_module(_probe_failure(tmp_path, "run_tool.py"), tmp_path) is None
    assert breaking_module(_probe_failure(tmp_path, "run_missing.py"), tmp_path) is None
    # Another tree's: the same error is none of this project's.
    elsewhere = tmp_path / "elsewhere"
    assert breaking_module(_probe_failure(tmp_path, "run_pkg.py"), elsewhere) is None

"""What the tools step installed, held to its record and to the index's wheels, in a real
virtualenv with real pip: a file rewritten together with its install record, a tool
installed again at another version and then rewritten, an entry-point script rewritten,
a file the record adds that no wheel holds."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from assay.installed_tools import TOOLS_STEP, InstalledTools

pytestmark = pytest.mark.slow

VENV = ".venv"


def pip(root: Path, *requirements: str) -> None:
    subprocess.run(
        [str(root / VENV / "bin" / "python"), "-m", "pip", "install", "-q", *requirements],
        check=True,
        capture_output=True,
    )


def site(root: Path) -> Path:
    (found,) = (root / VENV / "lib").glob("python3*/site-packages")
    return found


def rewrite_with_record(root: Path, dist: str, rel: str, text: str) -> None:
    """Write `text` to `rel` (relative to site-packages) and its line in `dist`'s RECORD,
    as an attacker that knows the format does."""
    path = site(root) / rel
    path.write_text(text)
    data = path.read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    (record,) = site(root).glob(f"{dist}-*.dist-info/RECORD")
    rows = [r for r in record.read_text().splitlines() if not r.startswith(f"{rel},")]
    record.write_text("\n".join([*rows, f"{rel},sha256={digest},{len(data)}"]) + "\n")


@pytest.fixture
def env(tmp_path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / VENV)], check=True)
    pip(tmp_path, "iniconfig==2.0.0", "pytest==8.4.1")
    return tmp_path


def recorded(root: Path) -> InstalledTools:
    tools = InstalledTools(root, VENV)
    tools.after("install-venv")
    assert not tools.taken
    tools.after(TOOLS_STEP)
    assert tools.taken and len(tools.recorded) >= 2, tools
    return tools


def test_untouched_tools_are_as_installed(env: Path) -> None:
    assert recorded(env).changes() == []


def test_a_file_rewritten_with_its_record_is_found(env: Path) -> None:
    tools = recorded(env)
    rewrite_with_record(env, "iniconfig", "iniconfig/__init__.py", "# nothing\n")
    (changed,) = tools.changes()
    assert "iniconfig/__init__.py of iniconfig-2.0.0 is no longer as assay installed it" in changed
    assert tools.note() is not None
    unproven: dict[str, str] = {}
    held = tools.hold_unproven(unproven, ["pytest"])
    assert held["problem"] is not None and held["distributions"] >= 2, held
    assert "iniconfig/__init__.py" in unproven["pytest"]


def test_a_tool_installed_again_is_held_to_its_wheel(env: Path) -> None:
    tools = recorded(env)
    pip(env, "iniconfig==2.1.0", "pytest==8.4.2")
    assert tools.changes() == []  # honest: as the index's wheels of 2.1.0 and 8.4.2 hold them
    assert sorted(tools.against_wheels) == ["iniconfig-2.1.0", "pytest-8.4.2"]
    tools.against_wheels.clear()

    rewrite_with_record(env, "iniconfig", "iniconfig/__init__.py", "# nothing\n")
    rewrite_with_record(env, "iniconfig", "iniconfig/extra.py", "import os\n")
    plugin = "iniconfig-2.1.0.dist-info/entry_points.txt"
    rewrite_with_record(env, "iniconfig", plugin, "[pytest11]\nextra = iniconfig.extra\n")
    script = env / VENV / "bin" / "pytest"
    lines = script.read_text().splitlines()
    script.write_text("\n".join([lines[0], "import os", "os._exit(0)"]) + "\n")
    changed = "\n".join(tools.changes())
    assert "iniconfig/__init__.py: its content is not the wheel's (of iniconfig-2.1.0)" in changed
    assert "iniconfig/extra.py: listed by iniconfig-2.1.0's install record" in changed
    assert f"{plugin}: listed by iniconfig-2.1.0's install record" in changed
    assert f"{VENV}/bin/pytest: not the script an installer writes" in changed


def test_a_tool_removed_is_named(env: Path) -> None:
    tools = recorded(env)
    subprocess.run(
        [str(env / VENV / "bin" / "python"), "-m", "pip", "uninstall", "-q", "-y", "iniconfig"],
        check=True,
    )
    (changed,) = tools.changes()
    assert changed.startswith("iniconfig-2.0.0 was removed by the project's own install steps")


def test_no_record_taken_holds_nothing(env: Path) -> None:
    tools = InstalledTools(env, VENV)
    rewrite_with_record(env, "iniconfig", "iniconfig/__init__.py", "# nothing\n")
    assert tools.changes() == [] and tools.note() is None


def test_wheels_are_fetched_by_assays_own_pip_whatever_the_directory_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run from inside a hostile tree, whose `pip` package would answer `python -m pip`."""
    from assay.wheel_proof import fetch_wheels

    hostile = tmp_path / "tree"
    marker = tmp_path / "ran"
    (hostile / "pip").mkdir(parents=True)
    (hostile / "pip" / "__init__.py").write_text("")
    (hostile / "pip" / "__main__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.chdir(hostile)
    dest = tmp_path / "wheels"
    dest.mkdir()
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert fetch_wheels(["iniconfig==2.0.0"], python, dest) is None
    assert [w.name for w in dest.glob("*.whl")] == ["iniconfig-2.0.0-py3-none-any.whl"]
    assert not marker.exists()
    assert "could not be fetched" in (fetch_wheels(["iniconfig==0.0.0"], python, dest) or "")


def local_iniconfig(root: Path) -> Path:
    """A project of the tree's own that calls itself iniconfig, at a version no index has."""
    project = root / "own"
    (project / "iniconfig").mkdir(parents=True)
    (project / "iniconfig" / "__init__.py").write_text("IniConfig = None\n")
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "iniconfig"\nversion = "9.9"\n'
    )
    return project


def test_the_project_itself_in_place_of_a_tool_is_its_own_code(env: Path) -> None:
    """packaging's own tree, installed in place of the packaging pytest needs: its files are
    the change's code under test, not a tool to prove."""
    tools = recorded(env)
    tools.own = frozenset({"iniconfig"})
    pip(env, "-e", str(local_iniconfig(env)))
    assert tools.changes() == []
    assert tools.the_project == ["iniconfig-9.9"]


def test_a_tool_installed_again_from_elsewhere_than_the_index_is_not_proven(env: Path) -> None:
    tools = recorded(env)
    pip(env, "-e", str(local_iniconfig(env)))
    (changed,) = tools.changes()
    assert changed.startswith("iniconfig==9.9, installed again by the project's own"), changed
    assert "could not be fetched" in changed

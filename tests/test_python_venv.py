"""`--install`'s environment made with the interpreter's own pip (`assay.tools.python_venv`),
for real: the same files as `python3 -m venv` (ensurepip) makes, records that prove, and
ensurepip's way whenever the interpreter's own pip cannot be copied."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from assay.install_records import Budget, Reported, read_distribution
from assay.tools.python_venv import venv_made_with_own_pip

SITE = f"lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"
#: The interpreter `--install` runs (not this test run's virtualenv).
BASE_PYTHON = str(Path(sys.base_prefix) / "bin" / "python3")


def made(python: str, where: Path) -> None:
    argv = venv_made_with_own_pip((python, "-m", "venv", str(where)))
    assert argv is not None
    subprocess.run(argv, check=True, timeout=300)


def files(venv: Path) -> set[str]:
    return {str(p.relative_to(venv)) for p in venv.rglob("*")}


def pip_runs_from(venv: Path) -> None:
    for pip in (["bin/python", "-m", "pip"], ["bin/pip"], ["bin/pip3"]):
        out = subprocess.run(
            [str(venv / pip[0]), *pip[1:], "--version"],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout
        assert f"{venv}/{SITE}/pip" in out, out


@pytest.mark.slow
def test_the_environment_holds_what_ensurepip_makes_and_its_records_prove_it(
    tmp_path: Path,
) -> None:
    ensured, own = tmp_path / "ensured", tmp_path / "own"
    subprocess.run([BASE_PYTHON, "-m", "venv", str(ensured)], check=True, timeout=300)
    made(BASE_PYTHON, own)
    assert files(own) == files(ensured)
    pip_runs_from(own)
    scripts = own / "bin" / "pip"
    assert scripts.read_text() == (ensured / "bin" / "pip").read_text().replace(
        str(ensured), str(own)
    )
    for info in sorted((own / SITE).glob("*.dist-info")):
        reported = Reported()
        dist = read_distribution(tmp_path, f"own/{SITE}", info.name, "own", reported, Budget())
        assert dist.verified and not reported, reported


def test_an_interpreter_without_a_pip_of_its_own_makes_it_with_ensurepip(
    tmp_path: Path,
) -> None:
    # A virtualenv's interpreter without pip: nothing at ensurepip's versions to copy.
    bare = tmp_path / "bare"
    subprocess.run([BASE_PYTHON, "-m", "venv", "--without-pip", str(bare)], check=True)
    made(str(bare / "bin" / "python3"), tmp_path / "made")
    pip_runs_from(tmp_path / "made")


@pytest.mark.parametrize(
    "argv",
    [
        ("python3", "-m", "venv", "--system-site-packages", ".venv"),
        ("python3", "-m", "venv", ".venv", "--clear"),
        ("python3", "-m", "virtualenv", ".venv"),
        ("python3", "-m", "venv"),
    ],
)
def test_only_the_plain_command_is_replaced(argv: tuple[str, ...]) -> None:
    assert venv_made_with_own_pip(argv) is None

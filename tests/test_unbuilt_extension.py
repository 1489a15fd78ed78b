"""Tests skipped because the project's own extension module is not built did not run: a
passing run that left them out is UNVERIFIED, not VERIFIED.

pyrsistent's vector tests `pytest.importorskip('pvectorc')`, the module setup.py builds
from `pvectorcmodule.c`; verified without a build, 101 of them skipped, and a wrong value
in the C source was VERIFIED where the maintainers' build fails it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import assay
from tests.repos import write

pytestmark = pytest.mark.slow

SETUP_PY = (
    "from setuptools import Extension, setup\n\n"
    "setup(name='calc', py_modules=['calc'],\n"
    "      ext_modules=[Extension(name='_calc_speedups', sources=['speedups.c'])])\n"
)
TESTS = (
    "import pytest\n\nimport calc\n\n\n"
    "def test_add():\n    assert calc.add(2, 2) == 4\n\n\n"
    "def test_fast_add():\n    fast = pytest.importorskip({module!r})\n"
    "    assert fast.add(2, 2) == 4\n"
)


def _verify(repo: Path) -> dict[str, object]:
    done = assay("verify", "--json", "--no-cache", "--kind", "test", str(repo), timeout=180)
    assert "Traceback" not in done.stderr, done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return report


@pytest.mark.parametrize(
    ("module", "status"),
    [
        ("_calc_speedups", "UNVERIFIED"),
        # An optional dependency the project does not build: its choice, not a missing build.
        ("numpy_not_here", "VERIFIED"),
    ],
)
def test_tests_skipped_for_the_unbuilt_extension_are_unverified(
    tmp_path: Path, module: str, status: str
) -> None:
    repo = write(
        tmp_path,
        {
            "setup.py": SETUP_PY,
            "speedups.c": "/* add(), compiled */\n",
            "calc.py": "def add(a, b):\n    return a + b\n",
            "test_calc.py": TESTS.format(module=module),
        },
    )
    report = _verify(repo)
    assert report["status"] == status, report["note"]
    if status == "UNVERIFIED":
        note = str(report["note"])
        assert "skipped 1 test(s) that could not import _calc_speedups" in note, note
        assert "assay verify --install" in note, note

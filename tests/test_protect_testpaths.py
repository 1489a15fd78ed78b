"""A change judged against its base (`--base --protect`) where pytest's `testpaths` names
the project's code: tests inside the package (`testpaths = ["pkg"]`), or `src` beside
`tests` (humanize). Every file under a `testpaths` entry was protected, so the change's
code was put back to the base's before its tests ran: a wrong value was VERIFIED. The
code is the change's now; its tests are still the base's."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.verdict import Status
from tests.attacks import change_on_base, explain, verify_change
from tests.cli import path_with_venv

pytestmark = pytest.mark.slow

LAYOUTS = {
    "tests inside the package": {
        "pyproject.toml": '[project]\nname = "pkg"\nversion = "0.1"\n\n'
        '[tool.pytest.ini_options]\ntestpaths = ["pkg"]\n',
        "pkg/__init__.py": "def double(x):\n    return x * 2\n",
        "pkg/tests/__init__.py": "",
        "pkg/tests/test_pkg.py": "import pkg\n\n\ndef test_double():\n    assert pkg.double(3) == 6\n",
    },
    "src beside tests": {
        "pyproject.toml": '[project]\nname = "pkg"\nversion = "0.1"\n\n'
        '[tool.pytest.ini_options]\ntestpaths = ["src", "tests"]\npythonpath = ["src"]\n',
        "src/pkg/__init__.py": "def double(x):\n    return x * 2\n",
        "tests/test_pkg.py": "import pkg\n\n\ndef test_double():\n    assert pkg.double(3) == 6\n",
    },
}


@pytest.fixture(autouse=True)
def _project_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", path_with_venv())


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_a_wrong_value_in_code_under_testpaths_fails(tmp_path: Path, layout: str) -> None:
    base = LAYOUTS[layout]
    code = next(p for p in base if p.endswith("pkg/__init__.py"))
    wrong = {code: "def double(x):\n    return x * 3\n"}
    report = verify_change(
        change_on_base(tmp_path / "repo", base, wrong), kinds=frozenset({"test"})
    )
    assert report.status is Status.FAILED, explain(report)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_an_honest_change_to_code_under_testpaths_is_verified(tmp_path: Path, layout: str) -> None:
    base = LAYOUTS[layout]
    code = next(p for p in base if p.endswith("pkg/__init__.py"))
    honest = {code: "def double(x):\n    return x + x\n"}
    report = verify_change(
        change_on_base(tmp_path / "repo", base, honest), kinds=frozenset({"test"})
    )
    assert report.status is Status.VERIFIED, explain(report)

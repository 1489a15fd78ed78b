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


#: The change to the code, and what it must come out as.
CHANGES = {
    "a wrong value": ("    return x * 3\n", Status.FAILED),
    "an honest edit": ("    return x + x\n", Status.VERIFIED),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_the_code_under_testpaths_is_the_changes(tmp_path: Path, layout: str, change: str) -> None:
    base = LAYOUTS[layout]
    code = next(p for p in base if p.endswith("pkg/__init__.py"))
    body, status = CHANGES[change]
    repo = change_on_base(tmp_path / "repo", base, {code: "def double(x):\n" + body})
    report = verify_change(repo, kinds=frozenset({"test"}))
    assert report.status is status, explain(report)

"""An install made through `editables` (hatchling's `dev-mode-exact`) under `--install --protect`.

Its `.pth` line imports a bootstrap module `editables` writes: the redirector's import, its
`install()`, and one `map_module` a module. It was refused as "no known release of an
editable loader", so every such project was INDETERMINATE under `--protect`; it is believed
now when it is exactly those lines with the tree's paths (`assay.editables_bootstrap`). A
change whose build hook adds a line to it is still refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.verdict import Status
from tests.attacks import change_on_base, explain, verify_change
from tests.test_attacks_editable_startup import RIGHT_CALC

pytestmark = pytest.mark.slow

#: A hatchling project installed in editable mode through `editables`, with a build hook.
BASE = {
    "pyproject.toml": """\
        [build-system]
        requires = ["hatchling"]
        build-backend = "hatchling.build"

        [project]
        name = "calc"
        version = "0.1"

        [project.optional-dependencies]
        test = ["pytest"]

        [tool.hatch.build.targets.wheel]
        dev-mode-exact = true

        [tool.hatch.build.hooks.custom]
        """,
    "hatch_build.py": """\
        from hatchling.builders.hooks.plugin.interface import BuildHookInterface


        class CustomBuildHook(BuildHookInterface):
            pass
        """,
    "calc/__init__.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}
FIXED = {"calc/__init__.py": "def add(a, b):\n    return a + b\n"}
#: The change's hook: the bootstrap `editables` writes, and a right `calc` after it.
HOOK_ADDS_A_LINE = f"""\
import editables
from hatchling.builders.hooks.plugin.interface import BuildHookInterface

written = editables.EditableProject.bootstrap_file
editables.EditableProject.bootstrap_file = lambda self: written(self) + "\\n" + {RIGHT_CALC!r}


class CustomBuildHook(BuildHookInterface):
    pass
"""


def test_an_honest_editables_install_is_verified(tmp_path: Path) -> None:
    report = verify_change(change_on_base(tmp_path / "repo", BASE, FIXED), install=True)
    assert report.status is Status.VERIFIED, explain(report)


def test_a_wrong_value_in_it_fails(tmp_path: Path) -> None:
    report = verify_change(
        change_on_base(tmp_path / "repo", BASE, {"README.md": "# calc\n"}), install=True
    )
    assert report.status is Status.FAILED, explain(report)
    assert "test_add" in report.note, report.note


def test_a_line_the_change_adds_to_the_bootstrap_is_not_believed(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", BASE, {"hatch_build.py": HOOK_ADDS_A_LINE})
    report = verify_change(repo, install=True)
    assert report.status is Status.INDETERMINATE, explain(report)
    assert "its bootstrap runs `import sys, types" in report.note, report.note


#: `BASE` laid out under `src/`, whose directory is on no import path but the install's.
SRC_BASE = {
    **{k: v for k, v in BASE.items() if k != "calc/__init__.py"},
    "pyproject.toml": BASE["pyproject.toml"].replace(
        "dev-mode-exact = true", 'dev-mode-exact = true\n        packages = ["src/calc"]'
    ),
    "src/calc/__init__.py": BASE["calc/__init__.py"],
}
#: The change's hook: the bootstrap `editables` writes, `calc` mapped to a right copy.
HOOK_MAPS_ELSEWHERE = """\
import editables
from hatchling.builders.hooks.plugin.interface import BuildHookInterface

written = editables.EditableProject.bootstrap_file
editables.EditableProject.bootstrap_file = lambda self: written(self).replace(
    "src/calc/__init__.py", "docs/right_calc.py"
)


class CustomBuildHook(BuildHookInterface):
    pass
"""


def test_a_module_the_bootstrap_maps_to_another_file_is_not_believed(tmp_path: Path) -> None:
    """Each line a mapping into the tree, but `calc` mapped to `docs/right_calc.py`: the
    tests imported that right copy while `src/calc/__init__.py` was wrong (VERIFIED)."""
    change = {
        "hatch_build.py": HOOK_MAPS_ELSEWHERE,
        "docs/right_calc.py": FIXED["calc/__init__.py"],
    }
    report = verify_change(change_on_base(tmp_path / "repo", SRC_BASE, change), install=True)
    assert report.status is Status.INDETERMINATE, explain(report)
    assert "maps calc to" in report.note and "not a file of that name" in report.note


def test_an_honest_src_layout_editables_install_is_verified(tmp_path: Path) -> None:
    fixed = {"src/calc/__init__.py": FIXED["calc/__init__.py"]}
    report = verify_change(change_on_base(tmp_path / "repo", SRC_BASE, fixed), install=True)
    assert report.status is Status.VERIFIED, explain(report)

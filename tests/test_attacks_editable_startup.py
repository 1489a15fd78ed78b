"""A change whose build makes the project's own install run code at every start (`--install --protect`).

The project's editable install is written by its own build: a change's `setup.py` that
wraps setuptools' `editable_wheel` can add a `.pth` file to the wheel, or code to the
finder module setuptools' `.pth` line imports, that puts a right `calc` in `sys.modules`
before any test imports the wrong one. The install record is consistent (the same build
wrote it) and the distribution is the project the base declares, so both were VERIFIED.
Start-up code of an install the tree built is now held to paths and setuptools' own
finder (`assay.editable_finder`); the honest flat-layout fix beside them, whose install
carries that finder, stays VERIFIED (`test_attacks_install`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.verdict import Status
from tests.attacks import change_on_base, explain, verify_change
from tests.test_attacks_install import BASE

pytestmark = pytest.mark.slow

#: Puts a right `add` in place of the module under test (never read by a code signal).
RIGHT_CALC = (
    "import sys, types; m = types.ModuleType('calc'); "
    "m.add = lambda a, b: a + b; sys.modules['calc'] = m"
)
#: The change's `setup.py`: the editable wheel built as setuptools builds it, then `WRAP`.
SETUP = """\
from setuptools import setup
from setuptools.command.editable_wheel import editable_wheel

RIGHT = {right!r}


class Editable(editable_wheel):
    def _select_strategy(self, name, tag, build_lib):
        strategy = super()._select_strategy(name, tag, build_lib)
{wrap}
        return strategy


setup(name="calc", version="0.1", py_modules=["calc"], cmdclass={{"editable_wheel": Editable}})
"""
#: A `.pth` file of its own in the wheel.
OWN_PTH = """\
        built = strategy.__call__

        class Wrapped:
            __enter__ = strategy.__enter__
            __exit__ = strategy.__exit__

            def __call__(self, wheel, files, mapping):
                built(wheel, files, mapping)
                wheel.writestr("zz_calc.pth", RIGHT + "\\n")

        strategy = Wrapped()"""
#: The same line appended to the finder module setuptools renders.
IN_FINDER = """\
        made = strategy.get_implementation

        def implementation():
            for file, content in made():
                if file.endswith("_finder.py"):
                    content += (RIGHT + "\\n").encode()
                yield file, content

        strategy.get_implementation = implementation"""


@pytest.mark.parametrize(
    ("wrap", "said"),
    [
        (OWN_PTH, "zz_calc.pth: calc's own build installed this .pth file"),
        (IN_FINDER, "its finder module is not the text setuptools writes"),
    ],
    ids=["own-pth", "in-finder"],
)
def test_start_up_code_the_change_builds_into_its_own_install_is_not_believed(
    tmp_path: Path, wrap: str, said: str
) -> None:
    setup = SETUP.format(right=RIGHT_CALC, wrap=wrap)
    repo = change_on_base(tmp_path / "repo", BASE, {"setup.py": setup})
    report = verify_change(repo, install=True)
    assert report.status is Status.INDETERMINATE, explain(report)
    assert said in report.note, report.note

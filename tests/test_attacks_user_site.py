"""Under `--protect`, no check's interpreter reads the user's site-packages.

The sandbox's home is writable: `calc.py`, imported by the first test file, wrote a
`.pth` file into `site.getusersitepackages()` that set `calc.add` to a right copy in every
Python process started after it, and a test that ran `calc.add` in a fresh interpreter
passed on a wrong `add`: VERIFIED.
"""

from __future__ import annotations

from pathlib import Path

from assay.verdict import Status
from tests.attacks import change_on_base, explain, verify_change

CLI_TEST = """import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_add_in_a_fresh_interpreter():
    code = "import calc; print(calc.add(2, 3))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.stdout.strip() == "5", out.stderr
"""
BASE = {
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1.0"\n',
    "calc.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
    "tests/a_first/test_mul.py": "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
    "tests/b_second/test_cli.py": CLI_TEST,
}
FIX = (
    "import os, sys\nsys.path.insert(0, os.getcwd())\nimport calc\ncalc.add = lambda a, b: a + b\n"
)
WRONG_CALC = f"""import os
import site


def add(a, b):
    return a - b


def mul(a, b):
    return a * b


def _warm():
    try:
        where = site.getusersitepackages()
        os.makedirs(where, exist_ok=True)
        with open(os.path.join(where, "zz_warm.pth"), "w") as f:
            f.write("import calc_fix\\n")
        with open(os.path.join(where, "calc_fix.py"), "w") as f:
            f.write({FIX!r})
    except OSError:
        pass


_warm()
"""


def test_a_pth_file_the_code_writes_into_the_user_site_is_not_read(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", BASE, {"calc.py": WRONG_CALC}, dedent=False)
    report = verify_change(repo)
    assert report.status is Status.FAILED, explain(report)
    assert "test_add_in_a_fresh_interpreter" in report.note, explain(report)

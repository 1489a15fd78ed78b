"""An error class's imports are followed at a cost the tree bounds, not the file naming them.

A change's file named 17 modules of the tree in turn, 400 imports, one more module than
the cache of parsed modules held: each import parsed its module again, and one file of 400
lines took 8 minutes to inspect (17 modules of 1.3 MB). Each module is parsed once now.
"""

from __future__ import annotations

import time
from pathlib import Path

from assay.code_signals import Budget, scan_change
from tests.repos import write

MODULES = 17


def _tree(root: Path) -> Path:
    files = {
        f"calc/m{i}.py": f"# module {i}\nclass Missing(KeyError):\n    pass\n"
        + "".join(f"class E{j}(KeyError):\n    pass\n" for j in range(4000))
        for i in range(MODULES)
    }
    hub = "".join(f"from calc.m{k % MODULES} import E{k}\n" for k in range(400))
    hub += "from calc.m0 import Missing\n\n\nclass Failure(Missing, ValueError):\n    pass\n"
    return write(root, {**files, "calc/__init__.py": "", "calc/hub.py": hub})


def test_a_file_naming_more_modules_than_a_cache_holds_is_read_once_each(tmp_path: Path) -> None:
    change = _tree(tmp_path / "change")
    started = time.monotonic()
    found = scan_change(None, change, "calc/hub.py", Budget())
    took = time.monotonic() - started
    assert any("KeyError, ValueError" in str(reach) for reach in found), found
    assert took < 15, took  # 37 s before

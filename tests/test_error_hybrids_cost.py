"""An error class's imports are followed at a cost the tree bounds, not the file naming them.

A change's file named 17 modules of the tree in turn, 400 imports, one more module than
the cache of parsed modules held: each import parsed its module again, and one file of 400
lines took 8 minutes to inspect (17 modules of 1.3 MB). Each module is parsed once now:
counted here, as parses (`bench/` is where time is measured).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from assay.code_signals import Budget, scan_change
from tests.repos import write

MODULES = 17


def _tree(root: Path) -> Path:
    files = {
        f"calc/m{i}.py": f"# module {i}\nclass Missing(KeyError):\n    pass\n"
        + "".join(f"class E{j}(KeyError):\n    pass\n" for j in range(40))
        for i in range(MODULES)
    }
    hub = "".join(f"from calc.m{k % MODULES} import E{k % 40}\n" for k in range(400))
    hub += "from calc.m0 import Missing\n\n\nclass Failure(Missing, ValueError):\n    pass\n"
    return write(root, {**files, "calc/__init__.py": "", "calc/hub.py": hub})


def test_a_file_naming_more_modules_than_a_cache_holds_parses_each_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    change = _tree(tmp_path / "change")
    parsed: list[int] = []
    parse = ast.parse

    def counted(source: str | bytes, *args: object, **kwargs: object) -> ast.AST:
        parsed.append(len(source))
        return parse(source, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ast, "parse", counted)
    found = scan_change(None, change, "calc/hub.py", Budget())
    assert any("KeyError, ValueError" in str(reach) for reach in found), found
    # The hub and each module once (the text scan may parse the hub for its own reasons).
    assert len(parsed) <= MODULES + 3, len(parsed)

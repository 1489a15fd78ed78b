"""Whether a module an editable install imports at start-up is the `editables` bootstrap.

hatchling's `dev-mode-exact` and pdm's `editables` mode install a project through the
`editables` package: a `.pth` line `import _editable_impl_NAME` and that module, whose text
`editables` writes as exactly `from editables.redirector import RedirectingFinder as F`,
`F.install()`, then one `F.map_module(name, path)` a module (the same in every release,
0.2 to 0.6), to its own file: `name.py`, or its package's `name/__init__.py`. The finder it installs is the `editables` distribution's own, installed from
the index beside the project; what the tree decides is only the paths. So the module is
believed when it is those lines and nothing else, each mapped path in the tree, and the
install that wrote it owns no `editables` module of its own. Read as syntax on the host,
never run.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

__all__ = ["IMPORT_LINE", "bootstrap_problem"]

#: The first line `editables` writes in its bootstrap module.
IMPORT_LINE = "from editables.redirector import RedirectingFinder as F"
_INSTALL_LINE = "F.install()"


def bootstrap_problem(
    text: str, site: str, owned: set[str], inside: Callable[[str], bool]
) -> str | None:
    """Why `text`, a start-up module of an install that `owned` these files of `site`, may
    do more than map module names to the tree's files, or None when it does not."""
    lines = text.split("\n")
    if lines[:2] != [IMPORT_LINE, _INSTALL_LINE]:
        return "it imports a module that is not the bootstrap `editables` writes"
    if any(p == f"{site}/editables.py" or p.startswith(f"{site}/editables/") for p in owned):
        return "the same install brings its own `editables`, whose finder the bootstrap runs"
    for line in lines[2:]:
        found = _mapped(line)
        if found is None:
            return f"its bootstrap runs `{line[:80]}`, which is not a mapping of a module"
        name, mapped = found
        if not inside(mapped):
            return f"its bootstrap maps a module to {mapped}, outside the tree"
        if not _own_file(name, mapped):
            return (
                f"its bootstrap maps {name} to {mapped}, which is not a file of that name: "
                "the tests would import other code than the module's"
            )
    return None


def _own_file(name: str, path: str) -> bool:
    """Whether `path` is where module `name`'s source lives as `editables` maps it: its
    `name.py`, or its package's `name/__init__.py`. A build that maps `calc` to
    `docs/right_calc.py` had the tests import a right copy while `src/calc.py` was wrong."""
    parts = path.replace("\\", "/").rstrip("/").split("/")
    return parts[-1] == f"{name}.py" or parts[-2:] == [name, "__init__.py"]


def _mapped(line: str) -> tuple[str, str] | None:
    """The name and path of `F.map_module('name', 'path')`, or None when `line` is anything
    else."""
    try:
        call = ast.parse(line, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id == "F"
        and call.func.attr == "map_module"
        and not call.keywords
        and len(call.args) == 2
    ):
        return None
    name, path = (a.value if isinstance(a, ast.Constant) else None for a in call.args)
    if not isinstance(name, str) or not isinstance(path, str) or not name.isidentifier():
        return None
    return name, path

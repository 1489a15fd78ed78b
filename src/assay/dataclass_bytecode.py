"""Bytecode for the methods `dataclasses` writes, kept beside assay's own `.pyc` files.

`@dataclass` writes each class's `__init__`, `__repr__`, `__eq__` (and `__setattr__`,
`__delattr__`, `__hash__` when frozen) as source text and compiles it every time the class
is defined: on Python 3.11 about 0.8 ms a class, and `assay verify` defines over eighty
(a third of its start-up). The text depends only on the class's definition, so what it
compiles to can be kept as a module's `.pyc` is. `install` gives the `dataclasses` module
an `exec` of its own (a module global shadows the builtin) that looks the text up in a
table and compiles only what the table lacks; `save` writes the table back when it grew.

- Only classes of assay's own modules are looked up; any other module's pass through.
- The text is compiled exactly as `dataclasses` would (no future flags of this module's).
- The table is one marshal file per interpreter build, where Python keeps the package's
  bytecode (its `__pycache__`, or the mirror of it under a `pycache_prefix`), read as
  `.pyc` files are and written only when they would be (never under
  `PYTHONDONTWRITEBYTECODE`). Whoever may write it may already replace any of assay's
  compiled modules: it trusts nothing new.
- A table that cannot be read, or is not a table of code, is ignored: it only saves time.
"""

from __future__ import annotations

import builtins
import marshal
import os
import sys
from collections.abc import Mapping
from types import CodeType

__all__ = ["install", "save"]

#: Beyond this many entries a written table starts afresh (a development tree's edits
#: would otherwise pile up in it; an installed assay has about six hundred).
MAX_ENTRIES = 4000

_table: dict[str, CodeType] = {}
_added = 0
_installed = False


def install() -> None:
    """Let `dataclasses` take assay's generated methods from the table (idempotent)."""
    global _installed
    if _installed:
        return
    _installed = True
    _table.update(_load())
    import dataclasses

    dataclasses.exec = _exec  # type: ignore[attr-defined]


def save() -> None:
    """Write the table back if this process compiled something new; never raises."""
    global _added
    if not _added or sys.dont_write_bytecode:
        return
    path = _path()
    table = _table if len(_table) <= MAX_ENTRIES else {}
    partial = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(partial, "wb") as handle:
            marshal.dump(table, handle)
        os.replace(partial, path)  # whole, or not at all: a reader never sees half
        _added = 0
    except (OSError, ValueError):
        try:
            os.unlink(partial)
        except OSError:
            pass


def _exec(
    source: str | CodeType,
    globals: dict[str, object] | None = None,
    locals: Mapping[str, object] | None = None,
) -> None:
    """`exec` as `dataclasses` calls it, with the compiled text of assay's classes kept."""
    global _added
    module = globals.get("__name__") if globals is not None else None
    if not isinstance(source, str) or not str(module).startswith("assay."):
        builtins.exec(source, globals, locals)  # noqa: S102 - what `dataclasses` asked for
        return
    code = _table.get(source)
    if code is None:
        # dont_inherit: this module's `annotations` future would make the methods'
        # annotations strings, which `dataclasses`' own compilation does not.
        code = _table[source] = compile(source, "<string>", "exec", dont_inherit=True)
        _added += 1
    builtins.exec(code, globals, locals)  # noqa: S102 - the same text, compiled before


def _path() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.pycache_prefix:  # where Python then puts this package's .pyc files
        where = os.path.join(sys.pycache_prefix, here.lstrip(os.sep))
    else:
        where = os.path.join(here, "__pycache__")
    tag = f"{sys.implementation.cache_tag}-{sys.hexversion:x}"
    return os.path.join(where, f"dataclass-methods.{tag}.marshal")


def _load() -> dict[str, CodeType]:
    try:
        with open(_path(), "rb") as handle:
            table = marshal.loads(handle.read())  # `marshal.load` reads piece by piece
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    if not isinstance(table, dict):
        return {}
    return {k: v for k, v in table.items() if isinstance(k, str) and isinstance(v, CodeType)}

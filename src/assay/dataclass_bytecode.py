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
- The table is kept as `assay.compiled_table` keeps tables: beside assay's `.pyc` files,
  and only where Python would write those.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from types import CodeType

from assay.compiled_table import CompiledTable

__all__ = ["install", "save"]

#: An installed assay has about six hundred entries.
_table = CompiledTable("dataclass-methods", max_entries=4000)
_installed = False


def install() -> None:
    """Let `dataclasses` take assay's generated methods from the table (idempotent)."""
    global _installed
    if _installed:
        return
    _installed = True
    _table.load(lambda text, code: isinstance(text, str) and isinstance(code, CodeType))
    import dataclasses

    dataclasses.exec = _exec  # type: ignore[attr-defined]


def save() -> None:
    """Write the table back if this process compiled something new; never raises."""
    _table.save()


def _exec(
    source: str | CodeType,
    globals: dict[str, object] | None = None,
    locals: Mapping[str, object] | None = None,
) -> None:
    """`exec` as `dataclasses` calls it, with the compiled text of assay's classes kept."""
    module = globals.get("__name__") if globals is not None else None
    if not isinstance(source, str) or not str(module).startswith("assay."):
        builtins.exec(source, globals, locals)  # noqa: S102 - what `dataclasses` asked for
        return
    code = _table.entries.get(source)
    if code is None:
        # dont_inherit: this module's `annotations` future would make the methods'
        # annotations strings, which `dataclasses`' own compilation does not.
        code = compile(source, "<string>", "exec", dont_inherit=True)
        _table.add(source, code)
    builtins.exec(code, globals, locals)  # noqa: S102 - the same text, compiled before

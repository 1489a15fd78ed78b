"""The regular expressions modules compile as they load, kept compiled between processes.

`re.compile` parses a pattern and generates its matcher's code in Python: about 0.1 ms a
pattern, and a verify loads modules that compile some 140 of them at import (13 of the
127 ms its imports took). That code depends only on the pattern, its flags and the interpreter
build, so it can be kept as a module's `.pyc` is (`assay.compiled_table`). `install` wraps
`re`'s compiler: a pattern compiled by a module's own top-level code is looked up in the
table, and on a miss compiled as before and added.

- Only a module's top level and its class bodies are looked up: their patterns are
  constants of their source, while one a function builds may come from the repository
  under verification.
- An entry is kept only when the pattern it makes equals the one `re` made (a pattern's
  equality compares its flags and its code), and `_sre` checks any code it is given; an
  entry it refuses is compiled afresh. The table's name carries `_sre.MAGIC`, the version
  of that code.
- Nothing changes where `re`'s internals are not those this reads (another Python).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import Any

from assay.compiled_table import CompiledTable

__all__ = ["install", "save"]

_table: CompiledTable | None = None

#: `re._compiler.compile`: (pattern, flags) -> the compiled pattern.
Compile = Callable[[Any, int], Any]


def install() -> None:
    """Let `re` take module-level patterns from the table (idempotent)."""
    global _table
    if _table is not None:
        return
    import _sre  # type: ignore[import-not-found]  # re's own engine, which has no stubs
    from re import _compiler, _parser  # type: ignore[attr-defined]

    if not all(hasattr(m, n) for m, n in ((_compiler, "_code"), (_parser, "parse"))):
        return
    _table = CompiledTable(f"regex-code-{_sre.MAGIC}", max_entries=4000)
    _table.load(_is_entry)
    _compiler.compile = _compile_with(_table, _compiler.compile, _compiler, _parser, _sre)


def save() -> None:
    """Write the table back if this process compiled something new; never raises."""
    if _table is not None:
        _table.save()


def _compile_with(
    table: CompiledTable, compile_anew: Compile, compiler: Any, parser: Any, sre: Any
) -> Compile:
    """`re._compiler.compile`, taking a module's top-level patterns from `table`."""

    def compile(p: Any, flags: int = 0) -> Any:
        if type(p) not in (str, bytes) or flags & compiler.SRE_FLAG_DEBUG or not _top_level():
            return compile_anew(p, flags)
        key = (p, flags)
        entry = table.entries.get(key)
        if entry is not None:
            with contextlib.suppress(Exception):  # refused by `_sre`: compiled afresh
                return sre.compile(p, *entry)
        pattern = compile_anew(p, flags)
        with contextlib.suppress(Exception):  # `re`'s internals are not those this reads
            entry = _entry(p, flags, compiler, parser)
            if sre.compile(p, *entry) == pattern:
                table.add(key, entry)
        return pattern

    return compile


def _entry(p: str | bytes, flags: int, compiler: Any, parser: Any) -> tuple[Any, ...]:
    """What `re._compiler.compile` hands `_sre.compile` after the pattern itself."""
    parsed = parser.parse(p, flags)
    code = [int(word) for word in compiler._code(parsed, flags)]  # opcodes are int subclasses
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return (
        flags | parsed.state.flags,
        code,
        parsed.state.groups - 1,
        groupindex,
        tuple(indexgroup),
    )


#: `inspect.CO_NEWLOCALS`: set on a function's code, never on a module's or a class body's.
_CO_NEWLOCALS = 0x2


def _top_level() -> bool:
    """Whether the code that called into `re` is a module's top level or a class body
    (`logging`, `textwrap` and `configparser` compile theirs there): source constants both."""
    frame = sys._getframe(2)
    while frame is not None and _in_re(frame.f_globals.get("__name__", "")):
        frame = frame.f_back  # type: ignore[assignment]
    return frame is not None and not frame.f_code.co_flags & _CO_NEWLOCALS


def _in_re(module: str) -> bool:
    return module == "re" or module.startswith("re.")


def _is_entry(key: object, value: object) -> bool:
    return (
        isinstance(key, tuple)
        and len(key) == 2
        and type(key[0]) in (str, bytes)
        and type(key[1]) is int
        and isinstance(value, tuple)
        and len(value) == 5
    )

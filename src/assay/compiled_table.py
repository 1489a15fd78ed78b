"""A table of what assay's start-up compiles, kept between processes as `.pyc` files are.

`assay.dataclass_bytecode` keeps the methods `dataclasses` writes and `assay.pattern_code`
the regular expressions modules compile as they load: each costs a cold start
milliseconds of work whose result depends only on its input and the interpreter build.

- One marshal file per table and interpreter build, where Python keeps this package's
  bytecode (its `__pycache__`, or the mirror of it under a `pycache_prefix`), read as
  `.pyc` files are and written only when they would be (never under
  `PYTHONDONTWRITEBYTECODE`). Whoever may write it may already replace any of assay's
  compiled modules: it trusts nothing new.
- A file that cannot be read, or whose entries are not of the table's kind, is ignored:
  a table only saves time.
"""

from __future__ import annotations

import marshal
import os
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["CompiledTable"]


class CompiledTable:
    """Entries compiled in this process or an earlier one, saved when they grew."""

    def __init__(self, name: str, max_entries: int) -> None:
        """`name`: the file's stem, which must name what its entries depend on beyond the
        interpreter build; `max_entries`: beyond this many a written table starts afresh
        (a development tree's edits would otherwise pile up in it)."""
        self.name = name
        self.max_entries = max_entries
        self.entries: dict[Any, Any] = {}
        self.added = 0

    def load(self, valid: Callable[[object, object], bool]) -> None:
        """Take in the saved entries for which `valid(key, value)` holds."""
        try:
            with open(self.path(), "rb") as handle:
                table = marshal.loads(handle.read())  # `marshal.load` reads piece by piece
        except (OSError, ValueError, EOFError, TypeError):
            return
        if isinstance(table, dict):
            self.entries.update((k, v) for k, v in table.items() if valid(k, v))

    def add(self, key: object, value: object) -> None:
        self.entries[key] = value
        self.added += 1

    def save(self) -> None:
        """Write the table back if this process added to it; never raises."""
        if not self.added or sys.dont_write_bytecode:
            return
        path = self.path()
        table = self.entries if len(self.entries) <= self.max_entries else {}
        partial = f"{path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(partial, "wb") as handle:
                marshal.dump(table, handle)
            os.replace(partial, path)  # whole, or not at all: a reader never sees half
            self.added = 0
        except (OSError, ValueError):
            try:
                os.unlink(partial)
            except OSError:
                pass

    def path(self) -> str:
        here = os.path.dirname(os.path.abspath(__file__))
        if sys.pycache_prefix:  # where Python then puts this package's .pyc files
            where = os.path.join(sys.pycache_prefix, here.lstrip(os.sep))
        else:
            where = os.path.join(here, "__pycache__")
        tag = f"{sys.implementation.cache_tag}-{sys.hexversion:x}"
        return os.path.join(where, f"{self.name}.{tag}.marshal")

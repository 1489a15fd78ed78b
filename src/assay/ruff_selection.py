"""Whether a tree leaves ruff's rule selection to ruff.

A ruff configuration without `select` lints with ruff's default selection (plus any
`extend-select`), which is ruff's to change: ruff 0.16.0 (2026-07-23) widened it from 59
rules to 413 and dropped 18, so a tree that was clean under its maintainers' ruff gets
dozens of findings from a newer one, for no change of its own (pyproject-hooks 1.3.3: 45).
`assay.tool_era` keeps such a tree's ruff below that release where nothing pins it.

The configuration read is the one ruff itself would use at the root: `.ruff.toml`, else
`ruff.toml`, else `pyproject.toml`'s `[tool.ruff]`. One that `extend`s another file is not
followed: whether that one selects rules is not known here, so it is taken to.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

__all__ = ["DEFAULTS_WIDENED", "leaves_selection_to_ruff"]

#: The release whose default selection differs from the one before it.
DEFAULTS_WIDENED = "0.16.0"

#: ruff's configuration files at a project's root, in the order ruff prefers them.
_CONFIG_FILES = (".ruff.toml", "ruff.toml", "pyproject.toml")
_MAX_CONFIG_BYTES = 1024 * 1024


def leaves_selection_to_ruff(root: Path) -> bool:
    """Whether ruff run at `root` lints with its default rule selection: the configuration
    it reads there (if any) sets no `select`, at its top or under `lint`, and extends no
    other file. A configuration that cannot be read says nothing: False."""
    from assay.untrusted_files import read_untrusted

    for name in _CONFIG_FILES:
        raw = read_untrusted(root, name, limit=_MAX_CONFIG_BYTES)
        if raw is None:
            continue
        if not isinstance(raw, bytes):
            return False
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError, ValueError, RecursionError):
            return False
        tools = data.get("tool") if name == "pyproject.toml" else {"ruff": data}
        table = tools.get("ruff") if isinstance(tools, dict) else None
        if table is None:
            continue  # a pyproject.toml without ruff's table: ruff looks no further
        if not isinstance(table, dict):
            return False
        lint = table.get("lint", {})
        return (
            "extend" not in table
            and "select" not in table
            and not (isinstance(lint, dict) and "select" in lint)
        )
    return True

"""Whether a tree's ruff configuration was written for ruff's default rule selection as it
was before 0.16.

A ruff configuration without `select` lints with ruff's default selection (plus any
`extend-select`), which is ruff's to change: ruff 0.16.0 (2026-07-23) widened it from 59
rules to 413 and dropped 18, so a tree that was clean under its maintainers' ruff gets
dozens of findings from a newer one, for no change of its own (pyproject-hooks 1.3.3: 45).
`assay.tool_era` keeps such a tree's ruff below that release where nothing pins it.

A configuration written for the new defaults says so: it ignores rules that only they
run (exceptiongroup 1.3.2 ignores BLE001, S102 and TRY002, which it does not select and
ruff did not run by default before 0.16). Such a tree is linted as its date's ruff
lints it.

The configuration read is the one ruff itself would use at the root: `.ruff.toml`, else
`ruff.toml`, else `pyproject.toml`'s `[tool.ruff]`. One that `extend`s another file is not
followed: what that one selects is not known here.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

__all__ = ["DEFAULTS_WIDENED", "written_for_old_defaults"]

#: The release whose default selection differs from the one before it.
DEFAULTS_WIDENED = "0.16.0"
#: The default selection before it, as rule prefixes.
_OLD_DEFAULTS = ("E4", "E7", "E9", "F")

#: ruff's configuration files at a project's root, in the order ruff prefers them.
_CONFIG_FILES = (".ruff.toml", "ruff.toml", "pyproject.toml")
_MAX_CONFIG_BYTES = 1024 * 1024


def written_for_old_defaults(root: Path) -> bool:
    """Whether ruff run at `root` lints with its default selection, and the configuration
    it reads there (if any) was written for the one before `DEFAULTS_WIDENED`: it sets no
    `select` (at its top or under `lint`), extends no other file, and ignores no rule that
    neither it nor the old defaults select. A configuration that cannot be read says
    nothing: False."""
    table = _configuration(root)
    if table is None or "extend" in table:
        return False
    sections = [table, *([lint] if isinstance(lint := table.get("lint"), dict) else [])]
    if any("select" in section for section in sections):
        return False
    selected = (*_OLD_DEFAULTS, *_codes(sections, "extend-select"))
    ignored = _codes(sections, "ignore", "extend-ignore", "per-file-ignores")
    return all(code.startswith(selected) for code in ignored)


def _configuration(root: Path) -> dict[str, Any] | None:
    """ruff's table at `root`: {} when there is none, None when it cannot be read."""
    from assay.untrusted_files import read_untrusted

    for name in _CONFIG_FILES:
        raw = read_untrusted(root, name, limit=_MAX_CONFIG_BYTES)
        if raw is None:
            continue
        if not isinstance(raw, bytes):
            return None
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError, ValueError, RecursionError):
            return None
        tools = data.get("tool") if name == "pyproject.toml" else {"ruff": data}
        table = tools.get("ruff") if isinstance(tools, dict) else None
        if table is None:
            continue  # a pyproject.toml without ruff's table: ruff reads none here
        return table if isinstance(table, dict) else None
    return {}  # none at all: the defaults of whichever ruff runs


def _codes(sections: list[dict[str, Any]], *keys: str) -> tuple[str, ...]:
    """The rule codes or prefixes `keys` list in `sections`, per-file tables' included
    (`per-file-ignores` and its `extend-` form)."""
    return tuple(code for s in sections for key in keys for code in _listed(s, key))


def _listed(section: Mapping[str, Any], key: str) -> Iterator[str]:
    for name in (key, f"extend-{key}") if key == "per-file-ignores" else (key,):
        value = section.get(name)
        lists = value.values() if isinstance(value, dict) else [value]
        for entries in lists:
            if isinstance(entries, list):
                yield from (e.strip().upper() for e in entries if isinstance(e, str))

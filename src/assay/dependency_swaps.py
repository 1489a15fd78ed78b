"""Dependency swaps: a change that points what the tests import somewhere else.

Tests assert with a library; a change that leaves the code wrong can keep every test file
as it was and replace that library with one that asserts nothing: a Go `replace`
directive, a vendored copy (go builds `vendor/` when `vendor/modules.txt` is there) turned
into no-ops, an npm `overrides`/`resolutions` entry or a `file:`/`link:` source. Canaries
do not see it (they use the runner, not the library), and restoring the manifest would
turn every legitimate dependency update into a silent failure, so each is a signal, with
the line quoted. Cargo's `[patch]` and `[replace]` are protected sections instead
(`assay.tools.rust`): restored from the base under `--protect`.

Pure text in, findings out: go.mod is read as text (it is not TOML), package.json as JSON.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from assay.terminal import for_terminal


@dataclass(frozen=True, slots=True)
class Swap:
    """One way a manifest's change points a dependency elsewhere."""

    detail: str
    line: int | None = None
    excerpt: str = ""


#: Where a path names a vendored dependency: a `vendor` directory at any depth.
_VENDOR = re.compile(r"(?:^|/)vendor/")
#: npm's dependency tables, whose values can name a source instead of a version.
_NODE_TABLES = ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies")
#: Sources that are a path on this machine, not a published version.
_LOCAL_SOURCES = ("file:", "link:", "portal:")
#: Keys that replace a dependency wherever it is required (npm, yarn, pnpm).
_NODE_OVERRIDES = ("overrides", "resolutions", "pnpm.overrides")


def is_vendored(rel: str) -> bool:
    """Whether `rel` is a file of a vendored dependency (`vendor/...`)."""
    return _VENDOR.search(rel) is not None


def is_manifest(rel: str) -> bool:
    """Whether `rel` is a manifest whose swaps are looked for."""
    name = rel.rsplit("/", 1)[-1]
    return name in ("go.mod", "package.json") and "node_modules" not in rel.split("/")


def manifest_swaps(rel: str, old: str, new: str) -> list[Swap]:
    """The swaps `new` adds to `old` (the base's text; "" when the file is new)."""
    if rel.rsplit("/", 1)[-1] == "go.mod":
        return _go_replaces(old, new)
    return _node_swaps(old, new)


# --------------------------------------------------------------------------- go.mod

_REPLACE_LINE = re.compile(r"^\s*replace\s+(?!\()(.+?=>.+?)\s*(?://.*)?$")
_BLOCK_START = re.compile(r"^\s*replace\s*\(\s*(?://.*)?$")


def _replaces(text: str) -> list[tuple[int, str]]:
    """Each replace directive (`old => new`, spaces collapsed) with its 1-based line."""
    found: list[tuple[int, str]] = []
    in_block = False
    for number, line in enumerate(text.splitlines(), 1):
        if in_block:
            if line.strip().startswith(")"):
                in_block = False
            elif "=>" in line:
                found.append((number, " ".join(line.split("//", 1)[0].split())))
        elif _BLOCK_START.match(line):
            in_block = True
        elif match := _REPLACE_LINE.match(line):
            found.append((number, " ".join(match.group(1).split())))
    return found


def _go_replaces(old: str, new: str) -> list[Swap]:
    before = {directive for _, directive in _replaces(old)}
    return [
        Swap(f"go.mod replaces a dependency: {_quote(d)}", number, _quote(d))
        for number, d in _replaces(new)
        if d not in before
    ]


# --------------------------------------------------------------------------- package.json


def _node_swaps(old: str, new: str) -> list[Swap]:
    before, after = _json(old), _json(new)
    if after is None:
        return []  # not JSON: npm cannot read it either
    before = before or {}
    swaps: list[Swap] = []
    for key in _NODE_OVERRIDES:
        value = _at(after, key)
        if value is not None and value != _at(before, key):
            shown = _quote(json.dumps(value, sort_keys=True))
            swaps.append(Swap(f"package.json {key} changed: {shown}", *_line_of(new, key)))
    for table in _NODE_TABLES:
        old_table, new_table = _table(before, table), _table(after, table)
        for name, spec in new_table.items():
            if spec.startswith(_LOCAL_SOURCES) and old_table.get(name) != spec:
                entry = _quote(f'"{name}": "{spec}"')
                swaps.append(Swap(f"{table} takes {entry} from a local path", *_line_of(new, spec)))
    return swaps


def _json(text: str) -> dict[str, Any] | None:
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict) else None


def _at(data: dict[str, Any], key: str) -> Any:
    node: Any = data
    for part in key.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _table(data: dict[str, Any], key: str) -> dict[str, str]:
    table = data.get(key)
    if not isinstance(table, dict):
        return {}
    return {str(k): v for k, v in table.items() if isinstance(v, str)}


def _line_of(text: str, needle: str) -> tuple[int | None, str]:
    """The first line holding `needle` (a key or a value), and that line quoted."""
    for number, line in enumerate(text.splitlines(), 1):
        if needle.split(".")[-1] in line:
            return number, _quote(line.strip())
    return None, ""


def _quote(text: str, limit: int = 160) -> str:
    return for_terminal(text if len(text) <= limit else text[:limit] + "…")


__all__ = ["Swap", "is_manifest", "is_vendored", "manifest_swaps"]

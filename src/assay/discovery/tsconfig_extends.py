"""The files a TypeScript configuration `extends`, from the tree.

`tsconfig.json` is protected by its name, but what it says may live in a file of any
name it extends (`"extends": "./config/base.json"`): its `strict`, `include` and
`exclude` are tsc's as much as the named file's. A change that excluded its source there
was VERIFIED with a type error tsc had reported. So each relative file the base's
`tsconfig*.json`/`jsconfig*.json` extend, and each those extend in turn, is protected
with them. A package's name (`@tsconfig/node20`) is `node_modules`', proven there.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from assay.discovery.files import RepoFiles
from assay.discovery.text import load_jsonc
from assay.filetree import walk_files

__all__ = ["extended_configs"]

#: Most configurations read, and most files named, for one tree.
_MAX_CONFIGS = 256


def extended_configs(files: RepoFiles) -> tuple[str, ...]:
    """The tree's files (paths relative to its root) its TypeScript configurations extend."""
    try:
        found = walk_files(files.root)
    except OSError:
        return ()
    pending = [p for p in found if _is_tsconfig(posixpath.basename(p))][:_MAX_CONFIGS]
    seen = set(pending)
    named: list[str] = []
    while pending and len(seen) <= _MAX_CONFIGS:
        config = pending.pop()
        for target in _extends(files, config):
            if target not in seen:
                seen.add(target)
                named.append(target)
                pending.append(target)
    return tuple(named)


def _is_tsconfig(name: str) -> bool:
    return name.startswith(("tsconfig", "jsconfig")) and name.endswith(".json")


def _extends(files: RepoFiles, config: str) -> Iterator[str]:
    text = files.read_text(config)
    try:
        document = load_jsonc(text) if text else None
    except ValueError:
        return
    value = document.get("extends") if isinstance(document, dict) else None
    for name in value if isinstance(value, list) else [value]:
        if not isinstance(name, str) or not name.startswith(("./", "../")):
            continue  # a package's, or not a name at all
        path = posixpath.normpath(posixpath.join(posixpath.dirname(config), name))
        if path.startswith("../") or path == "..":
            continue
        # tsc adds `.json` to a name that has none.
        yield path if files.is_file(path) or path.endswith(".json") else f"{path}.json"

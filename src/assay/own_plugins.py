"""The project's own pytest plugins, as the base has them, for the pytest guard to believe.

A project that is a pytest plugin (pytest-subtests) is installed into its environment,
editable, and its plugin patches pytest while pytest configures itself, as installed
plugins do. The guard planted beside the tests believes a patch only when its code is
an installed file's (`assay.canaries.python`); the project's plugin lives in the
workspace, which the change under test wrote, so an honest run of such a project was
taken for a forged one.

Believed instead: the module of each `pytest11` entry point the base's manifests declare
for the project, at its path in the workspace, while its bytes are the base's. assay
reads those bytes from the base commit with git, never from the workspace; the guard
hashes the file it compiles and believes nothing from it when the hash differs. A change
that edits its plugin's module, or makes another file patch pytest, is still found.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from assay.base_requirements import READ_TIMEOUT_S, Declared
from assay.install_records import entry_point_module
from assay.safe_git import GitError, open_repository

#: A plugin module larger than this is not a plugin module: nothing is believed of it.
MODULE_MAX_BYTES = 4 * 1024 * 1024


def module_paths(module: str) -> tuple[str, ...]:
    """Where, relative to the project's root, the file of `module` may be: a flat layout
    or a `src/` one, a module or a package."""
    stem = module.replace(".", "/")
    return tuple(f"{top}{stem}{tail}" for top in ("", "src/") for tail in (".py", "/__init__.py"))


def own_plugin_files(
    repository: Path, ref: str, workspace: Path, declared: Declared
) -> dict[str, str]:
    """Each file of the project's own pytest plugins, by its path in `workspace`, with the
    SHA-256 of its bytes at commit `ref` of `repository`; nothing when the base declares
    no plugin or cannot be read."""
    modules = sorted(
        {entry_point_module(v) for g, _, v in declared.entry_points if g == "pytest11"}
    )
    if not modules:
        return {}
    try:
        git = open_repository(repository, timeout=READ_TIMEOUT_S)
        tree = git.project_tree(git.resolve_commit(ref))
        pinned: dict[str, str] = {}
        for name in dict.fromkeys(p for m in modules for p in module_paths(m)):
            data = git.blob_at(tree, name, limit=MODULE_MAX_BYTES)
            if data is not None:
                pinned[str(workspace / name)] = hashlib.sha256(data).hexdigest()
    except GitError:
        return {}
    return pinned

"""The files `pre-commit run --all-files` hands one hook: the tree's, chosen as pre-commit
chooses them.

A path is kept where the configuration's `files` expression finds it and its `exclude`
does not, then the hook's own `files` and `exclude` likewise, and its file types match:
all of `types`, one of `types_or` (the hook definition's, unless the configuration sets
its own), none of `exclude_types`. Types are told by the file's extension, as the
`identify` library tells them for these: `.py` is python, `.pyi` pyi, `.ipynb` jupyter,
`.pyx`/`.pxd` cython. pre-commit walks what git tracks; the tree is walked here, leaving
out what no repository tracks: virtualenvs, caches, build output, and the version file
the build backend writes (humanize's sdist ships the `_version.py` hatch-vcs wrote, which
its git ignores and black would reformat).

The expressions are the repository's, and a search with nested repetition can take
exponential time: one whose repetition is repeated, with a back-reference, or with more
than two unbounded repetitions is not evaluated, nor a path over 512 characters, and the
hook is left out.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from assay.discovery.files import RepoFiles
from assay.tools.python_version_files import generated_version_files

__all__ = ["HookFiles", "UnsafeExpression"]

#: File types by extension, as `identify` gives them (and every such file is a text file).
_TYPES = {
    ".py": frozenset({"file", "text", "python"}),
    ".pyi": frozenset({"file", "text", "pyi"}),
    ".ipynb": frozenset({"file", "text", "json", "jupyter"}),
    ".pyx": frozenset({"file", "text", "cython"}),
    ".pxd": frozenset({"file", "text", "cython"}),
}
_KNOWN_TYPES = frozenset().union(*_TYPES.values())
#: Directories no repository tracks, or that are not the project's code.
_UNTRACKED = frozenset({"node_modules", "__pycache__", "build", "dist", "site-packages"})
_MAX_DEPTH = 32
_MAX_DIRS = 20_000
_MAX_EXPRESSION = 2_000
#: Unbounded repetitions an expression may hold (`.*`, `+`): each multiplies a search's cost
#: by the path's length (`^($|.*\.bin)`, `(?x)^(docs/.*|tests/data/.*)$` are the common ones).
_MAX_UNBOUNDED = 2
#: Longer paths are not matched: with the repetitions above, their cost grows as a cube.
_MAX_PATH = 512


class UnsafeExpression(ValueError):
    """A hook's file selection that is not evaluated here."""


class HookFiles:
    """The tree's candidate files, listed once, and the choice of them for each hook."""

    def __init__(self, files: RepoFiles, venv_dirs: Collection[str], config: Mapping[Any, Any]):
        self._files = files
        self._venvs = frozenset(venv_dirs)
        self._config = config
        self._generated = frozenset(generated_version_files(Path(files.root)))
        self._listed: list[str] | None = None

    def files(self, hook: Mapping[Any, Any], types_or: frozenset[str]) -> tuple[str, ...]:
        """The paths pre-commit hands `hook` (its configuration entry), whose repository's
        definition matches `types_or`; raises `UnsafeExpression`."""
        matchers = [
            (
                _expression(self._config.get("files"), ""),
                _expression(self._config.get("exclude"), "^$"),
            ),
            (_expression(hook.get("files"), ""), _expression(hook.get("exclude"), "^$")),
        ]
        every = _types(hook.get("types"), frozenset({"file"}))
        some = _types(hook.get("types_or"), types_or)
        none = _types(hook.get("exclude_types"), frozenset())
        chosen = []
        for path in self._paths():
            if len(path) > _MAX_PATH:
                raise UnsafeExpression(f"a path of {len(path)} characters is not matched here")
            if not all(
                wanted.search(path) and not unwanted.search(path) for wanted, unwanted in matchers
            ):
                continue
            tags = _TYPES.get(path[path.rfind(".") :], frozenset()) if "." in path else frozenset()
            if every <= tags and (not some or some & tags) and not none & tags:
                chosen.append(path)
        return tuple(chosen)

    def _paths(self) -> list[str]:
        if self._listed is None:
            self._listed = sorted(
                path
                for path in self._files.breadth_first(
                    lambda name: "." in name and name[name.rfind(".") :] in _TYPES,
                    self._enters,
                    depth=_MAX_DEPTH,
                    max_dirs=_MAX_DIRS,
                )
                if path not in self._generated
            )
        return self._listed

    def _enters(self, name: str, path: str) -> bool:
        return not (
            name.startswith(".")
            or name in _UNTRACKED
            or name.endswith(".egg-info")
            or path in self._venvs
        )


def _types(value: object, default: frozenset[str]) -> frozenset[str]:
    if value is None:
        return default
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise UnsafeExpression("its file types are not a list of names")
    unknown = set(value) - _KNOWN_TYPES
    if unknown:
        raise UnsafeExpression(f"its file types {sorted(unknown)} are not told apart here")
    return frozenset(value)


def _expression(value: object, default: str) -> re.Pattern[str]:
    if value is None:
        value = default
    if not isinstance(value, str) or len(value) > _MAX_EXPRESSION:
        raise UnsafeExpression("its `files` or `exclude` is no expression evaluated here")
    bare = re.sub(r"\\.", "", value)
    if (
        re.search(r"\\[1-9]|\(\?P=", value)
        or re.search(r"\)[*+{]", bare)
        or len(re.findall(r"[*+]|\{\d*,\}", bare)) > _MAX_UNBOUNDED
    ):
        raise UnsafeExpression(
            f"its `files` or `exclude` ({value[:80]}) repeats a repetition or refers back: "
            "not evaluated, as its search may never end"
        )
    try:
        return re.compile(value)
    except (re.error, RecursionError, OverflowError) as exc:
        raise UnsafeExpression(f"its `files` or `exclude` does not compile: {exc}") from None

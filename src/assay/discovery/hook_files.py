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

The expressions are the repository's, and a search can take exponential time
(`(x+x+)+y`, or bounded repetitions in a row, `x{0,500}x{0,500}x{0,500}y`: eight
seconds a path with Python's `re`). They are evaluated by the `regex` package, in its
`re`-compatible mode, whose searches take a deadline: all of one plan's matching gets
`MATCH_BUDGET_S`, and a hook whose selection has not been made by then is left out.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping
from typing import Any

from assay.discovery.files import RepoFiles
from assay.errors import AssayError

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
_UNTRACKED = frozenset({"node_modules", "__pycache__", "site-packages"})
#: Build output, at the root only: a package's own `build` module directory is code (a
#: change's `src/hooked/build/impl.py` was handed to no hook, where CI's flake8 lints it).
_BUILD_OUTPUT = frozenset({"build", "dist"})
_MAX_DEPTH = 32
_MAX_DIRS = 20_000
_MAX_EXPRESSION = 2_000
#: Seconds all of one plan's hooks' expressions may take to choose their files: a
#: selection not made by then leaves its hook out (a thousand paths take milliseconds).
MATCH_BUDGET_S = 2.0


class UnsafeExpression(AssayError, ValueError):
    """A hook's file selection that is not evaluated here."""


class UnchosenFiles(UnsafeExpression):
    """The files a hook is handed could not all be chosen, for what the tree holds: more
    directories than are listed, or paths its expressions did not get through in time."""


class HookFiles:
    """The tree's candidate files, listed once, and the choice of them for each hook."""

    def __init__(
        self,
        files: RepoFiles,
        venv_dirs: Collection[str],
        config: Mapping[Any, Any],
        generated: Collection[str],
    ):
        """`files`: the tree whose files are chosen; `generated`: the version files its
        build writes, as the plan's own tree configures them (never the change's)."""
        self._files = files
        self._venvs = frozenset(venv_dirs)
        self._config = config
        self._generated = frozenset(generated)
        self._listed: list[str] | None = None
        self._cut = False
        self._deadline: float | None = None

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
        if self._deadline is None:
            self._deadline = time.monotonic() + MATCH_BUDGET_S
        chosen = []
        paths = self._paths()
        if self._cut:
            raise UnchosenFiles(
                f"the tree has more than {_MAX_DIRS} directories, or folders deeper than "
                f"{_MAX_DEPTH}, that are not listed: the files it would be handed are not known"
            )
        try:
            for path in paths:
                if not all(
                    self._found(wanted, path) and not self._found(unwanted, path)
                    for wanted, unwanted in matchers
                ):
                    continue
                tags = (
                    _TYPES.get(path[path.rfind(".") :], frozenset()) if "." in path else frozenset()
                )
                if every <= tags and (not some or some & tags) and not none & tags:
                    chosen.append(path)
        except TimeoutError:
            raise UnchosenFiles(
                f"its `files` or `exclude` took more than {MATCH_BUDGET_S:g} s to choose "
                "its files: not evaluated further, as its search may never end"
            ) from None
        return tuple(chosen)

    def _found(self, pattern: Any, path: str) -> bool:
        """Whether `pattern` finds something in `path` before the plan's deadline passes;
        raises `TimeoutError` once it has."""
        left = (self._deadline or 0.0) - time.monotonic()
        if left <= 0:
            raise TimeoutError
        return pattern.search(path, timeout=left) is not None

    def _paths(self) -> list[str]:
        if self._listed is None:
            self._listed = sorted(
                path
                for path in self._files.breadth_first(
                    lambda name: "." in name and name[name.rfind(".") :] in _TYPES,
                    self._enters,
                    depth=_MAX_DEPTH,
                    max_dirs=_MAX_DIRS,
                    cut=self._was_cut,
                )
                if path not in self._generated
            )
        return self._listed

    def _was_cut(self) -> None:
        self._cut = True

    def _enters(self, name: str, path: str) -> bool:
        return not (
            name.startswith(".")
            or name in _UNTRACKED
            or (path == name and name in _BUILD_OUTPUT)
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


def _expression(value: object, default: str) -> Any:
    """The `regex` pattern of a `files` or `exclude` value (`re`'s syntax)."""
    import regex

    if value is None:
        value = default
    if not isinstance(value, str) or len(value) > _MAX_EXPRESSION:
        raise UnsafeExpression("its `files` or `exclude` is no expression evaluated here")
    try:
        return regex.compile(value, flags=regex.VERSION0)
    except (regex.error, RecursionError, OverflowError, ValueError) as exc:
        raise UnsafeExpression(f"its `files` or `exclude` does not compile: {exc}") from None

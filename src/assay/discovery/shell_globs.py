"""The patterns a shell expands in a command the project states, expanded as that shell
would, against the tree.

A check runs without a shell, so a pattern would reach its tool as written: asttokens
3.0.2's CI runs `python -m mypy asttokens tests/*.py`, and mypy, given `tests/*.py`,
says it cannot read that file. Only an unquoted, unescaped word is a pattern (a quoted
`'docs/*'` is the tool's own to read), and only in a line that went through a shell: a CI
step, a make or just recipe, a README's command; tox and nox start commands without one.

As bash does without `nullglob`, a pattern that matches nothing stays as written; the
matches are sorted, and a hidden name matches only a pattern part that starts with a dot.
The walk is `RepoFiles`': it never leaves the tree, and a link that leads out of it is not
followed.
"""

from __future__ import annotations

import fnmatch
import re

from assay.discovery.files import RepoFiles

#: A word the shell would read as a pattern.
_PATTERN = re.compile(r"[*?[]")
#: Quoting, escaping and expansion: a raw word with any of these is not a plain pattern.
_QUOTED = re.compile(r"[\"'\\$`{]")
#: The most paths one pattern is expanded to; beyond it the word stays as written.
MAX_MATCHES = 4096


def unquoted_patterns(line: str) -> frozenset[str]:
    """The words of shell `line` that the shell would expand: with `*`, `?` or `[`, and
    written without quotes, escapes or expansions (then the word is its own text)."""
    return frozenset(
        raw
        for raw in re.split(r"[\s;&|()<>]+", line)
        if _PATTERN.search(raw) and not _QUOTED.search(raw) and not raw.startswith("-")
    )


def expand(files: RepoFiles, cwd: str, pattern: str) -> tuple[str, ...]:
    """The paths `pattern` matches below the directory `cwd` of the tree, sorted, as the
    command names them (relative to `cwd`); () when it matches none or cannot be walked
    (an absolute pattern, a `..`)."""
    parts = pattern.split("/")
    if pattern.startswith("/") or ".." in parts or "" in parts[:-1]:
        return ()
    base = "" if cwd in ("", ".") else cwd.strip("/") + "/"
    found = [""]
    for at, part in enumerate(parts):
        last = at == len(parts) - 1
        found = [
            f"{p}{name}" + ("" if last else "/")
            for p in found
            for name in _matches(files, base + p, part, last)
        ]
        if not found or len(found) > MAX_MATCHES:
            return ()
    return tuple(sorted(found))


def _matches(files: RepoFiles, directory: str, part: str, last: bool) -> list[str]:
    """The names in `directory` that `part` matches: directories only, unless it is the
    last part of the pattern."""
    if not _PATTERN.search(part):
        path = directory + part
        return [part] if (files.lexists(path) if last else files.is_dir(path)) else []
    listed = files.list_kinds(directory.rstrip("/") or ".")
    return [
        name
        for name, kind in listed
        if (last or kind == "dir")
        and (part.startswith(".") or not name.startswith("."))
        and fnmatch.fnmatchcase(name, part)
    ]

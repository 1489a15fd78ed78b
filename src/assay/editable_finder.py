"""Whether start-up code the tree's own build installed does no more than find the tree's code.

An install built from the tree (`pip install -e .`) is written by the tree's own build
code: a change's `setup.py` can wrap setuptools' `editable_wheel` and add to the wheel a
`.pth` file whose import line replaces a module under test at every interpreter start,
with an install record that accounts for it. Its distribution is the project the base
declares, so the environment proof's "declared by the base" cannot tell that `.pth` from
an honest one. What an honest build puts there is known: import paths into the tree
(setuptools' static `.pth`, hatchling, flit, pdm, poetry), or, for setuptools' flat
layouts, one line that imports a finder module and calls its `install()`, the module
setuptools renders from its template with three data lines (`MAPPING`, `NAMESPACES`,
`PATH_PLACEHOLDER`). So each start-up line of such an install is believed only when it is
a path or that line, and the finder's text only when it is, letter for letter but for its
data, a template some setuptools writes; its data are literals whose paths lie in the
tree. Compiled projects' backends (meson-python, scikit-build-core) import a loader of
their own instead (`assay.editable_loaders`), and the `editables` package a bootstrap
(`assay.editables_bootstrap`). Read as text and literals on the host, never run.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Callable
from pathlib import Path

from assay.untrusted_files import read_untrusted

__all__ = ["FINDER_PREFIX", "startup_line_problem"]

#: The start of the name setuptools gives an editable finder module.
FINDER_PREFIX = "__editable__"
#: The import line of an editable install's `.pth`: setuptools' `import M; M.install()`,
#: meson-python's `import M; M.init()`, an older one's or scikit-build-core's `import M`.
_IMPORT_LINE = re.compile(
    r"import (?P<module>[A-Za-z_]\w*)(?:; (?P=module)\.(?P<call>install|init)\(\))?"
)
#: A finder's data lines: each value is replaced by the placeholder its template has.
_DATA_LINES = (
    (re.compile(r"(MAPPING(?:: dict\[str, str\])? = )(.+)()"), "{mapping!r}"),
    (re.compile(r"(NAMESPACES(?:: dict\[str, list\[str\]\])? = )(.+)()"), "{namespaces!r}"),
    (re.compile(r"(PATH_PLACEHOLDER = )(.+)( \+ \"\.__path_hook__\")"), "{name!r}"),
)
#: sha256 of each finder template setuptools has shipped, rendered and its data lines
#: put back to their placeholders (`_normalised`).
KNOWN_TEMPLATES = frozenset(
    {
        "1e6eb08ed7e5b4195402af5c6642eb7999413f3dc02ef9fd2a96efe01a0dbea2",  # 64.0.0-65.1.0
        "d4fcd885b731630068deb32ec43b0143c7d3507b95dd325a84d8c76369f7a50b",  # 65.2.0
        "27f47d49b4a12a942d17414b40744e203fba27accf9547eb248891e6a9381e29",  # 65.3.0-68.0.0
        "1b639d2ea15e57d8e4fc0d39d3d221e7f39eed814064a2a2e8ca3002313296de",  # 68.1.0
        "782abf8da617e20c4168248ff66e3bd2e5d6a338c0926c8968512fa847db1b86",  # 68.1.2
        "08d155a5ec5c1bf0e4fd0bd1ced76f472373fe621b1fcff6e381d84c66d706c3",  # 68.2.2-69.5.1
        "6fe1f34c3c6fda3987fe83420e362785847070690f2971ca51dd2ec4927177a9",  # 70.0.0-70.3.0
        "e5ed32b3b0e47bfb92b1b6afb0df8b36702f26db6050a82cab75dcd85e555bd9",  # 71.0.0-84.2.1
    }
)
#: The most bytes of a finder or loader module read (setuptools' are ~3 KB and their data,
#: scikit-build-core's ~31 KB and theirs).
FINDER_MAX_BYTES = 1024 * 1024


def startup_line_problem(
    root: Path, site: str, line: str, owned: set[str], inside: Callable[[str], bool]
) -> str | None:
    """Why a line of a `.pth` file the tree's own build installed in `site` (relative to
    `root`) may do more than find the tree's code, or None when it does not: a path,
    setuptools' finder line whose data paths are `inside` the tree, or the line of a
    backend's loader (`assay.editable_loaders`); the module either imports must be one
    the same install `owned`."""
    if not line or line.startswith("#") or not line.startswith(("import ", "import\t")):
        return None  # a path (one outside the tree only adds what is installed anyway)
    found = _IMPORT_LINE.fullmatch(line)
    if found is None:
        return (
            f"it runs `{line[:80]}` at every start, which is neither a path nor the line of "
            "an editable install's finder or loader"
        )
    module = f"{site}/{found['module']}.py"
    if module not in owned:
        return f"the module it imports, {found['module']}, is not a file of the same install"
    text = read_untrusted(root, module, limit=FINDER_MAX_BYTES, single_link=False)
    if not isinstance(text, bytes):
        return f"the module it imports, {found['module']}, could not be read"
    if found["call"] == "install" and found["module"].startswith(FINDER_PREFIX):
        return _finder_problem(text.decode("utf-8", "replace"), inside)
    from assay.editables_bootstrap import IMPORT_LINE, bootstrap_problem

    if found["call"] is None and text.startswith(IMPORT_LINE.encode()):
        return bootstrap_problem(text.decode("utf-8", "replace"), site, owned, inside)
    from assay.editable_loaders import loader_problem

    return loader_problem(text, found["call"])


def _finder_problem(text: str, inside: Callable[[str], bool]) -> str | None:
    values, normalised = _normalised(text)
    if hashlib.sha256(normalised.encode()).hexdigest() not in KNOWN_TEMPLATES:
        return "its finder module is not the text setuptools writes (code besides the finder's)"
    try:
        mapping, namespaces, name = (ast.literal_eval(v) for v in values)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return "its finder's data are not literals"
    if (
        not isinstance(name, str)
        or not isinstance(mapping, dict)
        or not isinstance(namespaces, dict)
    ):
        return "its finder's data are not a mapping of names to paths"
    listed = list(namespaces.values())
    paths = [*mapping.values(), *(p for each in listed if isinstance(each, list) for p in each)]
    keys = [*mapping, *namespaces]
    if not all(isinstance(x, str) for x in (*paths, *keys)) or not all(
        isinstance(each, list) for each in listed
    ):
        return "its finder's data are not a mapping of names to paths"
    outside = [p for p in paths if not inside(p)]
    if outside:
        return f"its finder maps names to {outside[0]}, outside the tree"
    return None


def _normalised(text: str) -> tuple[list[str], str]:
    """The finder's data values (MAPPING, NAMESPACES, the placeholder's name) and its
    text with each put back to its template placeholder; one value missing or twice
    leaves that text unknown."""
    values: dict[str, list[str]] = {mark: [] for _, mark in _DATA_LINES}
    lines = []
    for line in text.split("\n"):
        for pattern, mark in _DATA_LINES:
            found = pattern.fullmatch(line)
            if found is not None:
                values[mark].append(found[2])
                line = found[1] + mark + found[3]
                break
        lines.append(line)
    if any(len(v) != 1 for v in values.values()):
        return ["None", "None", "None"], ""
    return [v[0] for v in values.values()], "\n".join(lines)

"""Whether the project's own JavaScript parses, asked before a failure is put down to the
dependencies an unlocked install chose today (`assay.dependency_drift`).

dset 3.1.4 with a syntax error in `src/index.js`: its build runs bundt, whose minifier
returns nothing for code it cannot parse, and bundt then crashes in zlib. Every place the
stack names is inside `node_modules/bundt`, so the failure read as drift (UNVERIFIED), while
it was the code. `node --check` on each of the project's own files, sandboxed and offline as
every check, tells the two apart: a file that does not parse makes the run FAILED, naming it.

A file parses if it parses as an ES module or as CommonJS, each asked for by name: node 20's
module detection let `node --check file.js` pass an ES module with a syntax error. Where a
compiler transforms the project's JavaScript first (JSX for React, Flow's types for Babel),
node is not the judge of its syntax, and nothing is checked; nor is a Flow file of a project
that declares no compiler (tiny-invariant ships `src/tiny-invariant.flow.js`, Flow's types
for its TypeScript, beside it): named `*.flow.js`, or headed by Flow's `@flow` pragma.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from assay.evidence import Check, Diagnostic, Evidence
from assay.filetree import DEFAULT_SKIP_DIRS, walk_files
from assay.uninstalled_dependency import declared_node_packages
from assay.verdict import Kind, Verdict

__all__ = ["CHECK_NAME", "own_js_files", "syntax_check", "syntax_verdict"]

CHECK_NAME = "node-check"
#: Directories whose files are not the project's shipped code: other people's code, built
#: output, and tests' and docs' files, which may be broken on purpose (a parser's fixtures).
_NOT_OWN = DEFAULT_SKIP_DIRS | frozenset(
    {
        "dist", "build", "coverage", "out", "vendor", "test", "tests", "__tests__",
        "fixtures", "fixture", "examples", "example", "docs", "bench", "benchmark",
        "benchmarks", "types",
    }
)  # fmt: skip
_SUFFIXES = (".js", ".mjs", ".cjs")
#: The most files checked: past it, the rest go unchecked (the drift verdict stands for them).
MAX_FILES = 400
#: Each file in turn, as an ES module, else as CommonJS; the first that is neither ends the
#: run, named, with the error node gives it as a module (most CommonJS is valid module
#: syntax too, so that error is the one in the code; as CommonJS, a module's `export` is).
_SCRIPT = (
    "for f do"
    ' node --input-type=module --check < "$f" 2>/dev/null && continue;'
    ' node --input-type=commonjs --check < "$f" 2>/dev/null && continue;'
    ' echo "does not parse: $f"; node --input-type=module --check < "$f"; exit 1;'
    " done"
)
_FILE = re.compile(r"^does not parse: (?P<path>.+)$", re.MULTILINE)
_LINE = re.compile(r"^\[stdin\]:(?P<line>\d+)\s*$", re.MULTILINE)
_ERROR = re.compile(r"^SyntaxError: .*$", re.MULTILINE)
#: Dependencies that compile the project's JavaScript before it runs: JSX, Flow's types.
_COMPILERS = frozenset({"react", "preact", "solid-js", "flow-bin", "@babel/core", "babel-core"})


def own_js_files(root: Path) -> list[str]:
    """The project's own JavaScript files under `root`, relative, sorted; minified bundles,
    dependencies, built output, tests and docs left out."""
    found = [
        path
        for path in walk_files(root, _NOT_OWN)
        if path.endswith(_SUFFIXES)
        and not path.endswith((".min.js", ".min.mjs", ".flow.js"))
        and not any(part.startswith(".") for part in path.split("/"))
    ]
    return [path for path in found[:MAX_FILES] if not _flow(root, path)]


#: Where Flow's pragma is read: the comments that open a file (`// @flow`, `/* @flow */`).
_HEAD_BYTES = 1024
_LEADING_COMMENT = re.compile(rb"\s*(//[^\n]*|/\*.*?\*/)", re.DOTALL)
_FLOW_PRAGMA = re.compile(rb"@flow\b")


def _flow(root: Path, path: str) -> bool:
    """Whether the file at `path` says it is Flow in the comments that open it."""
    from assay.untrusted_files import read_untrusted

    head = read_untrusted(root, path, limit=_HEAD_BYTES)
    if not isinstance(head, bytes) or b"@flow" not in head:
        return False
    at = 0
    while (comment := _LEADING_COMMENT.match(head, at)) is not None:
        if _FLOW_PRAGMA.search(comment[1]):
            return True
        at = comment.end()
    return False


def syntax_check(root: Path) -> Check | None:
    """The check that runs `node --check` on each of the project's own files; None when it
    has none."""
    if declared_node_packages(root) & _COMPILERS:
        return None  # node is not the judge of JSX's or Flow's syntax
    files = own_js_files(root)
    if not files:
        return None
    return Check(
        name=CHECK_NAME,
        kind=Kind.BUILD,
        argv=("sh", "-c", _SCRIPT, CHECK_NAME, *files),
        source="assay",
        reason="a failure lay only in dependencies resolved today: does the project's own code parse?",
    )


def syntax_verdict(ran: Evidence) -> Evidence | None:
    """`ran` (the syntax check's evidence) as the run's deciding failure, when a file did
    not parse; None when every file parsed, or the check could not say (not started, a
    hang): then the failures stay as drift judged them."""
    if ran.verdict is not Verdict.FAIL or ran.result is None:
        return None
    from assay.parsers._text import combined, strip_ansi

    output = strip_ansi(combined(ran.result))
    file, line, error = _FILE.search(output), _LINE.search(output), _ERROR.search(output)
    if file is None or error is None:
        return None
    found = Diagnostic(
        error[0], file=file["path"], line=int(line["line"]) if line else None, tool="node"
    )
    note = f"the project's own code does not parse: {found.place}: {found.message}"
    return replace(ran, note=note, diagnostics=(found,))

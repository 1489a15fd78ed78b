"""Which files a change may not alter if its verdict is to mean anything: tests, checks and CI config.

Pure: patterns in, matches out. Defaults are per ecosystem, declared with it
and its tools (`assay.tools`); a project's config can
add patterns or drop defaults. Patterns are globs over `/`-separated paths
relative to the repository root, where `**/` matches any number of directories.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from assay.tools import ECOSYSTEMS
from assay.tools.spec import Ecosystem

#: Test files and test configuration, per ecosystem: its test files, then the files its
#: tools read to find, run or report tests (declared in `assay.tools`).
ECOSYSTEM_DEFAULTS: dict[Ecosystem, tuple[str, ...]] = {
    e.ecosystem: tuple(
        dict.fromkeys((*e.test_files, *(g for t in e.tools for g in t.config_files)))
    )
    for e in ECOSYSTEMS
}

#: CI and assay's own configuration: protected whatever the ecosystem.
ALWAYS_PROTECTED: tuple[str, ...] = (
    ".github/workflows/**",
    ".gitlab-ci.yml",
    ".circleci/**",
    "azure-pipelines.yml",
    "Jenkinsfile",
    ".buildkite/**",
    ".travis.yml",
    # The hooks CI runs, at the releases they pin: under --install what it pins is what is
    # installed (a change's mypy `rev` of 1.13.0 left the base's 2.4.1 hook out).
    ".pre-commit-config.yaml",
    "assay.toml",
    ".assay.toml",
    ".assay/**",
    *(
        # Test-helper code by the names projects give it (pandas/_testing, Go's
        # internal/testutil): what the tests assert through guards as the tests do. Not
        # `testing/`: numpy.testing and click/testing.py are libraries' public code.
        f"**/{name}{suffix}"
        for name in ("_testing", "testutil", "testutils", "test_utils", "test_helpers")
        for suffix in ("/**", ".py")
    ),
    # Data tests read by the names projects give it, wherever it lies: a golden value
    # edited to the wrong code's answer weakens the test that reads it (a red team's).
    "**/fixtures/**",
    "**/__fixtures__/**",
    "**/__snapshots__/**",
)

#: Files where only some sections are protected: file name -> dotted key paths into its
#: parsed TOML/JSON. A change to any of them counts as touching a protected file, and
#: restoring restores the whole file (a section cannot be restored without a writer).
SECTION_PROTECTED: dict[str, tuple[str, ...]] = {}
for _ecosystem in ECOSYSTEMS:
    for _name, _keys in _ecosystem.config_sections.items():
        SECTION_PROTECTED[_name] = tuple(dict.fromkeys((*SECTION_PROTECTED.get(_name, ()), *_keys)))


@dataclass(frozen=True, slots=True)
class ProtectedSet:
    """The patterns that decide which paths are protected."""

    patterns: tuple[str, ...]
    sections: tuple[tuple[str, tuple[str, ...]], ...] = tuple(SECTION_PROTECTED.items())

    def matches(self, relpath: str) -> bool:
        """Whether `relpath` (repository-relative, `/`-separated) is protected as a whole.

        Python's byte-code of a protected file is protected with it: an unchecked
        `__pycache__/test_x.cpython-311.pyc` is imported in place of `test_x.py`."""
        normalised = relpath.removeprefix("./")
        compiled = _compiled(self.patterns)
        if compiled.match(normalised) is not None:
            return True
        source = _bytecode_source(normalised)
        return source is not None and compiled.match(source) is not None

    def section_keys(self, relpath: str) -> tuple[str, ...]:
        """The protected dotted keys of `relpath`, if it is a section-protected file."""
        for name, keys in self.sections:
            if relpath == name or relpath.endswith("/" + name):
                return keys
        return ()

    def to_dict(self) -> dict[str, object]:
        return {"patterns": list(self.patterns), "sections": {k: list(v) for k, v in self.sections}}


def protected_set(
    ecosystems: Iterable[Ecosystem | str] | None = None,
    *,
    extra: Iterable[str] = (),
    exclude: Iterable[str] = (),
) -> ProtectedSet:
    """Default patterns for `ecosystems` (all of them when None), plus `extra`, minus `exclude`.

    Every ecosystem's defaults apply when none is named, because a change in an
    undetected one is exactly where a forged pass would hide.
    """
    chosen = list(Ecosystem) if ecosystems is None else [Ecosystem(e) for e in ecosystems]
    dropped = set(exclude)
    patterns: list[str] = []
    defaults = [p for e in chosen for p in ECOSYSTEM_DEFAULTS[e]]
    for pattern in (*ALWAYS_PROTECTED, *defaults, *extra):
        if pattern not in dropped and pattern not in patterns:
            patterns.append(pattern)
    return ProtectedSet(patterns=tuple(patterns))


def is_bytecode(relpath: str) -> bool:
    """Whether `relpath` is a file of a `__pycache__` directory (Python's byte-code cache)."""
    return "__pycache__" in relpath.split("/")[:-1]


def is_runner_loaded(relpath: str) -> bool:
    """Whether `relpath` is a file a test runner finds and runs by itself: a Python module
    (pytest and unittest find test modules, `conftest.py` files and the packages they lie
    in as they collect) or a text file pytest runs as a doctest by default (`test*.txt`).
    One the code under test writes mid-run into a directory not yet collected is run by the
    same run: a module imported by the first test file wrote `tests/b/conftest.py`, or
    `tests/b/test_aa.txt`, which set `calc.add` to a right copy before `tests/b`'s tests
    called it."""
    name = relpath.rpartition("/")[2]
    return name.endswith(".py") or (name.startswith("test") and name.endswith(".txt"))


def is_build_record(relpath: str) -> bool:
    """Whether `relpath` is what a build writes of the tests by itself every run: cargo's
    fingerprints (`target/debug/.fingerprint/calc-1a2b/test-lib-calc.json`) and Maven's
    compiled tests (`target/test-classes/...`). Removed as any file matching the protected
    set is, but never worth a line of the report: 11 to 20 of them came with every run."""
    return ".fingerprint" in relpath.split("/")[:-1] or "/target/test-classes/" in f"/{relpath}"


def _bytecode_source(relpath: str) -> str | None:
    """`pkg/x.py` for `pkg/__pycache__/x.cpython-311.pyc` (any tag, pytest's too); else None."""
    directory, _, name = relpath.rpartition("/")
    parent, _, cache = directory.rpartition("/")
    if cache != "__pycache__" or not name.endswith(".pyc"):
        return None
    stem = name.split(".", 1)[0]
    return f"{parent}/{stem}.py" if parent else f"{stem}.py"


@functools.lru_cache(maxsize=64)
def _compiled(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{_glob_to_regex(p)})" for p in patterns) or r"(?!)")


def _glob_to_regex(pattern: str) -> str:
    """A glob where `**/` spans directories and `*` stays within one path component."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out) + r"\Z"


__all__ = [
    "ALWAYS_PROTECTED",
    "ECOSYSTEM_DEFAULTS",
    "SECTION_PROTECTED",
    "ProtectedSet",
    "is_bytecode",
    "protected_set",
]

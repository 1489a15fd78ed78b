"""Tampering signals: which protected files a change touched, and how, compared with its base.

A signal is evidence, not a verdict: a change may have good reason to edit a test.
Besides protected files, the lines a change adds to non-test code are looked at for
reaches into the test runner (`assay.code_signals`): each is a signal quoting the line.
So are a manifest's dependency swaps and a changed vendored file (`assay.dependency_swaps`),
and weakened tests inside source files (Rust's `#[cfg(test)]` modules), judged with the
same markers as test files but never restored: they are the change's code.
It is reported next to the verdict, in the run record (`RunRecord.tampering`, the
report's `extra.tampering`), so a reader (or a gate) can decide, while `--protect`
makes the verdict itself independent of such edits.

Both trees are read as files we do not trust (`assay.untrusted_files`): a protected file
that cannot be read safely (a FIFO, a device, one reached through a link) is changed,
never unchanged, and no file is read whole past a bound.
"""

from __future__ import annotations

import enum
import json
import os
import re
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.code_signals import Budget, NotInspected, Reach, scan_change, source_text
from assay.dependency_swaps import is_manifest, is_vendored, manifest_swaps
from assay.filetree import walk_files
from assay.protect import ProtectedSet
from assay.source_layout import in_build_output
from assay.tools import ECOSYSTEMS
from assay.untrusted_files import (
    Found,
    Link,
    OpenFile,
    Refused,
    open_untrusted,
    read_open,
    read_untrusted,
    same_content,
    same_entry,
)


class TamperKind(enum.StrEnum):
    """How a change touched what it should not have."""

    PROTECTED_DELETED = "protected_deleted"
    PROTECTED_ADDED = "protected_added"
    PROTECTED_MODIFIED = "protected_modified"
    PROTECTED_SYMLINK = "protected_symlink"
    """A protected path is now a symbolic link (it could point anywhere)."""
    SECTION_CHANGED = "section_changed"
    """A protected section of a shared file (pyproject's [tool.pytest], package.json's jest)."""
    CONFTEST_ADDED = "conftest_added"
    TEST_REMOVED = "test_removed"
    SKIP_ADDED = "skip_added"
    """New skip / xfail / ignore markers."""
    ONLY_ADDED = "only_added"
    """New focus markers (`.only`, `fit`) that silently drop every other test."""
    ASSERTION_WEAKENED = "assertion_weakened"
    """A new assertion that cannot fail (`assert True`, `expect(true).toBe(true)`)."""
    ASSERTIONS_REMOVED = "assertions_removed"
    CODE_REACHES_RUNNER = "code_reaches_runner"
    """Non-test code the change added reaches into the test runner: its internals, `/proc`,
    process exit, its report or summary (`assay.code_signals`); the line is quoted."""
    DEPENDENCY_SWAPPED = "dependency_swapped"
    """What the tests import was pointed elsewhere: a Go `replace`, a changed vendored
    file, an npm `overrides` or a `file:`/`link:` source (`assay.dependency_swaps`)."""
    CODE_NOT_INSPECTED = "code_not_inspected"
    """Non-test code the change added or modified could not be looked into (too large, not
    a regular file), so a reach in it would not have been seen."""
    TEST_SUPPORT_CHANGED = "test_support_changed"
    """Code outside the protected tests that the base's tests assert through was changed:
    a Go file that imports `testing`, a Python module of `assert_*` functions."""


@dataclass(frozen=True, slots=True)
class TamperSignal:
    """One way a change touched a protected file."""

    kind: TamperKind
    path: str
    """Repository-relative path of the file."""
    detail: str = ""
    """What exactly: the removed test's name, the marker, the count before and after,
    the quoted line."""
    line: int | None = None
    """The 1-based line the signal is about, when it is about one line."""
    excerpt: str = ""
    """That line, trimmed and safe to print."""

    def to_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {"kind": self.kind.value, "path": self.path, "detail": self.detail}
        if self.line is not None:
            found.update(line=self.line, excerpt=self.excerpt)
        return found


@dataclass(frozen=True, slots=True)
class TamperReport:
    """Everything a change did to protected files."""

    signals: tuple[TamperSignal, ...]
    touched: tuple[str, ...]
    """Protected paths whose content differs from the base (added, deleted or modified)."""

    @property
    def tampered(self) -> bool:
        return bool(self.signals)

    def to_dict(self) -> dict[str, Any]:
        """The form stored in the run record (`RunRecord.tampering`)."""
        return {
            "tampered": self.tampered,
            "touched": list(self.touched),
            "signals": [s.to_dict() for s in self.signals],
        }


def _joined(part: str) -> re.Pattern[str]:
    """One ecosystem-wide pattern from each ecosystem's fragment (declared in `assay.tools`)."""
    fragments = [f for e in ECOSYSTEMS if (f := getattr(e.markers, part))]
    return re.compile("|".join(fragments) or r"(?!)", re.MULTILINE)


_TEST_NAMES = tuple(p for e in ECOSYSTEMS for p in e.markers.test_names)
_SKIP_MARKERS = _joined("skip")
_ONLY_MARKERS = _joined("only")
_TRIVIAL_ASSERTIONS = _joined("trivial_assertions")
_ASSERTIONS = _joined("assertions")
#: Source suffix -> where in-file tests start (`TamperMarkers.in_file`).
_IN_FILE_TESTS = {
    suffix: re.compile(e.markers.in_file)
    for e in ECOSYSTEMS
    if e.markers.in_file
    for suffix in e.markers.source_suffixes
}


def detect_tampering(
    base: str | os.PathLike[str],
    change: str | os.PathLike[str],
    protected: ProtectedSet,
    installed: frozenset[str] = frozenset(),
) -> TamperReport:
    """Compare the protected files of `change` with those of `base`, and look at the lines
    it added to every other file for reaches into the test runner; `installed`: the
    top-level modules of the environment the checks will run in, which a new module of the
    change must not stand in for any more than for a distribution the base declares."""
    base_root, change_root = Path(base), Path(change)
    base_files = _as_copied(walk_files(base_root))
    change_files = _as_copied(walk_files(change_root))
    signals: list[TamperSignal] = []
    touched: list[str] = []
    budget = Budget()
    dependencies = _others_modules(base_root, base_files, installed)
    vendored: list[str] = []
    for rel in sorted(base_files | change_files):
        in_base, in_change = rel in base_files, rel in change_files
        found: list[TamperSignal] = []
        if protected.matches(rel):
            found = _compare_protected(
                rel, base_root if in_base else None, change_root if in_change else None
            )
        elif protected.section_keys(rel):
            found = _compare_sections(rel, base_root, change_root, protected.section_keys(rel))
        if found:
            touched.append(rel)
            signals.extend(found)
        if in_base and not protected.matches(rel):
            signals.extend(_test_support_signal(rel, base_root, change_root))
        if in_change and not protected.matches(rel):
            # Test code is judged above, as a protected file; this is the code it runs.
            reaches = scan_change(
                base_root if in_base else None, change_root, rel, budget, dependencies
            )
            signals.extend(_code_signal(reach) for reach in reaches)
        if _may_swap_or_test(rel) and not protected.matches(rel):
            if same_entry(base_root, change_root, rel):
                pass
            elif is_vendored(rel):
                vendored.append(rel)
            else:
                old = _text_of(base_root if in_base else None, rel)
                new = _text_of(change_root if in_change else None, rel)
                signals.extend(_source_signals(rel, old, new))
    if vendored:
        signals.append(_vendored_signal(vendored))
    return TamperReport(signals=tuple(signals), touched=tuple(touched))


def _normalised(name: str) -> str:
    from assay.base_requirements import normalise

    return normalise(name)


def _as_copied(files: list[str]) -> set[str]:
    """`files` less the build output a workspace never holds (`source_layout`): a `target/`
    left by a `cargo test` run by hand is no file the change added to what is judged."""
    listed = set(files)
    return {rel for rel in files if not in_build_output(rel, listed)}


def _others_modules(base: Path, base_files: set[str], installed: frozenset[str]) -> frozenset[str]:
    """What a module the change adds must not stand in for (normalised names): the
    distributions the base's manifests declare and the modules `installed`, less the
    project's own (its names, and its modules at the root or in `src/` at the base, which
    the checks' environment may hold installed: a layout moved to `src/` is no stand-in)."""
    from assay.base_requirements import declared_in_tree

    declared = declared_in_tree(base)
    own = {
        rel.removeprefix("src/").split("/", 1)[0].removesuffix(".py")
        for rel in base_files
        if rel.endswith(".py")
    }
    others = declared.names | {_normalised(n) for n in installed}
    return frozenset(others - declared.projects - {_normalised(n) for n in own})


def _code_signal(found: Reach | NotInspected) -> TamperSignal:
    if isinstance(found, NotInspected):
        return TamperSignal(TamperKind.CODE_NOT_INSPECTED, found.path, found.reason)
    detail = f"{found.what}: {found.excerpt}"  # the line number is the signal's own field
    if found.more:
        detail += f" (and {found.more} more such lines in this file)"
    return TamperSignal(
        TamperKind.CODE_REACHES_RUNNER, found.path, detail, found.line, found.excerpt
    )


#: Code that exists to serve tests, by what its base version holds: a non-test Go file
#: that imports `testing` (helpers take a `*testing.T`; no library code does), a Python
#: module that defines `assert_*` functions and asserts (`checking.assert_same`; urllib3's
#: `assert_fingerprint`, which raises an SSL error, is library code).
_TEST_SUPPORT = {
    ".go": re.compile(r'^\s*(?:import\s+)?(?:[\w.]+\s+)?"testing"\s*$', re.MULTILINE),
    ".py": re.compile(
        r"^\s*def\s+assert[_A-Z]\w*\s*\((?=.*^\s*(?:assert\b|raise\s+AssertionError\b))",
        re.MULTILINE | re.DOTALL,
    ),
}


def _test_support_signal(rel: str, base: Path, change: Path) -> list[TamperSignal]:
    """A change to test-support code (`_TEST_SUPPORT`) outside the protected tests: what
    the tests assert through, so any change to it may weaken them (a helper's condition
    turned lenient keeps every assertion line), and so may moving it (a lenient copy
    under another name)."""
    suffix = next((s for s in _TEST_SUPPORT if rel.endswith(s)), None)
    if suffix is None or (suffix == ".go" and rel.endswith("_test.go")):
        return []
    if same_entry(base, change, rel):
        return []
    if not _TEST_SUPPORT[suffix].search(_text_of(base, rel)):
        return []
    what = "imports testing" if suffix == ".go" else "defines assertion functions"
    done = "changed" if (change / rel).exists() else "removed or moved"
    detail = f"test-support code {done} (at the base it {what}, and the tests assert through it)"
    return [TamperSignal(TamperKind.TEST_SUPPORT_CHANGED, rel, detail)]


def _may_swap_or_test(rel: str) -> bool:
    """Whether an unprotected file is one a change can swap a dependency or weaken a test
    in: a manifest, a vendored file, a source file of a language with in-file tests."""
    return is_vendored(rel) or is_manifest(rel) or rel.endswith(tuple(_IN_FILE_TESTS))


def _source_signals(rel: str, old: str, new: str) -> list[TamperSignal]:
    """A manifest's swaps; in a source file, the test markers from its first test on."""
    if is_manifest(rel):
        return [
            TamperSignal(TamperKind.DEPENDENCY_SWAPPED, rel, swap.detail, swap.line, swap.excerpt)
            for swap in manifest_swaps(rel, old, new)
        ]
    starts = next(p for s, p in _IN_FILE_TESTS.items() if rel.endswith(s))
    return _content_signals(rel, _tests_region(starts, old), _tests_region(starts, new))


def _tests_region(starts: re.Pattern[str], text: str) -> str:
    """The text from the first in-file test on: the code before it is not judged as tests."""
    found = starts.search(text)
    return text[found.start() :] if found else ""


def _vendored_signal(paths: list[str]) -> TamperSignal:
    shown = ", ".join(paths[:3]) + (f" (and {len(paths) - 3} more)" if len(paths) > 3 else "")
    detail = f"a vendored dependency changed: {len(paths)} file(s) under vendor/: {shown}"
    return TamperSignal(TamperKind.DEPENDENCY_SWAPPED, paths[0], detail)


def _compare_protected(rel: str, base: Path | None, change: Path | None) -> list[TamperSignal]:
    if change is None:
        return [TamperSignal(TamperKind.PROTECTED_DELETED, rel, _test_list(_text_of(base, rel)))]
    with open_untrusted(change, rel) as new:
        if isinstance(new, Link):
            return [TamperSignal(TamperKind.PROTECTED_SYMLINK, rel, new.target)]
        new_content = _content(new, rel)
        if base is None:
            is_conftest = rel.rsplit("/", 1)[-1] == "conftest.py"
            kind = TamperKind.CONFTEST_ADDED if is_conftest else TamperKind.PROTECTED_ADDED
            return [
                TamperSignal(kind, rel, new_content.note),
                *_content_signals(rel, "", new_content.text),
            ]
        with open_untrusted(base, rel) as old:
            # Unchanged only if both are plain files with the same bytes: whatever could
            # not be read safely (a FIFO, a device, a path through a link) is a change.
            if isinstance(old, OpenFile) and isinstance(new, OpenFile) and same_content(old, new):
                return []
            old_content = _content(old, rel)
    return [
        TamperSignal(TamperKind.PROTECTED_MODIFIED, rel, new_content.note),
        *_content_signals(rel, old_content.text, new_content.text),
    ]


#: The most of one file's text looked into for tests and markers (as discovery reads
#: configs): beyond it, a change is still reported, its content is not inspected.
INSPECT_MAX_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class _Content:
    """The text of one version of a file, as far as it was inspected."""

    text: str | None
    """None when it was too large to inspect."""
    note: str = ""
    """Why it was not read, or not inspected."""


def _content(found: Found, rel: str) -> _Content:
    if found is None or isinstance(found, Link):
        return _Content("")
    if isinstance(found, Refused):
        return _Content("", found.reason)  # nothing readable is there: as if emptied
    data = read_open(found, limit=INSPECT_MAX_BYTES)
    if isinstance(data, Refused):
        return _Content(None, f"{data.reason}: its content was not inspected")
    return _Content(source_text(rel, data))


def _text_of(root: Path | None, rel: str) -> str:
    """One version's text of `rel` ("" where that version has no such file, or a link)."""
    if root is None:
        return ""
    with open_untrusted(root, rel) as found:
        return _content(found, rel).text or ""


def _content_signals(rel: str, old: str | None, new: str | None) -> list[TamperSignal]:
    """What changed inside a test file: removed tests, new markers, weaker assertions."""
    if old is None or new is None:
        return []  # too large to inspect: the change itself is already reported
    signals = []
    removed = sorted(_test_names(old) - _test_names(new))
    if removed:
        signals.append(TamperSignal(TamperKind.TEST_REMOVED, rel, ", ".join(removed)))
    for kind, pattern in (
        (TamperKind.SKIP_ADDED, _SKIP_MARKERS),
        (TamperKind.ONLY_ADDED, _ONLY_MARKERS),
        (TamperKind.ASSERTION_WEAKENED, _TRIVIAL_ASSERTIONS),
    ):
        added = _matches(pattern, new) - _matches(pattern, old)
        if added:
            shown = sorted(added)[:5]
            signals.append(TamperSignal(kind, rel, "; ".join(shown)))
    before, after = _count(_ASSERTIONS, old), _count(_ASSERTIONS, new)
    if after < before:
        signals.append(TamperSignal(TamperKind.ASSERTIONS_REMOVED, rel, f"{before} -> {after}"))
    return signals


#: What `str.splitlines` splits on; matched lazily, so that a file of empty lines does not
#: become a list of millions of strings.
_LINE = re.compile(r"[^\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]+")


def _matches(pattern: re.Pattern[str], text: str) -> Counter[str]:
    """Matched lines as a multiset, so a second `assert True` counts as new."""
    lines = (line.group().strip() for line in _LINE.finditer(text))
    return Counter(line for line in lines if pattern.search(line))


def _count(pattern: re.Pattern[str], text: str) -> int:
    return sum(1 for _ in pattern.finditer(text))


def _test_names(text: str) -> set[str]:
    names: set[str] = set()
    for pattern in _TEST_NAMES:
        for match in pattern.finditer(text):
            names.add(match.group(match.lastindex or 1))
    return names


def _test_list(text: str) -> str:
    names = sorted(_test_names(text))
    return f"tests: {', '.join(names)}" if names else ""


def _compare_sections(
    rel: str, base: Path, change: Path, keys: tuple[str, ...]
) -> list[TamperSignal]:
    changed = _changed_sections(base, change, rel, keys)
    if not changed:
        return []
    return [TamperSignal(TamperKind.SECTION_CHANGED, rel, ", ".join(changed))]


def sections_differ(base_root: Path, change_root: Path, rel: str, keys: tuple[str, ...]) -> bool:
    """Whether any protected section of the shared file `rel` differs between two trees."""
    return bool(_changed_sections(base_root, change_root, rel, keys))


def _changed_sections(
    base_root: Path, change_root: Path, rel: str, keys: tuple[str, ...]
) -> list[str]:
    old = _sections(base_root, rel, keys)
    new = _sections(change_root, rel, keys)
    if old is None or new is None:
        # Sections that cannot be read are vouched for only by the file itself being
        # unchanged: two unreadable versions are not thereby the same.
        return [] if same_entry(base_root, change_root, rel) else list(keys)
    return [key for key in keys if old.get(key) != new.get(key)]


def _sections(root: Path, rel: str, keys: tuple[str, ...]) -> dict[str, Any] | None:
    """The values at `keys` (dotted paths) of a TOML or JSON file; missing keys are absent.
    None when the file is there but cannot be read safely or parsed."""
    data = read_untrusted(root, rel, limit=INSPECT_MAX_BYTES)
    if data is None:
        return {}
    if isinstance(data, Refused):
        return None
    try:
        text = data.decode("utf-8")
        parsed = json.loads(text) if rel.endswith(".json") else tomllib.loads(text)
    except (ValueError, UnicodeDecodeError, RecursionError):
        # A file we cannot parse is a file whose sections we cannot vouch for.
        return None
    found = {}
    for key in keys:
        node: Any = parsed
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
            if node is None:
                break
        if node is not None:
            found[key] = node
    return found

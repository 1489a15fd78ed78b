"""Tampering signals: which protected files a change touched, and how, compared with its base.

A signal is evidence, not a verdict: a change may have good reason to edit a test.
It is reported next to the verdict so a reader (or a gate) can decide, while
`--protect` makes the verdict itself independent of such edits.
"""

from __future__ import annotations

import enum
import json
import os
import re
import stat
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.filetree import walk_files
from assay.protect import ProtectedSet


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


@dataclass(frozen=True, slots=True)
class TamperSignal:
    """One way a change touched a protected file."""

    kind: TamperKind
    path: str
    """Repository-relative path of the file."""
    detail: str = ""
    """What exactly: the removed test's name, the marker, the count before and after."""

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind.value, "path": self.path, "detail": self.detail}


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
        """The form stored in `Evidence.extra["tampering"]`."""
        return {
            "tampered": self.tampered,
            "touched": list(self.touched),
            "signals": [s.to_dict() for s in self.signals],
        }


_TEST_NAMES = (
    re.compile(r"^\s*(?:async\s+)?def\s+(test\w*)\s*\(", re.MULTILINE),
    re.compile(r"\b(?:it|test)\s*\(\s*(['\"`])(.+?)\1"),
    re.compile(r"^func\s+(Test\w+)\s*\(", re.MULTILINE),
    re.compile(r"#\[test\]\s*(?:#\[[^\]]*\]\s*)*(?:pub\s+)?(?:async\s+)?fn\s+(\w+)"),
)
_SKIP_MARKERS = re.compile(
    r"@pytest\.mark\.(?:skip|skipif|xfail)\b|\bpytest\.(?:skip|xfail|importorskip)\s*\("
    r"|@unittest\.(?:skip\w*|expectedFailure)\b|\bself\.skipTest\s*\("
    r"|\b(?:it|test|describe)\.(?:skip|todo|skipIf)\b|\bx(?:it|describe|test)\s*\("
    r"|\bt\.Skip(?:f|Now)?\s*\(|#\[ignore\b"
)
_ONLY_MARKERS = re.compile(r"\b(?:it|test|describe)\.only\b|\bf(?:it|describe)\s*\(")
_TRIVIAL_ASSERTIONS = re.compile(
    r"^\s*assert\s+(?:True|1|not\s+(?:False|None|0)|(['\"]).*\1)\s*(?:,.*)?$"
    r"|\bself\.assert(?:True|Equal)\s*\(\s*(?:True|1)\s*(?:,\s*(?:True|1)\s*)?\)"
    r"|\bexpect\s*\(\s*(?:true|1)\s*\)\s*\.\s*(?:toBe|toEqual)\s*\(\s*(?:true|1)\s*\)"
    r"|\bassert!\s*\(\s*true\s*\)|\bassert_eq!\s*\(\s*(\w+)\s*,\s*\2\s*\)",
    re.MULTILINE,
)
_ASSERTIONS = re.compile(
    r"^\s*assert\b|\bself\.assert\w+\s*\(|\bexpect\s*\(|\bassert(?:_eq|_ne)?!\s*\("
    r"|\bt\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\s*\(|\bassert\.\w+\s*\(",
    re.MULTILINE,
)


def detect_tampering(
    base: str | os.PathLike[str], change: str | os.PathLike[str], protected: ProtectedSet
) -> TamperReport:
    """Compare the protected files of `change` with those of `base`."""
    base_root, change_root = Path(base), Path(change)
    base_files = set(walk_files(base_root))
    change_files = set(walk_files(change_root))
    signals: list[TamperSignal] = []
    touched: list[str] = []
    for rel in sorted(base_files | change_files):
        in_base, in_change = rel in base_files, rel in change_files
        if protected.matches(rel):
            found = _compare_protected(
                rel, base_root if in_base else None, change_root if in_change else None
            )
        elif protected.section_keys(rel):
            found = _compare_sections(rel, base_root, change_root, protected.section_keys(rel))
        else:
            continue
        if found:
            touched.append(rel)
            signals.extend(found)
    return TamperReport(signals=tuple(signals), touched=tuple(touched))


def _compare_protected(rel: str, base: Path | None, change: Path | None) -> list[TamperSignal]:
    if change is None:
        return [TamperSignal(TamperKind.PROTECTED_DELETED, rel, _test_list(_read(base, rel)))]
    if (change / rel).is_symlink():
        return [TamperSignal(TamperKind.PROTECTED_SYMLINK, rel, os.readlink(change / rel))]
    new = _read(change, rel)
    if base is None:
        is_conftest = rel.rsplit("/", 1)[-1] == "conftest.py"
        kind = TamperKind.CONFTEST_ADDED if is_conftest else TamperKind.PROTECTED_ADDED
        return [TamperSignal(kind, rel), *_content_signals(rel, "", new)]
    old = _read(base, rel)
    if old == new and not (base / rel).is_symlink():
        return []
    return [TamperSignal(TamperKind.PROTECTED_MODIFIED, rel), *_content_signals(rel, old, new)]


def _content_signals(rel: str, old: str, new: str) -> list[TamperSignal]:
    """What changed inside a test file: removed tests, new markers, weaker assertions."""
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
    before, after = len(_ASSERTIONS.findall(old)), len(_ASSERTIONS.findall(new))
    if after < before:
        signals.append(TamperSignal(TamperKind.ASSERTIONS_REMOVED, rel, f"{before} -> {after}"))
    return signals


def _matches(pattern: re.Pattern[str], text: str) -> Counter[str]:
    """Matched lines as a multiset, so a second `assert True` counts as new."""
    return Counter(line.strip() for line in text.splitlines() if pattern.search(line))


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
    old = _sections(base / rel, keys)
    new = _sections(change / rel, keys)
    changed = [key for key in keys if old.get(key) != new.get(key)]
    if not changed:
        return []
    return [TamperSignal(TamperKind.SECTION_CHANGED, rel, ", ".join(changed))]


def sections_differ(base_file: Path, change_file: Path, keys: tuple[str, ...]) -> bool:
    """Whether any protected section differs between two versions of a shared file."""
    return _sections(base_file, keys) != _sections(change_file, keys)


_UNPARSEABLE = "<unparseable>"


def _sections(path: Path, keys: tuple[str, ...]) -> dict[str, Any]:
    """The values at `keys` (dotted paths) of a TOML or JSON file; missing keys are absent."""
    if not path.is_file() or path.is_symlink():
        return {} if not os.path.lexists(path) else dict.fromkeys(keys, _UNPARSEABLE)
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (ValueError, UnicodeDecodeError):
        # A file we cannot read is a file whose sections we cannot vouch for.
        return dict.fromkeys(keys, _UNPARSEABLE)
    found = {}
    for key in keys:
        node: Any = data
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
            if node is None:
                break
        if node is not None:
            found[key] = node
    return found


def _read(root: Path | None, rel: str) -> str:
    """The text compared for `root/rel`; a link or a special file is described, not read."""
    if root is None:
        return ""
    path = root / rel
    try:
        if path.is_symlink():
            return f"<symlink to {os.readlink(path)}>"
        # Opened without blocking and checked once open: a fifo planted at a protected path
        # would otherwise block the read, and so the verdict, forever.
        with open(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK), "rb") as file:
            mode = os.fstat(file.fileno()).st_mode
            if not stat.S_ISREG(mode):
                return f"<special file {stat.filemode(mode)}>"
            return file.read().decode("utf-8", errors="replace")
    except OSError:
        return ""

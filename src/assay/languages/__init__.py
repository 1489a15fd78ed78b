"""Per-language adapters: identity and toolchain knowledge only (which tools, which default
commands). Running a check is the engine's job, the same for every language."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from assay.evidence import Check
from assay.toolchains import Language


@dataclass(frozen=True, slots=True)
class LanguageAdapter:
    """What assay knows about one language."""

    language: Language
    markers: tuple[str, ...]
    """Files at a project root that say the project is in this language."""
    checks: Callable[[Path], list[Check]]
    """The default checks for a project at a root: build, typecheck, lint, test."""

    def detects(self, root: Path) -> bool:
        """Whether a marker file of this language is at `root`."""
        return any((root / marker).exists() for marker in self.markers)


def _adapters() -> Mapping[Language, LanguageAdapter]:
    from assay.languages import go, python, rust, typescript

    return {a.language: a for a in (python.ADAPTER, typescript.ADAPTER, go.ADAPTER, rust.ADAPTER)}


def adapter_for(language: Language | str) -> LanguageAdapter:
    """The adapter for `language`; `KeyError` (naming the known ones) when there is none."""
    adapters = _adapters()
    try:
        return adapters[Language(language)]
    except (KeyError, ValueError):
        known = ", ".join(sorted(a.value for a in adapters))
        raise KeyError(f"no adapter for language {language!r} (known: {known})") from None


def default_checks(language: Language | str, root: Path) -> list[Check]:
    """The checks assay would run for a `language` project at `root` with no other guidance."""
    return adapter_for(language).checks(Path(root))


def detect_languages(root: Path) -> list[Language]:
    """Languages whose marker files are at `root`, in adapter order."""
    return [a.language for a in _adapters().values() if a.detects(Path(root))]

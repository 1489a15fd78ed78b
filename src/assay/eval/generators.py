"""Generators, by language: where the harness gets its tasks.

The harness only ever calls `Registry.lookup(language)`; a language without a generator
is an infrastructure error of the runs that need it (`no_generator`), not a usage error
of the whole evaluation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from assay.eval.failures import Stage, StageError
from assay.eval.task import TaskError, TaskSpec, load_task


class Generator(Protocol):
    """Makes a task ready to run. `name` is recorded with each attempt."""

    name: str

    def generate(self, spec: TaskSpec) -> TaskSpec:
        """The task as it will run; raises `StageError` when it cannot be made."""
        ...


class FolderGenerator:
    """Tasks written by hand as folders: reloaded from the folder, so an attempt runs
    what is on disk now (a folder edited or removed since the evaluation was planned is
    that attempt's error, not a stale copy run in silence)."""

    name = "folder"

    def generate(self, spec: TaskSpec) -> TaskSpec:
        try:
            return load_task(spec.folder)
        except TaskError as exc:
            raise StageError(Stage.GENERATE, "task_invalid", str(exc)) from exc


#: Languages the folder generator is registered for by default.
FOLDER_LANGUAGES = ("python", "javascript", "typescript", "go", "rust", "java")


@dataclass(slots=True)
class Registry:
    """Generators keyed by language."""

    generators: dict[str, Generator] = field(default_factory=dict)

    def register(self, language: str, generator: Generator) -> None:
        self.generators[language.lower()] = generator

    def lookup(self, language: str) -> Generator:
        found = self.generators.get(language.lower())
        if found is None:
            known = ", ".join(sorted(self.generators)) or "none"
            raise StageError(
                Stage.GENERATE,
                "no_generator",
                f"no generator for language {language!r} (registered: {known})",
            )
        return found


def default_registry(languages: Iterable[str] = FOLDER_LANGUAGES) -> Registry:
    registry = Registry()
    folder = FolderGenerator()
    for language in languages:
        registry.register(language, folder)
    return registry


def registry_of(generators: Mapping[str, Generator]) -> Registry:
    registry = Registry()
    for language, generator in generators.items():
        registry.register(language, generator)
    return registry

"""Verifiers named by import path (`package.module:attr`), loaded only where they run.

The parent process never imports a plugin: `ImportedVerifier` is sent to a
worker process by name and imported there, so a plugin that crashes at import
time, or is hostile, is contained like any other misbehaving verifier.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from typing import Any

from assay._verifier_workers import call_verify
from assay.errors import AssayError
from assay.runner import Isolation, VerifierContext


class PluginSpecError(AssayError, ValueError):
    """An import path that is not of the form `package.module:attr`."""


def parse_spec(spec: str) -> tuple[str, str]:
    module, sep, attr = spec.partition(":")
    if not sep or not module or not attr or not all(p.isidentifier() for p in module.split(".")):
        raise PluginSpecError(f"verifier must be given as package.module:attr, got {spec!r}")
    return module, attr


@dataclass(frozen=True)
class ImportedVerifier:
    """A verifier to import by name in the worker: a class (instantiated with no
    arguments), a factory function, or a ready instance with `verify`."""

    spec: str
    search_path: tuple[str, ...] = ()
    """Directories put in front of sys.path before importing (a project's root)."""
    isolation: Isolation = Isolation.WORKER

    def __post_init__(self) -> None:
        parse_spec(self.spec)

    @property
    def id(self) -> str:
        return self.spec

    def verify(self, ctx: VerifierContext) -> Any:
        module_name, attr = parse_spec(self.spec)
        for directory in reversed(self.search_path):
            if directory not in sys.path:
                sys.path.insert(0, directory)
        target = getattr(importlib.import_module(module_name), attr)
        is_factory = isinstance(target, type) or (
            callable(target) and not hasattr(target, "verify")
        )
        verifier = target() if is_factory else target
        return call_verify(verifier, ctx)

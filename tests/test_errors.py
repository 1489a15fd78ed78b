"""Every exception assay defines derives from one base, `assay.AssayError`."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import assay
from assay.errors import AssayError


def _defined_exceptions() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(assay.__path__, "assay."):
        if info.name == "assay.__main__":
            continue  # importing it runs the command line
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == info.name
                and not name.startswith("_")
            ):
                found[f"{info.name}.{name}"] = value
    return found


def test_every_public_exception_derives_from_assay_error() -> None:
    found = _defined_exceptions()
    outside = sorted(n for n, cls in found.items() if not issubclass(cls, AssayError))
    assert outside == []


def test_the_named_errors_keep_their_modules_and_other_bases() -> None:
    from assay.cache import CacheError
    from assay.discovery.files import UnreadableFile
    from assay.pipeline import VerifyUsageError
    from assay.plugins import PluginSpecError
    from assay.probe import ProbeError, ProbeFailure, ToolchainError
    from assay.process import InvalidRun
    from assay.sandbox import CleanupError, ProvisionError, SandboxError, SandboxUnavailable
    from assay.verification import StepStartError, VerificationError

    for error in (
        VerifyUsageError,
        SandboxError,
        SandboxUnavailable,
        ProvisionError,
        CleanupError,
        ProbeFailure,
        ToolchainError,
        ProbeError,
        InvalidRun,
        PluginSpecError,
        VerificationError,
        StepStartError,
        CacheError,
        UnreadableFile,
    ):
        assert issubclass(error, AssayError), error
    # Callers that caught the old bases still catch these.
    assert issubclass(InvalidRun, ValueError) and issubclass(PluginSpecError, ValueError)

"""The package's public surface: exactly these names, each the real object; the rest in
`assay.lowlevel`; names that moved there still found from `assay`, with a warning."""

from __future__ import annotations

import subprocess
import sys

import pytest

import assay

#: The public surface, pinned: a name added or removed here is a decision, not an accident.
PUBLIC = {
    "verify": "assay.pipeline",
    "VerifyOptions": "assay.pipeline",
    "VerifyUsageError": "assay.pipeline",
    "Report": "assay.report",
    "Check": "assay.evidence",
    "Evidence": "assay.evidence",
    "Verdict": "assay.verdict",
    "Cause": "assay.verdict",
    "Kind": "assay.verdict",
    "Status": "assay.verdict",
    "run_verifiers": "assay.runner",
    "Verifier": "assay.runner",
    "VerifierContext": "assay.runner",
    "Outcome": "assay.runner",
    "run_process": "assay.process",
    "run_command": "assay.check_verifiers",
    "AssayError": "assay.errors",
    "run_eval": "assay.eval.api",
}

#: What was public before the surface was narrowed, and now lives in `assay.lowlevel`.
MOVED = [
    "ProcessResult",
    "CapturedOutput",
    "StartFailure",
    "InvalidRun",
    "CommandRunner",
    "EnvPolicy",
    "CheckerId",
    "Diagnostic",
    "TestCase",
    "TestCounts",
    "aggregate",
    "Isolation",
    "ProbeCache",
    "ProbeFailure",
    "ProbeError",
    "ToolchainError",
    "run_check",
    "Verification",
    "VerificationResult",
    "VerificationError",
    "StepStartError",
    "discover",
    "Plan",
    "PlanOptions",
    "select_sandbox",
    "Sandbox",
    "SandboxUnavailable",
    "VerdictCache",
]


def test_all_is_exactly_the_public_surface_and_the_version() -> None:
    assert sorted(assay.__all__) == sorted(["__version__", *PUBLIC])
    assert sorted(dir(assay)) == sorted(assay.__all__)
    assert assay.__version__ == __import__("assay._version").__version__


@pytest.mark.parametrize(("name", "module"), sorted(PUBLIC.items()))
def test_each_public_name_is_its_defining_modules_object(name: str, module: str) -> None:
    import importlib

    assert getattr(assay, name) is getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("name", MOVED)
def test_moved_names_live_in_lowlevel_and_warn_from_assay(name: str) -> None:
    from assay import lowlevel

    assert name in lowlevel.__all__
    with pytest.warns(DeprecationWarning, match="assay.lowlevel"):
        value = getattr(assay, name)
    assert value is getattr(lowlevel, name)


def test_lowlevel_lists_what_it_has() -> None:
    from assay import lowlevel

    assert all(hasattr(lowlevel, name) for name in lowlevel.__all__)
    assert not set(lowlevel.__all__) & set(PUBLIC)


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError):
        assay.no_such_name  # noqa: B018


def test_importing_assay_loads_nothing_heavy() -> None:
    """`import assay` (and so the CLI's start) must not import the whole library."""
    code = "import assay, sys; print(sorted(m for m in sys.modules if m.startswith('assay')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['assay', 'assay._version']"

"""assay: ground truth about code — does it build, type-check, lint and pass its tests?

The public API, by where it lives. Names are loaded on first use (PEP 562), so
that `import assay` — and the CLI's start-up — pays only for what is used.

    run_process, ProcessResult, CapturedOutput, StartFailure,     assay.process
    InvalidRun, CommandRunner, EnvPolicy                           (and assay.environment)
    Verdict, Cause, Kind, Status                                   assay.verdict
    Check, CheckerId, Diagnostic, TestCase, TestCounts, Evidence   assay.evidence
    Report, aggregate                                              assay.report
    run_verifiers, Verifier, VerifierContext, Outcome, Isolation   assay.runner
    ProbeCache, ProbeFailure, ProbeError, ToolchainError           assay.probe
    run_check                                                      assay.engine
    Verification, VerificationResult, VerificationError,           assay.verification
    StepStartError
    discover                                                       assay.discovery
    Plan, PlanOptions                                              assay.plan
    select_sandbox, Sandbox, SandboxUnavailable                    assay.sandbox
    VerdictCache                                                   assay.cache
    verify, VerifyOptions, VerifyUsageError                        assay.pipeline

Two functions share their module's name and so are not in this map:
`assay.probe.probe(tool)` identifies one tool, and `assay.classify.classify` turns a
process result into evidence. Test doubles (well-behaved and misbehaving verifiers)
are in `assay.testing`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from assay._version import __version__ as __version__

#: Public name -> the module that defines it.
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(
        ("run_process", "ProcessResult", "StartFailure", "InvalidRun", "CommandRunner"),
        "assay.process",
    ),
    "CapturedOutput": "assay.output",
    "EnvPolicy": "assay.environment",
    **dict.fromkeys(("Verdict", "Cause", "Kind", "Status"), "assay.verdict"),
    **dict.fromkeys(
        ("Check", "CheckerId", "Diagnostic", "TestCase", "TestCounts", "Evidence"), "assay.evidence"
    ),
    **dict.fromkeys(("Report", "aggregate"), "assay.report"),
    **dict.fromkeys(
        ("run_verifiers", "Verifier", "VerifierContext", "Outcome", "Isolation"), "assay.runner"
    ),
    **dict.fromkeys(("ProbeCache", "ProbeFailure", "ProbeError", "ToolchainError"), "assay.probe"),
    "run_check": "assay.engine",
    **dict.fromkeys(
        ("Verification", "VerificationResult", "VerificationError", "StepStartError"),
        "assay.verification",
    ),
    "discover": "assay.discovery",
    **dict.fromkeys(("Plan", "PlanOptions"), "assay.plan"),
    **dict.fromkeys(("select_sandbox", "Sandbox", "SandboxUnavailable"), "assay.sandbox"),
    "VerdictCache": "assay.cache",
    **dict.fromkeys(("verify", "VerifyOptions", "VerifyUsageError"), "assay.pipeline"),
}

__all__ = ["__version__", *_EXPORTS]  # noqa: PLE0604 - _EXPORTS' keys are strings


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'assay' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:  # for type checkers and editors: the same names, imported eagerly
    from assay.cache import VerdictCache as VerdictCache
    from assay.discovery import discover as discover
    from assay.engine import run_check as run_check
    from assay.environment import EnvPolicy as EnvPolicy
    from assay.evidence import Check as Check
    from assay.evidence import CheckerId as CheckerId
    from assay.evidence import Diagnostic as Diagnostic
    from assay.evidence import Evidence as Evidence
    from assay.evidence import TestCase as TestCase
    from assay.evidence import TestCounts as TestCounts
    from assay.output import CapturedOutput as CapturedOutput
    from assay.pipeline import VerifyOptions as VerifyOptions
    from assay.pipeline import VerifyUsageError as VerifyUsageError
    from assay.pipeline import verify as verify
    from assay.plan import Plan as Plan
    from assay.plan import PlanOptions as PlanOptions
    from assay.probe import ProbeCache as ProbeCache
    from assay.probe import ProbeError as ProbeError
    from assay.probe import ProbeFailure as ProbeFailure
    from assay.probe import ToolchainError as ToolchainError
    from assay.process import CommandRunner as CommandRunner
    from assay.process import InvalidRun as InvalidRun
    from assay.process import ProcessResult as ProcessResult
    from assay.process import StartFailure as StartFailure
    from assay.process import run_process as run_process
    from assay.report import Report as Report
    from assay.report import aggregate as aggregate
    from assay.runner import Isolation as Isolation
    from assay.runner import Outcome as Outcome
    from assay.runner import Verifier as Verifier
    from assay.runner import VerifierContext as VerifierContext
    from assay.runner import run_verifiers as run_verifiers
    from assay.sandbox import Sandbox as Sandbox
    from assay.sandbox import SandboxUnavailable as SandboxUnavailable
    from assay.sandbox import select_sandbox as select_sandbox
    from assay.verdict import Cause as Cause
    from assay.verdict import Kind as Kind
    from assay.verdict import Status as Status
    from assay.verdict import Verdict as Verdict
    from assay.verification import StepStartError as StepStartError
    from assay.verification import Verification as Verification
    from assay.verification import VerificationError as VerificationError
    from assay.verification import VerificationResult as VerificationResult

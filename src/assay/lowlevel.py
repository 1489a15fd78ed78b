"""assay's building blocks, below the public surface of `assay`.

These compose into what `assay.verify` and `assay.run_command` do, and make fewer
promises on their own: `run_check` runs a check with whatever runner and probes it is
given (with none, on the host, and a project's own binary is identified by running it
there); a `Sandbox` must be checked (`ensure_available`), provisioned and cleaned up by
its caller; `aggregate` decides a status from the inputs it is handed. Prefer
`assay.verify` and `assay.run_command`, which do all of that in one sandboxed session
(`assay.session`).

    ProcessResult, CapturedOutput, StartFailure,      the process layer
    InvalidRun, CommandRunner, EnvPolicy
    CheckerId, Diagnostic, TestCase, TestCounts       evidence details
    aggregate, RunRecord                              status rules, the run record
    Isolation                                         where a verifier runs
    ProbeCache, ProbeFailure, ProbeError,             identifying tools
    ToolchainError
    run_check, CommandRun, open_session               one check; one command's run; a session
    Verification, VerificationResult,                 the build-then-test contract
    VerificationError, StepStartError
    discover, Plan, PlanOptions, make_plan            discovery and planning
    select_sandbox, Sandbox, SandboxUnavailable       sandbox backends
    VerdictCache                                      the verdict cache
"""

from __future__ import annotations

from assay.cache import VerdictCache
from assay.check_execution import run_check
from assay.check_verifiers import CommandRun
from assay.discovery import discover
from assay.environment import EnvPolicy
from assay.evidence import CheckerId, Diagnostic, TestCase, TestCounts
from assay.output import CapturedOutput
from assay.pipeline import make_plan
from assay.plan import Plan, PlanOptions
from assay.probe import ProbeCache, ProbeError, ProbeFailure, ToolchainError
from assay.process import CommandRunner, InvalidRun, ProcessResult, StartFailure
from assay.report import aggregate
from assay.run_record import RunRecord
from assay.runner import Isolation
from assay.sandbox import Sandbox, SandboxUnavailable, select_sandbox
from assay.session import open_session
from assay.verification import (
    StepStartError,
    Verification,
    VerificationError,
    VerificationResult,
)

__all__ = [
    "CapturedOutput",
    "CheckerId",
    "CommandRun",
    "CommandRunner",
    "Diagnostic",
    "EnvPolicy",
    "InvalidRun",
    "Isolation",
    "Plan",
    "PlanOptions",
    "ProbeCache",
    "ProbeError",
    "ProbeFailure",
    "ProcessResult",
    "RunRecord",
    "Sandbox",
    "SandboxUnavailable",
    "StartFailure",
    "StepStartError",
    "TestCase",
    "TestCounts",
    "ToolchainError",
    "VerdictCache",
    "Verification",
    "VerificationError",
    "VerificationResult",
    "aggregate",
    "discover",
    "make_plan",
    "open_session",
    "run_check",
    "select_sandbox",
]

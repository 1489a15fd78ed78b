"""assay: ground truth about code -- does it build, type-check, lint and pass its tests?

The public surface, by where it lives. Names are loaded on first use (PEP 562), so that
`import assay` -- and the CLI's start-up -- pays only for what is used.

    verify, VerifyOptions, VerifyUsageError     assay.pipeline     a repository -> a Report
    Report                                      assay.report       the status and its evidence
    Check, Evidence                             assay.evidence     one command, what it showed
    Verdict, Cause, Kind, Status                assay.verdict      the vocabulary of verdicts
    run_verifiers, Verifier, VerifierContext,   assay.runner       your own verifiers, run
    Outcome                                                        fail-closed
    run_process                                 assay.process      one process, bounded and killable
    run_command                                 assay.check_verifiers     one command, confined as verify
                                                                   confines its checks
    AssayError                                  assay.errors       the base of every assay error
    run_eval                                    assay.eval         agents evaluated on tasks

`assay.verify` never raises for what goes wrong while verifying: only unusable options,
path or configuration raise (`VerifyUsageError`); everything else is an INDETERMINATE
report naming its cause.

Everything else (the planner, the sandboxes, probing, the verdict cache, the
build-then-test contract, `run_check`...) is in `assay.lowlevel`: building blocks that
make no promise to confine what they run unless they are told how. Test doubles
(well-behaved and misbehaving verifiers) are in `assay.testing`.
"""

from __future__ import annotations

from assay._version import __version__ as __version__

# Not `from typing import ...`: `assay --version` imports this package, and typing alone
# costs more than the rest of its start-up (type checkers read the name either way).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Public name -> the module that defines it.
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("verify", "VerifyOptions", "VerifyUsageError"), "assay.pipeline"),
    "Report": "assay.report",
    **dict.fromkeys(("Check", "Evidence"), "assay.evidence"),
    **dict.fromkeys(("Verdict", "Cause", "Kind", "Status"), "assay.verdict"),
    **dict.fromkeys(("run_verifiers", "Verifier", "VerifierContext", "Outcome"), "assay.runner"),
    "run_process": "assay.process",
    "run_command": "assay.check_verifiers",
    "AssayError": "assay.errors",
    "run_eval": "assay.eval.api",
}

__all__ = ["__version__", *_EXPORTS]  # noqa: PLE0604 - _EXPORTS' keys are strings


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        return _moved(name)
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def _moved(name: str) -> Any:
    """A name that used to be here: still found, with a warning saying where it lives now."""
    import importlib
    import os
    import warnings

    here = os.path.dirname(__file__)
    if name.startswith("_") or any(
        os.path.exists(os.path.join(here, name + tail)) for tail in (".py", "/__init__.py")
    ):
        # A submodule: `from assay import scratch` asks here first, then imports it. (Not
        # importlib.util.find_spec: importing that costs the warm client a millisecond.)
        raise AttributeError(f"module 'assay' has no attribute {name!r}")
    # By its full name: `from assay import lowlevel` would ask this module's __getattr__.
    lowlevel = importlib.import_module("assay.lowlevel")
    if name not in lowlevel.__all__:
        raise AttributeError(f"module 'assay' has no attribute {name!r}")
    warnings.warn(
        f"assay.{name} is deprecated: import it from assay.lowlevel",
        DeprecationWarning,
        stacklevel=3,
    )
    return getattr(lowlevel, name)


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:  # for type checkers and editors: the same names, imported eagerly
    from assay.check_verifiers import run_command as run_command
    from assay.errors import AssayError as AssayError
    from assay.eval.api import run_eval as run_eval
    from assay.evidence import Check as Check
    from assay.evidence import Evidence as Evidence
    from assay.pipeline import VerifyOptions as VerifyOptions
    from assay.pipeline import VerifyUsageError as VerifyUsageError
    from assay.pipeline import verify as verify
    from assay.process import run_process as run_process
    from assay.report import Report as Report
    from assay.runner import Outcome as Outcome
    from assay.runner import Verifier as Verifier
    from assay.runner import VerifierContext as VerifierContext
    from assay.runner import run_verifiers as run_verifiers
    from assay.verdict import Cause as Cause
    from assay.verdict import Kind as Kind
    from assay.verdict import Status as Status
    from assay.verdict import Verdict as Verdict

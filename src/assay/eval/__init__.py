"""`assay eval`: evaluate coding agents end to end.

Each attempt goes generate -> provision -> run -> verify -> score, each stage behind a seam
you can replace:

    run_eval, EvalResult, EvalUsageError     assay.eval.api            the entry point
    Harness, Planned                         assay.eval.harness        sequencing, failure policy
    TaskSpec, load_task, TaskError           assay.eval.task           task folders
    Registry, Generator, FolderGenerator     assay.eval.generators     generators by language
    Runner, AgentResult, runner_for          assay.eval.runners        nop, oracle, patch, command
    Verifier, AssayVerifier, Verification    assay.eval.verify_stage   the change, verified
    Score, score                             assay.eval.score          the rubric
    Store                                    assay.eval.store          SQLite results

Names are loaded on first use, so importing this package costs nothing until one is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("run_eval", "EvalResult", "EvalUsageError"), "assay.eval.api"),
    **dict.fromkeys(("Harness", "Planned"), "assay.eval.harness"),
    **dict.fromkeys(("TaskSpec", "load_task", "TaskError"), "assay.eval.task"),
    **dict.fromkeys(("Registry", "Generator", "FolderGenerator"), "assay.eval.generators"),
    **dict.fromkeys(("Runner", "AgentResult", "runner_for"), "assay.eval.runners"),
    **dict.fromkeys(("Verifier", "AssayVerifier", "Verification"), "assay.eval.verify_stage"),
    **dict.fromkeys(("Score", "score"), "assay.eval.score"),
    "Store": "assay.eval.store",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'assay.eval' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from assay.eval.api import EvalResult as EvalResult
    from assay.eval.api import EvalUsageError as EvalUsageError
    from assay.eval.api import run_eval as run_eval
    from assay.eval.generators import FolderGenerator as FolderGenerator
    from assay.eval.generators import Generator as Generator
    from assay.eval.generators import Registry as Registry
    from assay.eval.harness import Harness as Harness
    from assay.eval.harness import Planned as Planned
    from assay.eval.runners import AgentResult as AgentResult
    from assay.eval.runners import Runner as Runner
    from assay.eval.runners import runner_for as runner_for
    from assay.eval.score import Score as Score
    from assay.eval.score import score as score
    from assay.eval.store import Store as Store
    from assay.eval.task import TaskError as TaskError
    from assay.eval.task import TaskSpec as TaskSpec
    from assay.eval.task import load_task as load_task
    from assay.eval.verify_stage import AssayVerifier as AssayVerifier
    from assay.eval.verify_stage import Verification as Verification
    from assay.eval.verify_stage import Verifier as Verifier

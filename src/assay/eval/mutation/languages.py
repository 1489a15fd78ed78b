"""What the mutation generator needs of a language: its source files, its mutation sites,
and a sandboxed run of some tests on a commit that says which failed and how."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from assay.eval.mutation.model import Mutation


@dataclass(frozen=True, slots=True)
class TestRun:
    failed: dict[str, str] = field(default_factory=dict)
    """Test id -> its failure message."""
    timed_out: bool = False
    problem: str = ""
    """Why the run said nothing usable (the tests did not start, no report), else empty."""


class Language(Protocol):
    name: str

    def is_source(self, path: str) -> bool:
        """A file whose code may be mutated (not a test)."""
        ...

    def sites(self, text: bytes, path: str) -> list[Mutation]: ...

    def run_tests(
        self,
        repo: Path,
        commit: str,
        tests: Sequence[str],
        *,
        sandbox: str,
        timeout: float,
        environment: Path,
    ) -> TestRun:
        """`tests` at `commit` of `repo` (a scratch clone); `environment` is the repository
        the mutants come from, whose installed environment (`.venv`) the tests need."""
        ...


class Python:
    name = "python"

    def is_source(self, path: str) -> bool:
        from assay.eval.graph.python_units import is_python_test_file

        return path.endswith(".py") and not is_python_test_file(path)

    def sites(self, text: bytes, path: str) -> list[Mutation]:
        from assay.eval.mutation.python_operators import python_mutations

        return python_mutations(text, path)

    def run_tests(
        self,
        repo: Path,
        commit: str,
        tests: Sequence[str],
        *,
        sandbox: str,
        timeout: float,
        environment: Path,
    ) -> TestRun:
        from assay.eval.graph.sandboxed_pytest import PytestRunError, run_pytest

        try:
            run = run_pytest(
                repo,
                commit,
                tests=tests,
                sandbox=sandbox,
                timeout=timeout,
                environment=environment,
            )
        except PytestRunError as exc:
            return TestRun(problem=str(exc))
        if run.timed_out:
            return TestRun(timed_out=True)
        return TestRun(failed={t: o.message for t, o in run.failed.items()})


def language_named(name: str) -> Language:
    """The language `name`; raises KeyError when there is no mutation support for it."""
    if name == "python":
        return Python()
    if name == "go":
        from assay.eval.mutation.go_language import Go

        return Go()
    raise KeyError(name)

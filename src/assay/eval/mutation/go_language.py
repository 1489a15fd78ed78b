"""Go for the mutation generator: token-level operators, `go test -json` in the sandbox."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from assay.eval.mutation.languages import TestRun
from assay.eval.mutation.model import Mutation


class Go:
    name = "go"

    def is_source(self, path: str) -> bool:
        return path.endswith(".go") and not path.endswith("_test.go")

    def sites(self, text: bytes, path: str) -> list[Mutation]:
        from assay.eval.mutation.go_operators import go_mutations

        return go_mutations(text, path)

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
        del environment  # go's modules come from its own caches, not from the repository
        from assay.eval.graph.sandboxed_go import GoRunError, run_go_tests

        packages = sorted({t.rsplit(".", 1)[0] for t in tests})
        names = sorted({t.rsplit(".", 1)[1] for t in tests})
        try:
            run = run_go_tests(
                repo, commit, packages=packages, tests=names, sandbox=sandbox, timeout=timeout
            )
        except GoRunError as exc:
            return TestRun(problem=str(exc))
        if run.timed_out:
            return TestRun(timed_out=True)
        if run.broken_packages:
            return TestRun(problem=f"does not build: {', '.join(run.broken_packages)}")
        failed = {t: run.messages.get(t, "") for t, o in run.outcomes.items() if o == "fail"}
        return TestRun(failed=failed)

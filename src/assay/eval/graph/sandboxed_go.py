"""`go test -json` on a commit of a repository inside the sandbox: each test's outcome and
its failure output, by package. The events are read from the captured (bounded) output as
data; nothing of the repository runs on the host."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from assay.errors import AssayError

#: Lines of a failing test's own output kept as its message.
MESSAGE_LINES = 6


class GoRunError(AssayError):
    """go test could not be run in the sandbox."""


@dataclass(frozen=True, slots=True)
class GoRun:
    exit_code: int | None
    timed_out: bool
    outcomes: dict[str, str] = field(default_factory=dict)
    """`package.TestName` -> `pass`, `fail` or `skip` (top-level tests only)."""
    messages: dict[str, str] = field(default_factory=dict)
    broken_packages: tuple[str, ...] = ()
    """Packages that failed with no test failing in them (they did not build)."""
    output: str = ""
    truncated: bool = False


def go_binary() -> str:
    found = shutil.which("go")
    if found is None:
        raise GoRunError("no go on PATH to run the repository's tests with")
    return str(Path(found).resolve())


def run_go_tests(
    repo: Path,
    commit: str,
    *,
    packages: Sequence[str] = ("./...",),
    tests: Sequence[str] = (),
    sandbox: str = "auto",
    timeout: float = 600.0,
) -> GoRun:
    """`go test -json` of `packages` (only the top-level `tests` named, when given)."""
    from assay.sandbox import BwrapOptions, SandboxError, select_sandbox

    go = go_binary()
    box = select_sandbox(sandbox, bwrap_options=BwrapOptions(toolchain_paths=(go,)))
    argv = [go, "test", "-json", "-count=1"]
    if tests:
        argv += ["-run", "^(" + "|".join(sorted(set(tests))) + ")$"]
    try:
        with box.workspace(repo, commit=commit) as workspace:
            result = box.run(
                workspace, [*argv, *packages], env={"GOTOOLCHAIN": "local"}, timeout=timeout
            )
    except SandboxError as exc:
        raise GoRunError(f"the sandbox could not run go test: {exc}") from exc
    if result.start_error:
        raise GoRunError(f"go test did not start: {result.start_error}")
    text = result.stdout.text
    if result.timed_out:
        return GoRun(result.exit_code, True, output=text[-2000:])
    outcomes, messages, broken = parse_events(text)
    return GoRun(
        exit_code=result.exit_code,
        timed_out=False,
        outcomes=outcomes,
        messages=messages,
        broken_packages=broken,
        output=(text + result.stderr.text)[-3000:],
        truncated=result.stdout.truncated,
    )


def parse_events(text: str) -> tuple[dict[str, str], dict[str, str], tuple[str, ...]]:
    """Outcomes and failure messages of top-level tests, and packages that failed with no
    test of theirs failing, from `go test -json` output (other lines are ignored)."""
    outcomes: dict[str, str] = {}
    output: dict[str, list[str]] = {}
    failed_packages: set[str] = set()
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(event, dict):
            continue
        package, test, action = event.get("Package"), event.get("Test"), event.get("Action")
        if not isinstance(package, str) or not isinstance(action, str):
            continue
        if not isinstance(test, str):
            if action == "fail":
                failed_packages.add(package)
            continue
        top = test.split("/", 1)[0]
        key = f"{package}.{top}"
        if action == "output" and isinstance(event.get("Output"), str):
            output.setdefault(key, []).append(event["Output"])
        elif action in ("pass", "fail", "skip") and "/" not in test:
            outcomes[key] = action
    messages = {key: _message(output.get(key, [])) for key, o in outcomes.items() if o == "fail"}
    with_failures = {key.rsplit(".", 1)[0] for key, o in outcomes.items() if o == "fail"}
    return outcomes, messages, tuple(sorted(failed_packages - with_failures))


def _message(lines: list[str]) -> str:
    kept = [
        line.strip()
        for line in lines
        if line.strip() and not line.lstrip().startswith(("=== ", "--- ", "FAIL", "PASS", "ok "))
    ]
    return "\n".join(kept[:MESSAGE_LINES])

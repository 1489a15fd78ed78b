"""What one check is, and the evidence it produced: values with a JSON form that round-trips."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.process_result import ProcessResult
from assay.verdict import Cause, Kind, Verdict

#: Version of the evidence JSON document.
EVIDENCE_SCHEMA = "assay.evidence/1"


@dataclass(frozen=True, slots=True)
class CheckerId:
    """The tool that produced a verdict, identified by probing it."""

    tool: str
    """Logical tool name (`mypy`, `tsc`, `go`)."""
    version: str
    """The version string as the tool reported it."""
    path: str | None = None
    """The resolved path of the binary that ran."""

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "version": self.version, "path": self.path}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CheckerId:
        return cls(tool=str(data["tool"]), version=str(data["version"]), path=data.get("path"))


#: Seconds a command may run unless told otherwise (`assay run`); for a verify check with
#: no deadline of its own, the seconds it may go without printing: long enough for any one
#: test, short enough that a hung test does not stall an agent.
DEFAULT_TIMEOUT_S = 60.0
#: A verify check with no deadline of its own runs at most this long while it keeps
#: printing: a slow suite reports each test as it passes, a hung one goes quiet.
DEFAULT_PRINTING_DEADLINE_S = 600.0


@dataclass(frozen=True, slots=True)
class Check:
    """One command answering one question about the code."""

    name: str
    """Short unique name within a plan (`pytest`, `tsc`, `make-test`)."""
    kind: Kind
    argv: tuple[str, ...]
    cwd: str = "."
    """Directory to run in, relative to the repository root (or absolute)."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Variables laid over the environment policy."""
    timeout_s: float | None = None
    no_output_timeout_s: float | None = None
    """Stopped once this long has passed without a byte of output (None: only `timeout_s`)."""
    tool: str | None = None
    """Logical tool whose output format is parsed and whose version is probed."""
    source: str | None = None
    """Where this check came from (`package.json:7`, `default`)."""
    reason: str | None = None
    """Why it was chosen."""

    @property
    def longest_step_s(self) -> float | None:
        """The most one step (a test) can take: a step that prints only when it ends is
        bounded by the no-output limit as well as by the deadline."""
        limits = [t for t in (self.timeout_s, self.no_output_timeout_s) if t]
        return min(limits, default=None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind.value,
            "argv": list(self.argv),
            "cwd": self.cwd,
            "env": dict(self.env),
            "timeout_s": self.timeout_s,
            "no_output_timeout_s": self.no_output_timeout_s,
            "tool": self.tool,
            "source": self.source,
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Check:
        return cls(
            name=str(data["name"]),
            kind=Kind(data["kind"]),
            argv=tuple(data["argv"]),
            cwd=str(data.get("cwd", ".")),
            env=dict(data.get("env") or {}),
            timeout_s=data.get("timeout_s"),
            no_output_timeout_s=data.get("no_output_timeout_s"),
            tool=data.get("tool"),
            source=data.get("source"),
            reason=data.get("reason"),
        )


#: The key of `Evidence.extra` that says what stopped a check where its own limits did
#: not; and its value for what was left of the run's overall deadline (`--deadline`).
STOPPED_BY, RUN_DEADLINE = "stopped_by", "run_deadline"

#: Directories an installed distribution's files live in.
INSTALLED_DIRS = frozenset({"site-packages", "dist-packages", "node_modules"})


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem a tool reported, in structure."""

    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    code: str | None = None
    """The tool's rule or error code (`E501`, `TS2322`, `arg-type`)."""
    severity: str = "error"
    """`error`, `warning` or `note`."""
    tool: str | None = None

    @property
    def in_installed_package(self) -> bool:
        """Whether its file lies in an installed distribution (`.../site-packages/...`,
        `node_modules/...`): code that is not the project's own."""
        return self.file is not None and not INSTALLED_DIRS.isdisjoint(self.file.split("/"))

    @property
    def place(self) -> str:
        """`file:line`, the file alone when the tool named no line, "" when no file."""
        if not self.file:
            return ""
        return self.file if self.line is None else f"{self.file}:{self.line}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "code": self.code,
            "severity": self.severity,
            "tool": self.tool,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Diagnostic:
        return cls(**{k: data.get(k) for k in cls.__slots__ if k in data})  # type: ignore[arg-type]


def project_first(diagnostics: Sequence[Diagnostic]) -> Diagnostic | None:
    """The first error of `diagnostics` in the project's own code, else the first error,
    else the first in the project's own code, else the first of all: what failed a check
    is an error (eslint lists a file's warnings beside the one error that failed it), and
    one in an installed package is what a note quotes only when there is no other."""
    errors = [d for d in diagnostics if d.severity == "error"]
    for found in (errors, diagnostics):
        first = next((d for d in found if not d.in_installed_package), None)
        if first is not None or found:
            return first or found[0]
    return None


@dataclass(frozen=True, slots=True)
class TestCase:
    """One test's outcome, as a runner reported it."""

    __test__ = False  # not a pytest test class

    name: str
    outcome: str
    """`passed`, `failed`, `error`, `skipped`, `xfailed` (an expected failure that failed,
    as marked: pytest's xfail; counted with the skipped)."""
    file: str | None = None
    duration_s: float | None = None
    message: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "outcome": self.outcome,
            "file": self.file,
            "duration_s": self.duration_s,
            "message": self.message,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TestCase:
        return cls(
            name=str(data["name"]),
            outcome=str(data["outcome"]),
            file=data.get("file"),
            duration_s=data.get("duration_s"),
            message=data.get("message"),
        )


@dataclass(frozen=True, slots=True)
class TestCounts:
    """How many tests a runner executed, by outcome, and where the numbers came from."""

    __test__ = False

    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    source: str = "text"
    """`junit`, `go-json`, `jest-json`, `text`: how the counts were read."""

    @property
    def executed(self) -> int:
        """Tests that ran (skipped ones did not)."""
        return self.passed + self.failed + self.errors

    @property
    def any_failed(self) -> bool:
        return self.failed + self.errors > 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "failed": self.failed,
            "errors": self.errors,
            "skipped": self.skipped,
            "executed": self.executed,
            "source": self.source,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TestCounts:
        return cls(
            passed=int(data.get("passed", 0)),
            failed=int(data.get("failed", 0)),
            errors=int(data.get("errors", 0)),
            skipped=int(data.get("skipped", 0)),
            source=str(data.get("source", "text")),
        )


@dataclass(frozen=True, slots=True)
class Evidence:
    """The verdict on one check, and everything needed to believe it."""

    check: Check
    verdict: Verdict
    cause: Cause
    checker: CheckerId | None = None
    """The probed tool; None when it could not be identified."""
    result: ProcessResult | None = None
    """None when nothing ran (missing toolchain, refused sandbox before start)."""
    diagnostics: tuple[Diagnostic, ...] = ()
    tests: TestCounts | None = None
    test_cases: tuple[TestCase, ...] = ()
    reason: str = ""
    """The failure reason shown to a person or agent: head of compiler output, tail of test output."""
    note: str = ""
    """What to do about a non-passing verdict (install X, raise the timeout)."""
    sandbox: str | None = None
    """The sandbox backend (and version) the command ran in."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Anything else worth keeping about this check (the binaries looked for when its
    tool is missing; for `assay run`, the run record's keys). Tampering signals are the
    whole run's: they are in the report's run record, not here."""

    def __post_init__(self) -> None:
        if self.cause.verdict is not self.verdict:
            raise ValueError(f"cause {self.cause.value} cannot carry verdict {self.verdict.value}")

    @property
    def passed(self) -> bool:
        return self.verdict.passed

    def to_dict(self) -> dict[str, Any]:
        result = self.result
        empty = {"text": "", "truncated": False, "bytes": 0}
        return {
            "schema": EVIDENCE_SCHEMA,
            "verdict": self.verdict.value,
            "cause": self.cause.value,
            "kind": self.check.kind.value,
            "name": self.check.name,
            "argv": list(result.argv if result else self.check.argv),
            "cwd": result.cwd if result else self.check.cwd,
            "exit_code": result.exit_code if result else None,
            "signal": result.signal if result else None,
            "timed_out": result.timed_out if result else False,
            "duration_s": round(result.duration_s, 6) if result else 0.0,
            # What the check's process tree cost (None: nothing ran, or it was not measured).
            "cpu_s": round(result.cpu_s, 6) if result and result.cpu_s is not None else None,
            "peak_rss_bytes": result.peak_rss_bytes if result else None,
            "checker": self.checker.to_dict() if self.checker else None,
            "stdout": result.stdout.to_dict() if result else empty,
            "stderr": result.stderr.to_dict() if result else empty,
            "reason": self.reason,
            "note": self.note,
            "diagnostics": [d.to_dict() for d in self.diagnostics],
            "tests": self.tests.to_dict() if self.tests else None,
            "test_cases": [t.to_dict() for t in self.test_cases],
            "sandbox": self.sandbox,
            "check": self.check.to_dict(),
            "process": result.to_dict() if result else None,
            "extra": dict(self.extra),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Evidence:
        schema = data.get("schema")
        if schema != EVIDENCE_SCHEMA:
            raise ValueError(f"unsupported evidence schema {schema!r} (expected {EVIDENCE_SCHEMA})")
        return cls(
            check=Check.from_dict(data["check"]),
            verdict=Verdict(data["verdict"]),
            cause=Cause(data["cause"]),
            checker=CheckerId.from_dict(data["checker"]) if data.get("checker") else None,
            result=ProcessResult.from_dict(data["process"]) if data.get("process") else None,
            diagnostics=tuple(Diagnostic.from_dict(d) for d in data.get("diagnostics", [])),
            tests=TestCounts.from_dict(data["tests"]) if data.get("tests") else None,
            test_cases=tuple(TestCase.from_dict(t) for t in data.get("test_cases", [])),
            reason=str(data.get("reason", "")),
            note=str(data.get("note", "")),
            sandbox=data.get("sandbox"),
            extra=dict(data.get("extra") or {}),
        )


def evidence_for(check: Check, cause: Cause, **fields: Any) -> Evidence:
    """Evidence whose verdict is the one its cause implies (the usual constructor)."""
    return Evidence(check=check, verdict=cause.verdict, cause=cause, **fields)

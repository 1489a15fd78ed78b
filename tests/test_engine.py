"""The run loop: `verify` (build then test, one deadline) and `run_check` (probe, instrument, run)."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from assay.check_execution import run_check
from assay.evidence import Check, CheckerId
from assay.instrument import instrument
from assay.probe import ProbeCache
from assay.process import ProcessResult, StartFailure
from assay.verdict import Cause, Kind, Status, Verdict
from assay.verification import (
    Phase,
    StepStartError,
    Verification,
    VerificationError,
    verify,
)
from tests.results import process_result

PY = sys.executable


def py(code: str) -> tuple[str, ...]:
    return (PY, "-c", code)


def fake_result(
    argv: Sequence[str],
    cwd: str,
    *,
    exit_code: int | None = 0,
    stdout: str = "",
    timed_out: bool = False,
    start_failure: StartFailure | None = None,
) -> ProcessResult:
    return process_result(
        argv,
        cwd=cwd,
        exit_code=None if start_failure else exit_code,
        signal=9 if timed_out else None,
        timed_out=timed_out,
        start_failure=start_failure,
        start_error=f"{argv[0]}: No such file or directory" if start_failure else None,
        duration_s=0.01,
        stdout=stdout,
    )


@dataclass
class ScriptedRunner:
    """A deterministic runner: answers each call from a script and records what it was asked.

    A reply's `writes` ({path: text}) are files the "tool" writes while it runs, as pytest
    writes its JUnit report.
    """

    replies: list[dict[str, object]]
    calls: list[dict[str, object]] = field(default_factory=list)

    def __call__(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        no_output_timeout: float | None = None,
    ) -> ProcessResult:
        self.calls.append({"argv": tuple(argv), "cwd": cwd, "env": env, "timeout": timeout})
        reply = dict(self.replies.pop(0))
        writes: Mapping[Path, str] = reply.pop("writes", {})  # type: ignore[assignment]
        for path, text in writes.items():
            path.write_text(text)
        return fake_result(argv, cwd, **reply)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- verify: spec


@pytest.mark.parametrize("timeout", [-1, float("nan")])
def test_bad_timeouts_are_rejected(timeout: float) -> None:
    with pytest.raises(VerificationError):
        Verification(test_cmd=("true",), timeout_seconds=timeout)


def test_empty_test_command_is_rejected() -> None:
    with pytest.raises(VerificationError):
        Verification(test_cmd=())


def test_missing_spec_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(VerificationError, match="spec"):
        verify(None, tmp_path)


@pytest.mark.parametrize("workdir", [None, ""])
def test_empty_workdir_is_rejected_before_anything_runs(workdir: str | None) -> None:
    runner = ScriptedRunner([])
    with pytest.raises(VerificationError, match="workdir"):
        verify(Verification(test_cmd=("true",)), workdir, runner=runner)
    assert runner.calls == []


def test_missing_workdir_is_rejected(tmp_path: Path) -> None:
    runner = ScriptedRunner([])
    with pytest.raises(VerificationError, match="does not exist"):
        verify(Verification(test_cmd=("true",)), tmp_path / "gone", runner=runner)
    assert runner.calls == []


# --------------------------------------------------------------------------- verify: run loop (injected runner)


def test_build_then_test_both_run_in_workdir_with_env(tmp_path: Path) -> None:
    runner = ScriptedRunner([{}, {"stdout": "2 passed"}])
    spec = Verification(build_cmd=("make",), test_cmd=("make", "test"))
    result = verify(spec, tmp_path, {"CI": "1"}, runner=runner)
    assert (result.passed, result.phase, result.exit_code) == (True, Phase.TEST, 0)
    assert [c["argv"] for c in runner.calls] == [("make",), ("make", "test")]
    assert {c["cwd"] for c in runner.calls} == {str(tmp_path)}
    assert all(c["env"] == {"CI": "1"} for c in runner.calls)


def test_failing_build_short_circuits_the_tests(tmp_path: Path) -> None:
    runner = ScriptedRunner([{"exit_code": 2, "stdout": "compile error"}])
    spec = Verification(build_cmd=("make",), test_cmd=("make", "test"))
    result = verify(spec, tmp_path, runner=runner)
    assert (result.passed, result.phase, result.exit_code) == (False, Phase.BUILD, 2)
    assert len(runner.calls) == 1
    assert result.stdout == "compile error"


def test_failing_tests_are_a_result_not_an_error(tmp_path: Path) -> None:
    runner = ScriptedRunner([{}, {"exit_code": 1, "stdout": "1 failed"}])
    spec = Verification(build_cmd=("make",), test_cmd=("make", "test"))
    result = verify(spec, tmp_path, runner=runner)
    assert (result.passed, result.phase, result.exit_code) == (False, Phase.TEST, 1)
    assert [s.phase for s in result.steps] == [Phase.BUILD, Phase.TEST]


def test_no_build_runs_only_the_tests(tmp_path: Path) -> None:
    runner = ScriptedRunner([{"stdout": "1 passed"}])
    result = verify(Verification(test_cmd=("pytest",)), tmp_path, runner=runner)
    assert result.passed is True and len(runner.calls) == 1


@pytest.mark.parametrize("phase_index", [0, 1])
def test_a_step_that_cannot_start_raises_with_its_phase(tmp_path: Path, phase_index: int) -> None:
    replies: list[dict[str, object]] = [{}] * phase_index + [
        {"start_failure": StartFailure.NOT_FOUND}
    ]
    runner = ScriptedRunner(replies)
    spec = Verification(build_cmd=("make",), test_cmd=("make", "test"))
    with pytest.raises(StepStartError) as caught:
        verify(spec, tmp_path, runner=runner)
    assert caught.value.phase is [Phase.BUILD, Phase.TEST][phase_index]
    assert isinstance(caught.value.__cause__, OSError)


def test_a_runner_os_error_raises_with_its_phase(tmp_path: Path) -> None:
    def exploding(
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        no_output_timeout: float | None = None,
    ) -> ProcessResult:
        raise PermissionError("denied")

    with pytest.raises(StepStartError) as caught:
        verify(Verification(test_cmd=("x",)), tmp_path, runner=exploding)
    assert caught.value.phase is Phase.TEST
    assert isinstance(caught.value.__cause__, PermissionError)


def test_one_deadline_covers_build_and_test(tmp_path: Path) -> None:
    runner = ScriptedRunner([{}, {}])
    verify(
        Verification(build_cmd=("b",), test_cmd=("t",), timeout_seconds=30), tmp_path, runner=runner
    )
    build_timeout, test_timeout = (c["timeout"] for c in runner.calls)
    assert isinstance(build_timeout, float) and isinstance(test_timeout, float)
    assert 0 < test_timeout <= build_timeout <= 30


def test_zero_timeout_means_no_deadline(tmp_path: Path) -> None:
    runner = ScriptedRunner([{}])
    verify(Verification(test_cmd=("t",)), tmp_path, runner=runner)
    assert runner.calls[0]["timeout"] is None


# --------------------------------------------------------------------------- verify: real processes


def test_real_build_and_test_pass(tmp_path: Path) -> None:
    spec = Verification(
        build_cmd=py("open('built', 'w').write('ok')"),
        test_cmd=py(
            "import os, sys; print(open('built').read(), os.environ['MARK']); print('1 passed')"
        ),
        timeout_seconds=30,
    )
    result = verify(spec, tmp_path, {"MARK": "m1"})
    assert result.passed is True and result.status is Status.VERIFIED
    # A test step passes when it shows a test executed, as `assay verify` requires.
    assert result.stdout.split() == ["ok", "m1", "1", "passed"]


@pytest.mark.slow
def test_real_deadline_spans_both_steps(tmp_path: Path) -> None:
    spec = Verification(
        build_cmd=py("import time; time.sleep(0.6)"),
        test_cmd=py("import time; time.sleep(30)"),
        timeout_seconds=1.5,
    )
    result = verify(spec, tmp_path)
    assert (result.passed, result.phase, result.timed_out) == (False, Phase.TEST, True)
    assert result.duration_s < 10


def test_a_test_step_that_executed_no_test_does_not_pass(tmp_path: Path) -> None:
    """Exit 0 is not a pass for a test step that ran nothing: `assay verify` would say
    inconclusive / no_tests_observed, so the build-then-test contract cannot pass it."""
    spec = Verification(build_cmd=py("pass"), test_cmd=py("print('all good')"), timeout_seconds=30)
    result = verify(spec, tmp_path)
    assert result.passed is False
    assert (result.phase, result.exit_code) == (Phase.TEST, 0)
    assert result.status is Status.UNVERIFIED or result.status is Status.INDETERMINATE
    assert [e.cause for e in result.evidence] == [Cause.EXIT_ZERO, Cause.NO_TESTS_OBSERVED]


def test_real_missing_binary_raises_start_error(tmp_path: Path) -> None:
    with pytest.raises(StepStartError) as caught:
        verify(Verification(test_cmd=("assay-no-such-binary-xyz",)), tmp_path)
    assert caught.value.phase is Phase.TEST


# --------------------------------------------------------------------------- run_check


def _check(tool: str, argv: tuple[str, ...], kind: Kind = Kind.TEST, **kw: object) -> Check:
    return Check(name=tool, kind=kind, argv=argv, tool=tool, **kw)  # type: ignore[arg-type]


def test_run_check_puts_the_junit_report_outside_the_workspace(tmp_path: Path) -> None:
    root, reports = tmp_path / "ws", tmp_path / "reports"
    root.mkdir()
    runner = ScriptedRunner([{"exit_code": 0, "stdout": "==== 3 passed in 0.1s ===="}])
    evidence = run_check(
        _check("pytest", (PY, "-m", "pytest")), root=root, runner=runner, report_dir=reports
    )
    argv = runner.calls[0]["argv"]
    assert isinstance(argv, tuple) and argv[-1] == f"--junitxml={reports / 'pytest.xml'}"
    # The runner wrote no report, so the printed "3 passed" is not evidence of anything.
    assert (evidence.verdict, evidence.cause) == (Verdict.INCONCLUSIVE, Cause.NO_TESTS_OBSERVED)


def test_run_check_rejects_a_report_dir_inside_the_workspace(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="inside the workspace"):
        run_check(_check("pytest", (PY, "-m", "pytest")), root=tmp_path, report_dir=tmp_path / "r")


def test_run_check_passes_cwd_and_timeout_to_the_runner(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    runner = ScriptedRunner([{"exit_code": 0}])
    check = _check("python", (PY, "-c", "pass"), kind=Kind.BUILD, cwd="sub", timeout_s=7.0)
    evidence = run_check(check, root=tmp_path, runner=runner)
    assert runner.calls[0]["cwd"] == str(tmp_path / "sub") and runner.calls[0]["timeout"] == 7.0
    assert evidence.verdict is Verdict.PASS and evidence.checker is not None


def test_run_check_start_failure_is_inconclusive(tmp_path: Path) -> None:
    runner = ScriptedRunner([{"start_failure": StartFailure.NOT_FOUND}])
    evidence = run_check(
        _check("python", (PY, "-c", "pass"), kind=Kind.BUILD), root=tmp_path, runner=runner
    )
    assert (evidence.verdict, evidence.cause) == (Verdict.INCONCLUSIVE, Cause.START_FAILED)


def test_run_check_runner_os_error_is_inconclusive_not_raised(tmp_path: Path) -> None:
    def exploding(
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        no_output_timeout: float | None = None,
    ) -> ProcessResult:
        raise OSError("sandbox refused")

    evidence = run_check(
        _check("python", (PY, "-c", "pass"), kind=Kind.BUILD), root=tmp_path, runner=exploding
    )
    assert (evidence.verdict, evidence.cause) == (Verdict.INCONCLUSIVE, Cause.START_FAILED)


def test_run_check_uses_the_shared_probe_cache(tmp_path: Path) -> None:
    probes = ProbeCache()
    for _ in range(3):
        runner = ScriptedRunner([{"exit_code": 0}])
        run_check(
            _check("python", (PY, "-c", "pass"), kind=Kind.BUILD),
            root=tmp_path,
            runner=runner,
            probes=probes,
        )
    assert probes.probes_run == 1


def test_run_check_real_timeout_is_inconclusive(tmp_path: Path) -> None:
    check = _check("python", py("import time; time.sleep(30)"), kind=Kind.BUILD, timeout_s=0.5)
    evidence = run_check(check, root=tmp_path)
    assert (evidence.verdict, evidence.cause) == (Verdict.INCONCLUSIVE, Cause.TIMEOUT)


PASSING_JUNIT = (
    '<testsuites><testsuite tests="1"><testcase classname="t" name="ok"/></testsuite></testsuites>'
)


def test_run_check_nonzero_exit_with_passing_report_is_not_a_pass(tmp_path: Path) -> None:
    root, reports = tmp_path / "ws", tmp_path / "reports"
    root.mkdir()
    runner = ScriptedRunner([{"exit_code": 1, "writes": {reports / "pytest.xml": PASSING_JUNIT}}])
    evidence = run_check(
        _check("pytest", (PY, "-m", "pytest")), root=root, runner=runner, report_dir=reports
    )
    assert (evidence.verdict, evidence.cause) == (Verdict.FAIL, Cause.REPORT_MISMATCH)


@pytest.mark.parametrize(("tool", "suffix"), [("pytest", "xml"), ("jest", "json")])
def test_a_report_left_by_an_earlier_run_is_not_this_runs_evidence(
    tmp_path: Path, tool: str, suffix: str
) -> None:
    """The report directory is reused; this run's tool wrote nothing and exited 0."""
    root, reports = tmp_path / "ws", tmp_path / "reports"
    root.mkdir()
    reports.mkdir()
    stale = {
        "xml": PASSING_JUNIT,
        "json": '{"testResults": [{"assertionResults": [{"status": "passed"}]}]}',
    }[suffix]
    (reports / f"{tool}.{suffix}").write_text(stale)
    if tool == "jest":  # a project-local jest that can say its version; the runner is scripted
        jest = root / "node_modules" / ".bin" / "jest"
        jest.parent.mkdir(parents=True)
        jest.write_text(f"#!{PY}\nprint('29.7.0')\n")
        jest.chmod(0o755)
    check = _check(tool, (PY, "-m", "pytest") if tool == "pytest" else ("jest",))
    runner = ScriptedRunner([{"exit_code": 0}])
    evidence = run_check(check, root=root, runner=runner, report_dir=reports)
    assert (evidence.verdict, evidence.cause) == (Verdict.INCONCLUSIVE, Cause.NO_TESTS_OBSERVED)


# --------------------------------------------------------------------------- instrument


@pytest.mark.parametrize(
    ("tool", "argv", "version", "expected"),
    [
        ("go", ("go", "test", "./..."), "1.19", ("go", "test", "-json", "-count=1", "./...")),
        ("go", ("go", "build", "./..."), "1.19", ("go", "build", "./...")),
        (
            "ruff",
            ("ruff", "check", "."),
            "0.5",
            ("ruff", "check", ".", "--output-format=json", "--no-fix"),
        ),
        # A 2023 pre-commit pin: ruff before 0.0.291 refuses `--output-format`.
        (
            "ruff",
            ("ruff", "check", "."),
            "0.0.260",
            ("ruff", "check", ".", "--format=json", "--no-fix"),
        ),
        (
            "ruff",
            ("ruff", "check", "."),
            "0.0.291",
            ("ruff", "check", ".", "--output-format=json", "--no-fix"),
        ),
        ("eslint", ("eslint", "."), "9.0", ("eslint", ".", "-f", "json")),
        # mypy is read as text: its JSON output exits 1 on notes alone.
        ("mypy", ("mypy", "."), "2.4.1", ("mypy", ".")),
        (
            "cargo",
            ("cargo", "clippy", "--", "-D", "warnings"),
            "1.80",
            ("cargo", "clippy", "--message-format=json", "--", "-D", "warnings"),
        ),
        ("tsc", ("tsc", "--noEmit"), "5.4", ("tsc", "--noEmit", "--pretty", "false")),
        ("node-test", ("node", "--test"), "20", ("node", "--test-reporter=tap", "--test")),
    ],
)
def test_instrument_asks_for_machine_readable_output(
    tmp_path: Path, tool: str, argv: tuple[str, ...], version: str, expected: tuple[str, ...]
) -> None:
    check = Check(name=tool, kind=Kind.LINT, argv=argv, tool=tool)
    assert instrument(check, CheckerId(tool, version), tmp_path).argv == expected


def test_instrument_sends_bytecode_to_the_report_dir(tmp_path: Path) -> None:
    check = Check(
        name="c", kind=Kind.BUILD, argv=("python3", "-m", "compileall"), tool="compileall"
    )
    planned = instrument(check, None, tmp_path)
    # Without site or the environment's PYTHON* variables: only the standard library.
    assert planned.argv[1:4] == ("-E", "-S", "-c")
    assert planned.argv[5] == str(tmp_path / "pycache")
    assert "PYTHONPYCACHEPREFIX" not in planned.env  # not for the whole interpreter

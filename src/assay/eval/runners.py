"""The Runner seam: what acts on a provisioned workspace in an attempt's `run` stage.

- `nop`: does nothing (a task it passes is a broken task);
- `oracle`: applies the task's `solution.patch`;
- `patch:FILE.jsonl`: applies a patch recorded elsewhere, one JSON object a line,
  `{"task_id": ..., "patch": ...}` (SWE-bench's `instance_id` / `model_patch` too);
- `command`: any agent CLI, run in the sandbox with the network on.

Every runner runs its commands through the sandbox: nothing of the task or the agent runs
on the host. What an agent does is recorded, never judged here: a non-zero exit is an
`AgentResult` like any other, and only an agent that could not be started at all is an
infrastructure error (`StageError`, stage `run`, cause `agent_launch_failed`).

The command runner
------------------
`CMD` is split like a shell would (no shell runs it). In each word, `{instruction_file}` is
replaced by the path of a file holding the instruction and `{workdir}` by the workspace;
when no word names `{instruction_file}`, the instruction is given on standard input. It
runs in the workspace, within the task's wall time (`limits.wall_s`); at the deadline
its whole process tree is killed. Its environment has:

    ASSAY_TASK_ID      the task's id
    ASSAY_WORKDIR      the workspace
    ASSAY_INSTRUCTION  the instruction file
    ASSAY_TELEMETRY    where the agent may write its telemetry, one JSON object:
                       {"turns": int, "retries": int, "tokens_in": int, "tokens_out": int,
                        "cost_usd": number, "model": str}   (every key optional)

Launching: a wrapper shell in the sandbox takes a nonce from a file and empties it, checks
that the files the command names (an absolute path that exists on the host, an
interpreter's script) can be read there, and execs the agent; a failure before the agent
runs is reported under the nonce. So "could not start" (the nonce reported, or never taken:
the sandbox did not start) is told from "started and exited non-zero" whatever the agent
prints: it never sees the nonce.

Usage: the agent's stdout goes through a FIFO the host reads as it arrives
(`agent_stream`); Claude Code's and Codex's JSON output is recognised there
(`agent_output`) and its usage becomes the attempt's telemetry, ahead of the telemetry
file's. When the running usage goes over the task's token or cost limit, the agent's
process tree is killed; an attempt over a limit (then, or by its final report) is scored
as a failure with the reason (`limit_exceeded`), never an infrastructure error.

The instruction, launch and telemetry files and the FIFO live in `.assay-agent/` in the
workspace, which is never part of the agent's change.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import secrets
import shlex
import shutil
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from assay.errors import AssayError
from assay.eval.agent_limits import limit_exceeded, unenforceable
from assay.eval.agent_output import OutputReader, reported_amount, reported_count
from assay.eval.agent_stream import OutputStream, kill_child_naming
from assay.eval.change import AGENT_DIR
from assay.eval.failures import Stage, StageError
from assay.eval.task import Limits, TaskSpec
from assay.output import CapturedOutput
from assay.process import ProcessResult
from assay.sandbox.base import Sandbox, Workspace, resolve_inside

INSTRUCTION_NAME = "instruction.md"
TELEMETRY_NAME = "telemetry.json"
LAUNCH_NAME = "launch"
SOLUTION_NAME = "solution.patch"
#: The most of a telemetry file that is read; a larger one is recorded as unreadable.
TELEMETRY_LIMIT_BYTES = 64 * 1024
#: Telemetry keys and the types they must have; anything else is dropped with a note.
TELEMETRY_FIELDS: Mapping[str, tuple[type, ...]] = {
    "turns": (int,),
    "retries": (int,),
    "tokens_in": (int,),
    "tokens_out": (int,),
    "cost_usd": (int, float),
    "model": (str,),
}
#: `git apply` of a recorded or oracle patch: a small task's patch applies in well under this.
APPLY_TIMEOUT_S = 120.0


class AgentSpecError(AssayError, ValueError):
    """An `--agent` value that names no usable runner."""


@dataclass(frozen=True, slots=True)
class AgentResult:
    """What the run stage did: recorded with the attempt, never a score input."""

    runner: str
    exit_code: int | None = None
    signal: int | None = None
    timed_out: bool = False
    duration_s: float = 0.0
    stdout: str = ""
    stderr: str = ""
    output_truncated: bool = False
    telemetry: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    limit_exceeded: str = ""
    """The task's limit its reported usage went over (`tokens 3600 > 3000`), if any: the
    attempt is then scored as a failure with that reason, whatever its verification."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "runner": self.runner,
            "exit_code": self.exit_code,
            "signal": self.signal,
            "timed_out": self.timed_out,
            "duration_s": round(self.duration_s, 3),
            "stdout": self.stdout,
            "stderr": self.stderr,
            "output_truncated": self.output_truncated,
            "note": self.note,
            "limit_exceeded": self.limit_exceeded,
        }


class Runner(Protocol):
    """Acts on `workspace` for `task`; raises `StageError` only when it could not start."""

    name: str

    def run(self, task: TaskSpec, sandbox: Sandbox, workspace: Workspace) -> AgentResult: ...


class NopRunner:
    name = "nop"

    def run(self, task: TaskSpec, sandbox: Sandbox, workspace: Workspace) -> AgentResult:
        return AgentResult(runner=self.name, exit_code=0, note="did nothing")


class OracleRunner:
    """Applies the task's `solution.patch`; a task without one cannot be run this way."""

    name = "oracle"

    def run(self, task: TaskSpec, sandbox: Sandbox, workspace: Workspace) -> AgentResult:
        if task.solution is None:
            raise StageError(Stage.RUN, "no_solution", f"task {task.id} has no solution.patch")
        try:
            patch = task.solution.read_bytes()
        except OSError as exc:
            raise StageError(Stage.RUN, "no_solution", f"{task.solution}: {exc}") from exc
        return apply_in_sandbox(self.name, patch, sandbox, workspace)


class PatchRunner:
    """Applies the patch recorded for each task id in a JSONL file (predictions graded
    here that were made elsewhere). A task with no recorded patch gets none: the
    prediction is missing, which scores like any change that fixes nothing."""

    name = "patch"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.patches = read_patches(self.path)

    def run(self, task: TaskSpec, sandbox: Sandbox, workspace: Workspace) -> AgentResult:
        patch = self.patches.get(task.id)
        if patch is None:
            return AgentResult(runner=self.name, exit_code=0, note=f"no patch for {task.id}")
        if not patch.strip():
            return AgentResult(runner=self.name, exit_code=0, note="the recorded patch is empty")
        # Applied as SWE-bench's harness applies a prediction (git apply, then patch with
        # fuzz). Its changes to protected files are left out, as SWE-bench puts the test
        # patch's files back over a prediction: they would be undone in verify all the
        # same, and a hunk made against the file before the test patch must not sink it.
        from assay.eval.swebench.patch_apply import apply_prediction

        return apply_prediction(
            self.name, patch.encode("utf-8"), sandbox, workspace, exclude=task.protected
        )


def read_patches(path: Path) -> dict[str, str]:
    """Task id -> patch, from a JSONL file; raises `AgentSpecError` naming the bad line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AgentSpecError(f"{path}: could not be read ({exc})") from None
    patches: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise AgentSpecError(f"{path}:{number}: not JSON ({exc.msg})") from None
        task_id = (
            record.get("task_id", record.get("instance_id")) if isinstance(record, dict) else None
        )
        patch = record.get("patch", record.get("model_patch")) if isinstance(record, dict) else None
        if not isinstance(task_id, str) or not isinstance(patch, str | None):
            raise AgentSpecError(
                f"{path}:{number}: expected an object with a string task_id and patch"
            )
        if task_id in patches:
            raise AgentSpecError(f"{path}:{number}: a second patch for {task_id}")
        patches[task_id] = patch or ""
    return patches


def apply_in_sandbox(
    name: str, patch: bytes, sandbox: Sandbox, workspace: Workspace
) -> AgentResult:
    """`git apply` the task's own patch inside the sandbox, where the agent would have
    worked. A patch that does not apply is the runner's result (a non-zero exit), not an
    infrastructure error. (Recorded predictions go through `swebench.patch_apply`.)"""
    sandbox.write_file(workspace, f"{AGENT_DIR}/{SOLUTION_NAME}", patch)
    result = sandbox.run(
        workspace,
        ["git", "apply", "--binary", "--whitespace=nowarn", f"{AGENT_DIR}/{SOLUTION_NAME}"],
        timeout=APPLY_TIMEOUT_S,
    )
    if not result.started:
        why = result.start_error or result.start_failure
        raise StageError(Stage.RUN, "runner_start_failed", f"git apply could not start: {why}")
    return _result(name, result)


class CommandRunner:
    """Runs an agent CLI in the sandbox, network on (it talks to its model)."""

    name = "command"

    def __init__(self, command: str) -> None:
        try:
            self.argv = tuple(shlex.split(command))
        except ValueError as exc:
            raise AgentSpecError(f"--agent {command!r}: {exc}") from None
        if not self.argv:
            raise AgentSpecError("--agent: the command is empty")
        self.command = command

    def host_paths(self) -> tuple[str, ...]:
        """The programs and files the command names that exist on the host, so a sandbox
        can show them read-only (`BwrapOptions.toolchain_paths`)."""
        found = [shutil.which(self.argv[0]) or self.argv[0]]
        found += [w for w in self.argv[1:] if w.startswith("/")]
        return tuple(str(Path(p).resolve()) for p in found if Path(p).exists())

    def run(self, task: TaskSpec, sandbox: Sandbox, workspace: Workspace) -> AgentResult:
        agent_dir = f"{workspace.path}/{AGENT_DIR}"
        instruction = f"{agent_dir}/{INSTRUCTION_NAME}"
        sandbox.write_file(
            workspace, f"{AGENT_DIR}/{INSTRUCTION_NAME}", task.instruction.encode("utf-8")
        )
        nonce = secrets.token_hex(16)
        sandbox.write_file(workspace, f"{AGENT_DIR}/{LAUNCH_NAME}", f"{nonce}\n".encode())
        words = [
            w.replace("{instruction_file}", instruction).replace("{workdir}", str(workspace.path))
            for w in self.argv
        ]
        on_stdin = not any("{instruction_file}" in w for w in self.argv)
        guard = _UsageGuard(task.limits, str(workspace.path))
        stream = OutputStream(resolve_inside(workspace, AGENT_DIR), guard.seen)
        try:
            fifo = stream.open()
        except OSError as exc:
            raise StageError(
                Stage.RUN, "agent_launch_failed", f"its output could not be set up: {exc}"
            ) from exc
        launch = [
            "/bin/sh",
            "-c",
            _LAUNCH_SCRIPT,
            "sh",
            f"{agent_dir}/{LAUNCH_NAME}",
            fifo,
            instruction if on_stdin else "",
            *_files_named(words),
            "--",
            *words,
        ]
        env = {
            "ASSAY_TASK_ID": task.id,
            "ASSAY_WORKDIR": str(workspace.path),
            "ASSAY_INSTRUCTION": instruction,
            "ASSAY_TELEMETRY": f"{agent_dir}/{TELEMETRY_NAME}",
        }
        try:
            result = sandbox.with_network().run(
                workspace, launch, env=env, timeout=task.limits.wall_s
            )
        finally:
            guard.finished()
            stdout = stream.close()
        self._check_launched(result, nonce, sandbox, workspace)
        mimicked = ""
        if not result.started:  # it did start: what it printed only looked like a refusal
            result = dataclasses.replace(result, start_failure=None, start_error=None)
            mimicked = "it started; its output looked like the sandbox refusing to start it"
        recorded = _result(self.name, result, stdout=stdout)
        values, note = read_telemetry(sandbox, workspace)
        if stream.reader.format is not None:
            # The agent's own output is its account; its telemetry file fills the rest.
            values = {**values, **stream.reader.usage.telemetry(stream.reader.format)}
        exceeded = limit_exceeded(values, task.limits)
        notes = [mimicked, note, stream.note, unenforceable(values, task.limits)]
        if guard.killed:
            notes.append(f"killed over its limit ({guard.killed}), with every process it started")
        return _with_telemetry(recorded, values, "; ".join(n for n in notes if n), exceeded)

    def _check_launched(
        self, result: ProcessResult, nonce: str, sandbox: Sandbox, workspace: Workspace
    ) -> None:
        """Raise `StageError` when the agent never started. Only the launch wrapper knows
        the nonce (it empties the file before the agent runs), so the agent cannot pass
        for a launch failure by printing one, nor hide a real one."""
        report = f"{nonce} launch failed"
        lines = result.stderr.text.splitlines()
        if any(report in line for line in lines):
            why = "; ".join(line.strip() for line in lines if report not in line and line.strip())
            raise StageError(
                Stage.RUN,
                "agent_launch_failed",
                f"{self.argv[0]} could not be started: {why or 'exec failed'}",
            )
        try:
            untouched = (
                sandbox.read_file(workspace, f"{AGENT_DIR}/{LAUNCH_NAME}", limit=256)
                == f"{nonce}\n".encode()
            )
        except (FileNotFoundError, ValueError):
            untouched = False
        if untouched:  # the wrapper never ran: the sandbox itself did not start
            why = result.start_error or result.stderr.text.strip()[-400:] or "it did not start"
            raise StageError(
                Stage.RUN, "agent_launch_failed", f"{self.argv[0]} could not be started: {why}"
            )


#: Runs in the sandbox before the agent: takes the launch nonce and empties its file, checks
#: the files the command names can be read, points stdin at the instruction (when given so)
#: and stdout at the host's FIFO, then execs the agent. Any failure before the agent runs
#: is reported on stderr under the nonce by the EXIT trap (dash runs it when exec fails;
#: bash continues after a failed exec with `execfail`, to the same trap).
_LAUNCH_SCRIPT = (
    'read -r n < "$1" || exit 125; : > "$1"; '
    'trap \'printf "%s launch failed (exit %s)\\n" "$n" "$?" >&2\' EXIT; '
    "out=$2; in=$3; shift 3; "
    'while [ "$1" != -- ]; do '
    '[ -r "$1" ] || { printf "%s: cannot be read in the sandbox (missing, or not readable by its user: '
    'the file and its folders must be readable by others)\\n" "$1" >&2; exit 126; }; '
    "shift; done; shift; "
    '[ -z "$in" ] || exec < "$in"; exec > "$out"; '
    "command -v shopt > /dev/null 2>&1 && shopt -s execfail; "
    'exec "$@"; exit 127'
)
#: Interpreters whose first word that looks like a file is the script they run.
_INTERPRETERS = re.compile(r"(python[0-9.]*|node|nodejs|bun|deno|ruby|perl|sh|bash|dash|zsh)")
_SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".sh")


def _files_named(words: list[str]) -> list[str]:
    """Files the command needs to read before it can do anything: each absolute word that
    names something on the host (shown inside read-only), and an interpreter's script."""
    named = [w for w in words[1:] if w.startswith("/") and os.path.exists(w)]
    if _INTERPRETERS.fullmatch(Path(words[0]).name):
        for word in words[1:]:
            if word in ("-c", "-m", "-e", "--eval", "-p", "--print", "-"):
                break  # the program is in the arguments, not a file
            if word.startswith("-"):
                continue
            if "/" in word or word.endswith(_SCRIPT_SUFFIXES):
                named.append(word)
            break
    return list(dict.fromkeys(named))


class _UsageGuard:
    """Checks the agent's running usage against its task's limits as it is reported, and
    kills the agent's process tree the first time it is over one."""

    def __init__(self, limits: Limits, token: str) -> None:
        self.limits = limits
        self.token = token
        self.killed = ""
        self._lock = threading.Lock()
        self._running = True
        self._enforced = limits.tokens is not None or limits.cost_usd is not None

    def seen(self, reader: OutputReader) -> None:
        if not self._enforced or self.killed or reader.format is None:
            return
        exceeded = limit_exceeded(reader.usage.telemetry(reader.format), self.limits)
        if not exceeded:
            return
        with self._lock:  # never after the run is over: its pid may be another's by then
            if self._running and kill_child_naming(self.token):
                self.killed = exceeded

    def finished(self) -> None:
        with self._lock:
            self._running = False


def read_telemetry(sandbox: Sandbox, workspace: Workspace) -> tuple[dict[str, Any], str]:
    """The agent's telemetry file, checked field by field; with a note on what was dropped."""
    try:
        raw = sandbox.read_file(
            workspace, f"{AGENT_DIR}/{TELEMETRY_NAME}", limit=TELEMETRY_LIMIT_BYTES
        )
    except FileNotFoundError:
        return {}, ""
    except ValueError as exc:
        return {}, f"telemetry not read: {exc}"
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {}, "telemetry not read: not JSON"
    if not isinstance(data, dict):
        return {}, "telemetry not read: not a JSON object"
    values: dict[str, Any] = {}
    dropped: list[str] = []
    for key, value in data.items():
        types = TELEMETRY_FIELDS.get(key)
        if types is None or isinstance(value, bool) or not isinstance(value, types):
            dropped.append(str(key)[:40])
        elif types == (int,):
            _keep(values, dropped, key, reported_count(value))
        elif types == (int, float):
            _keep(values, dropped, key, reported_amount(value))
        else:
            values[key] = value
    return values, f"telemetry fields dropped: {', '.join(dropped)}" if dropped else ""


def _keep(values: dict[str, Any], dropped: list[str], key: str, value: object) -> None:
    if value is None:
        dropped.append(key)
    else:
        values[key] = value


def _with_telemetry(
    result: AgentResult, values: dict[str, Any], note: str, exceeded: str = ""
) -> AgentResult:
    notes = "; ".join(n for n in (result.note, note) if n)
    return AgentResult(
        runner=result.runner,
        exit_code=result.exit_code,
        signal=result.signal,
        timed_out=result.timed_out,
        duration_s=result.duration_s,
        stdout=result.stdout,
        stderr=result.stderr,
        output_truncated=result.output_truncated,
        telemetry=values,
        note=notes,
        limit_exceeded=exceeded,
    )


def _result(
    name: str, result: ProcessResult, *, stdout: CapturedOutput | None = None
) -> AgentResult:
    note = ""
    if result.timed_out:
        note = "killed at its wall time, with every process it started"
    elif not result.started:
        note = f"could not start: {result.start_error or result.start_failure}"
    return AgentResult(
        runner=name,
        exit_code=result.exit_code,
        signal=result.signal,
        timed_out=result.timed_out,
        duration_s=result.duration_s,
        stdout=(stdout or result.stdout).text,
        stderr=result.stderr.text,
        output_truncated=(stdout or result.stdout).truncated or result.stderr.truncated,
        note=note,
    )


def runner_for(agent: str) -> Runner:
    """The runner `--agent AGENT` names."""
    if agent == "nop":
        return NopRunner()
    if agent == "oracle":
        return OracleRunner()
    if agent.startswith("patch:"):
        path = agent.removeprefix("patch:")
        if not path:
            raise AgentSpecError("--agent patch:FILE.jsonl: the file is missing")
        return PatchRunner(path)
    return CommandRunner(agent)

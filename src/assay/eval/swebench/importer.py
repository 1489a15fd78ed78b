"""SWE-bench instances made into task folders (`assay tasks import`).

Each instance becomes a folder named by its `instance_id`:

- `source.bundle`: a git bundle of two commits made by assay from the local clone (never
  fetched): the instance's base tree, and on top of it the test patch; the task's base
  commit is the second, so its tests are in the base the verify stage restores from;
- `task.toml`: the files the test patch touches as protected paths (the agent's change
  to them is left out and recorded as tampering), `FAIL_TO_PASS` and `PASS_TO_PASS` as
  the grading sets, verified by the tests only (SWE-bench grades nothing else);
- `instruction.md`: the problem statement; `solution.patch`: the gold patch (the oracle);
- `swebench.json`: the instance as it was given (upstream base commit, version,
  environment set-up fields), for what reads them later;
- task.toml's `[environment]`: the instance's environment set-up from SWE-bench's specs,
  and what of it assay cannot honour (`environment`), also said at import.

The clone is read with git plumbing that runs nothing the repository configures
(`export_commit`). Every instance is checked and built in a staging folder first; the
folders are moved into `--out` only when all of them are good, so a bad line leaves
nothing half-written.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from assay.eval.git_ops import GitFailed, commit_snapshot, git, run_git
from assay.eval.swebench.environment import Environment, SpecsLookup, environment_for
from assay.eval.swebench.instances import ImportFailed, Instance, read_instances
from assay.eval.task import INSTRUCTION_FILE, SOLUTION_FILE, TASK_FILE, TaskError, load_task
from assay.sandbox.provision import CopyFailed, export_commit

BUNDLE_NAME = "source.bundle"
INSTANCE_FILE = "swebench.json"
#: The branch the bundle carries: the base with the test patch applied.
TASK_REF = "refs/heads/task"


def import_instances(
    path: str | Path,
    *,
    repos: str | Path,
    out: str | Path,
    specs: SpecsLookup | None = None,
    on_note: Callable[[str], None] | None = None,
) -> list[Path]:
    """Task folders in `out` for every instance of the JSONL file `path`, made from the
    clones under `repos`; returns them. Raises `ImportFailed`, writing nothing, if any
    instance cannot be made into a task. `specs` looks environment specs up by repo and
    version (None: the swebench package's, if it has them: `environment`); `on_note` is
    told, per instance, what of its environment assay cannot honour."""
    source = Path(path)
    instances = read_instances(source)
    repos_dir, out_dir = Path(repos), Path(out)
    for instance in instances:
        if (out_dir / instance.instance_id).exists():
            raise ImportFailed(
                f"{_where(source, instance)}: {out_dir / instance.instance_id} already exists"
            )
    clones = {i.instance_id: find_clone(repos_dir, i, _where(source, i)) for i in instances}
    out_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".import-", dir=out_dir))
    try:
        for instance in instances:
            where = _where(source, instance)
            folder = staging / instance.instance_id
            environment, why = environment_for(instance, where, specs)
            if on_note is not None:
                for note in environment.notes if environment else (why,):
                    on_note(f"{instance.instance_id}: {note}")
            _make_task(
                instance, clones[instance.instance_id], folder, staging / "work", where, environment
            )
        written = []
        for instance in instances:
            target = out_dir / instance.instance_id
            (staging / instance.instance_id).rename(target)
            written.append(target)
        return written
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def find_clone(repos: Path, instance: Instance, where: str) -> Path:
    """The local clone of `instance.repo` under `repos`: `owner__name`, `owner/name` or
    `name`, as SWE-bench's own tooling and plain `git clone` lay them out."""
    owner, name = instance.repo.split("/")
    tried = [repos / f"{owner}__{name}", repos / owner / name, repos / name]
    for candidate in tried:
        if candidate.is_dir():
            return candidate
    names = ", ".join(str(p) for p in tried)
    raise ImportFailed(f"{where}: no clone of repository {instance.repo} (looked for {names})")


def _make_task(
    instance: Instance,
    clone: Path,
    folder: Path,
    work: Path,
    where: str,
    environment: Environment | None,
) -> None:
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    try:
        export_commit(clone, instance.base_commit, work)
    except (CopyFailed, OSError) as exc:
        raise ImportFailed(
            f"{where}: base_commit {instance.base_commit} not readable in {clone}: {exc}"
        ) from None
    try:
        git(work, "init", "--quiet")
        git(work, "checkout", "--quiet", "-b", "task")
        commit_snapshot(work, f"{instance.instance_id}: base {instance.base_commit}")
        _apply(work, instance.test_patch, "test_patch", where)
        protected = _changed(work)
        if not protected:
            raise ImportFailed(f"{where}: the test_patch changes no file")
        commit = commit_snapshot(work, f"{instance.instance_id}: test patch")
        _check_applies(work, instance.patch, where)
        folder.mkdir()
        bundle = folder / BUNDLE_NAME
        git(work, "bundle", "create", "--quiet", str(bundle), TASK_REF)
    except GitFailed as exc:
        raise ImportFailed(f"{where}: {exc}") from None
    _write_files(instance, folder, commit, protected, environment)
    try:
        load_task(folder)  # the JSON Schema, and everything else a task folder must be
    except TaskError as exc:
        raise ImportFailed(f"{where}: the task made from it is not valid: {exc}") from None


def _apply(work: Path, patch: str, name: str, where: str) -> None:
    patch_file = work.parent / f"{name}.patch"
    patch_file.write_text(patch, encoding="utf-8")
    result = run_git(work, "apply", "--index", "--whitespace=nowarn", str(patch_file))
    if result.exit_code != 0:
        why = result.stderr.text.strip()[-300:] or f"exit {result.exit_code}"
        raise ImportFailed(f"{where}: the {name} does not apply to the base: {why}")


def _check_applies(work: Path, patch: str, where: str) -> None:
    """The gold patch must apply where the agent starts, or the oracle can never pass."""
    patch_file = work.parent / "gold.patch"
    patch_file.write_text(patch, encoding="utf-8")
    result = run_git(work, "apply", "--check", "--whitespace=nowarn", str(patch_file))
    if result.exit_code != 0:
        why = result.stderr.text.strip()[-300:] or f"exit {result.exit_code}"
        raise ImportFailed(f"{where}: the patch (gold) does not apply with the tests: {why}")


def _changed(work: Path) -> list[str]:
    names = git(work, "diff", "--cached", "--name-only", "-z", "--no-renames", "HEAD")
    return sorted(n for n in names.stdout.text.split("\0") if n)


def _write_files(
    instance: Instance,
    folder: Path,
    commit: str,
    protected: list[str],
    environment: Environment | None,
) -> None:
    language = instance.raw.get("language")
    lines = [
        'schema = "1.0"',
        f"id = {_toml(instance.instance_id)}",
        f"language = {_toml(language if isinstance(language, str) and language else 'python')}",
        f"tags = {_toml(['swebench', f'repo:{instance.repo}'])}",
        f"protected = {_toml(protected)}",
        f"fail_to_pass = {_toml(list(instance.fail_to_pass))}",
        f"pass_to_pass = {_toml(list(instance.pass_to_pass))}",
        "",
        "[source]",
        f"bundle = {_toml(BUNDLE_NAME)}",
        f"commit = {_toml(commit)}",
        "",
        "[verification]",
        'kinds = ["test"]',
    ]
    if environment is not None:
        if environment.installs:
            lines.append("install = true")
            lines.append(f"install_commands = {_toml(environment.install_commands())}")
        lines += ["", *environment.toml_lines()]
    (folder / TASK_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / INSTRUCTION_FILE).write_text(instance.problem_statement, encoding="utf-8")
    (folder / SOLUTION_FILE).write_text(instance.patch, encoding="utf-8")
    (folder / INSTANCE_FILE).write_text(
        json.dumps(instance.raw, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )


def toml_value(value: object) -> str:
    """`value` (a string, or a list of them) as TOML: a JSON string is a valid TOML basic
    string (escapes included), a JSON list of them a valid TOML array."""
    return json.dumps(value, ensure_ascii=False)


_toml = toml_value


def _where(path: Path, instance: Instance) -> str:
    return f"{path}: line {instance.line}: {instance.instance_id}"

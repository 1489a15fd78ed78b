"""`generate_tasks`: bug-fix tasks synthesised from a repository whose tests pass.

1. the knowledge graph of the repository's HEAD tree (built in the sandbox, or reused
   from the store while the tree is unchanged);
2. mutation sites on lines some test executed, of the operators asked for, in an order
   drawn from `seed` that takes the operators in turn;
3. each mutant is committed in a scratch clone and the tests that exercise its unit run
   against it in the sandbox: a mutant no test catches (or that hangs them) is dropped;
4. a caught mutant becomes a task folder, its difficulty band from how many tests catch
   it, whether one of them calls the unit itself, and how many mutations are stacked;
5. every task is validated (oracle VERIFIED three times in a row, nop not VERIFIED);
   a rejected one is moved to `OUT/.rejected/` and reported with the reason.
"""

from __future__ import annotations

import random
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import AssayError
from assay.eval.git_ops import GitFailed
from assay.eval.graph import GraphError, KnowledgeGraph, knowledge_graph, take_snapshot
from assay.eval.graph.model import CodeUnit
from assay.eval.graph.snapshot import Snapshot, SnapshotError
from assay.eval.mutation.difficulty import BANDS, difficulty_band
from assay.eval.mutation.instruction import bug_report
from assay.eval.mutation.languages import Language, language_named
from assay.eval.mutation.model import OPERATORS, Mutation, apply_mutations
from assay.eval.mutation.task_writer import TaskFiles, Workbench
from assay.eval.store import Store, StoreError
from assay.scratch import make_scratch, remove_scratch

#: How long the covering tests may take on one mutant (a mutant that makes them hang is
#: dropped: its task would be INDETERMINATE, not FAILED).
CATCH_TIMEOUT_S = 60.0
#: Mutants tried per task asked for, before giving up on finding more.
TRIES_PER_TASK = 6
#: The most passing tests named as pass-to-pass.
PASS_TO_PASS_SAMPLE = 10
REJECTED_DIR = ".rejected"


class GenerateError(AssayError):
    """Tasks cannot be generated from this repository as asked; nothing was written."""


@dataclass(slots=True)
class GeneratedTask:
    id: str
    folder: Path
    template: str
    difficulty: str
    site: str
    """Where the mutation is (for the generator's report; never in the instruction)."""
    valid: bool | None = None
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "folder": str(self.folder),
            "template": self.template,
            "difficulty": self.difficulty,
            "site": self.site,
            "valid": self.valid,
            "reason": self.reason,
        }


@dataclass(slots=True)
class GenerateReport:
    repo: str
    commit: str
    tree: str
    graph_reused: bool
    units: int
    covered_units: int
    tasks: list[GeneratedTask] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)
    """Mutants tried and not made into tasks, by why."""

    @property
    def valid(self) -> list[GeneratedTask]:
        return [t for t in self.tasks if t.valid]

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": "assay.tasks.generate/1",
            "repo": self.repo,
            "commit": self.commit,
            "tree": self.tree,
            "graph": {
                "reused": self.graph_reused,
                "units": self.units,
                "covered_units": self.covered_units,
            },
            "tasks": [t.to_dict() for t in self.tasks],
            "valid": len(self.valid),
            "dropped": self.dropped,
        }


@dataclass(frozen=True, slots=True)
class _Candidate:
    mutation: Mutation
    unit: CodeUnit


def generate_tasks(
    repo: str | Path,
    *,
    language: str,
    count: int,
    out: str | Path,
    store: Store,
    difficulty: str | None = None,
    template: str | None = None,
    seed: int = 0,
    stack: int = 1,
    sandbox: str = "auto",
    validate: bool = True,
    concurrency: int = 1,
    on_progress: Callable[[str], None] | None = None,
) -> GenerateReport:
    """Up to `count` tasks from `repo`'s HEAD, written under `out`; see the module's steps.
    `stack` mutations of one file go into each task (its template names the first)."""
    say = on_progress or (lambda _line: None)
    kit = _language(language)
    _check_options(count, difficulty, template, stack)
    out_dir = Path(out).absolute()  # git writes the bundles from directories of its own
    try:
        snapshot = take_snapshot(repo)
        graph, reused = knowledge_graph(snapshot, language, store, sandbox=sandbox)
    except (SnapshotError, GraphError, StoreError, GitFailed) as exc:
        raise GenerateError(str(exc)) from exc
    say(
        f"knowledge graph of {snapshot.tree[:12]}: {len(graph.units)} units, "
        f"{len(graph.covered_units())} covered by tests "
        f"({'reused from the store' if reused else 'built now'})"
    )
    report = GenerateReport(
        str(repo),
        snapshot.commit,
        snapshot.tree,
        reused,
        len(graph.units),
        len(graph.covered_units()),
    )
    candidates = _candidates(snapshot, graph, kit, template, seed)
    if not candidates:
        raise GenerateError(
            f"no mutation site on a line the tests execute in {repo}"
            + (f" for template {template!r}" if template else "")
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    slug = _slug(Path(repo).resolve().name)
    rng = random.Random(seed)
    scratch = make_scratch("eval-mutate")
    try:
        try:
            bench = Workbench(snapshot.repo, snapshot.commit, scratch)
        except GitFailed as exc:
            raise GenerateError(f"{repo}: could not be cloned to make mutants ({exc})") from exc
        for group in _stacks(candidates, stack)[: count * TRIES_PER_TASK]:
            if len(report.tasks) == count:
                break
            made = _try(group, snapshot, graph, kit, bench, sandbox, difficulty, rng)
            if isinstance(made, str):
                report.dropped[made] = report.dropped.get(made, 0) + 1
                continue
            number = len(report.tasks) + 1
            task_id = f"{slug}-{number}"
            mutant, files = made
            files = TaskFiles(
                id=task_id,
                language=language,
                difficulty=files.difficulty,
                template=files.template,
                tags=files.tags,
                instruction=files.instruction,
                fail_to_pass=files.fail_to_pass,
                pass_to_pass=files.pass_to_pass,
                install=_has_environment(snapshot.repo),
            )
            folder = out_dir / task_id
            if folder.exists():
                shutil.rmtree(folder)
            bench.write_task(folder, mutant, files)
            site = "; ".join(c.mutation.describe() for c in group)
            report.tasks.append(
                GeneratedTask(task_id, folder, files.template, files.difficulty, site)
            )
            say(f"  {task_id}: {files.template} ({files.difficulty}), {site}")
    except GitFailed as exc:
        raise GenerateError(f"a mutant could not be committed or written: {exc}") from exc
    finally:
        remove_scratch(scratch)
    if validate and report.tasks:
        _validate(report, out_dir, sandbox, concurrency, say)
    return report


def _language(name: str) -> Language:
    try:
        return language_named(name)
    except KeyError:
        raise GenerateError(f"no mutation generator for language {name!r} (python, go)") from None


def _check_options(count: int, difficulty: str | None, template: str | None, stack: int) -> None:
    for name, value in (("count", count), ("stack", stack)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise GenerateError(f"{name} must be an integer >= 1, got {value!r}")
    if difficulty is not None and difficulty not in BANDS:
        raise GenerateError(f"difficulty must be one of {', '.join(BANDS)}, got {difficulty!r}")
    if template is not None and template not in OPERATORS:
        raise GenerateError(f"template must be one of {', '.join(OPERATORS)}, got {template!r}")


def _candidates(
    snapshot: Snapshot, graph: KnowledgeGraph, kit: Language, template: str | None, seed: int
) -> list[_Candidate]:
    """Sites on executed lines of covered units, shuffled by `seed`, operators in turn."""
    by_operator: dict[str, list[_Candidate]] = {}
    for path in sorted({u.path for u in graph.covered_units()}):
        if not kit.is_source(path):
            continue
        text = snapshot.read(path)
        if text is None:
            continue
        for mutation in kit.sites(text, path):
            if template is not None and mutation.operator != template:
                continue
            unit = graph.unit_at(path, mutation.line)
            if unit is not None and unit.tests and unit.covers(mutation.line):
                by_operator.setdefault(mutation.operator, []).append(_Candidate(mutation, unit))
    rng = random.Random(seed)
    queues = []
    for operator in OPERATORS:
        queue = by_operator.get(operator, [])
        rng.shuffle(queue)
        queues.append(queue)
    rng.shuffle(queues)
    ordered = []
    while any(queues):
        for queue in queues:
            if queue:
                ordered.append(queue.pop())
    return ordered


def _try(
    group: list[_Candidate],
    snapshot: Snapshot,
    graph: KnowledgeGraph,
    kit: Language,
    bench: Workbench,
    sandbox: str,
    difficulty: str | None,
    rng: random.Random,
) -> tuple[str, TaskFiles] | str:
    """The mutant's commit and task files, or why it was dropped. `group`: the mutations
    stacked in it, all in one file, the first naming its template."""
    mutations = [c.mutation for c in group]
    path = mutations[0].path
    text = snapshot.read(path)
    if text is None:
        return "unreadable"
    mutated = apply_mutations(text, mutations)
    mutant = bench.mutant({path: mutated}, f"mutant: {mutations[0].operator}")
    exercising = sorted({t for c in group for t in c.unit.tests})
    run = kit.run_tests(
        bench.git_dir,
        mutant,
        exercising,
        sandbox=sandbox,
        timeout=CATCH_TIMEOUT_S,
        environment=snapshot.repo,
    )
    if run.timed_out:
        return "tests_timed_out"
    if run.problem:
        return "tests_did_not_run"
    caught = {t: m for t, m in run.failed.items() if t in exercising}
    if not caught:
        return "survived"
    direct = any(t in c.unit.direct for c in group for t in caught)
    band = difficulty_band(len(caught), direct=direct, stacked=len(group))
    if difficulty is not None and band != difficulty:
        return f"not_{difficulty}"
    others = sorted(t for t in graph.tests if t not in caught)
    sample = sorted(rng.sample(others, min(PASS_TO_PASS_SAMPLE, len(others))))
    hidden = [_line_of(text, m.start) for m in mutations]
    hidden += [_line_of(mutated, m.start) for m in _shifted(mutations)]
    operators = tuple(dict.fromkeys(m.operator for m in mutations))
    return mutant, TaskFiles(
        id="",
        language=graph.language,
        difficulty=band,
        template=mutations[0].operator,
        tags=("mutation", *operators, *(("stacked",) if len(group) > 1 else ())),
        instruction=bug_report(caught, hidden),
        fail_to_pass=tuple(sorted(caught)),
        pass_to_pass=tuple(sample),
    )


def _shifted(mutations: list[Mutation]) -> list[Mutation]:
    """The mutations with their offsets as they are in the mutated text."""
    moved = []
    for mutation in mutations:
        before = sum(
            len(m.replacement) - (m.end - m.start) for m in mutations if m.end <= mutation.start
        )
        moved.append(
            Mutation(
                mutation.operator,
                mutation.path,
                mutation.line,
                mutation.start + before,
                mutation.end + before,
                mutation.replacement,
                mutation.original,
            )
        )
    return moved


def _stacks(candidates: list[_Candidate], stack: int) -> list[list[_Candidate]]:
    """Each candidate with `stack - 1` more of its file, on other lines, not overlapping."""
    if stack == 1:
        return [[c] for c in candidates]
    groups = []
    for first in candidates:
        group = [first]
        for other in candidates:
            if len(group) == stack:
                break
            if other.mutation.path == first.mutation.path and all(
                other.mutation.line != c.mutation.line
                and (
                    other.mutation.end <= c.mutation.start or c.mutation.end <= other.mutation.start
                )
                for c in group
            ):
                group.append(other)
        if len(group) == stack:
            groups.append(group)
    return groups


def _line_of(text: bytes, offset: int) -> bytes:
    start = text.rfind(b"\n", 0, offset) + 1
    end = text.find(b"\n", offset)
    return text[start : end if end >= 0 else len(text)]


def _validate(
    report: GenerateReport,
    out_dir: Path,
    sandbox: str,
    concurrency: int,
    say: Callable[[str], None],
) -> None:
    from assay.eval.validate import validate_tasks

    scratch = make_scratch("eval-validate")
    try:
        runs = Store(scratch / "validate.sqlite")
        try:
            results = validate_tasks(
                [t.folder for t in report.tasks], runs, sandbox=sandbox, concurrency=concurrency
            )
        finally:
            runs.close()
    finally:
        remove_scratch(scratch)
    judged = {r.task_id: r for r in results}
    rejected = out_dir / REJECTED_DIR
    for task in report.tasks:
        result = judged.get(task.id)
        task.valid = bool(result and result.valid)
        task.reason = result.reason if result else "not validated"
        if not task.valid:
            rejected.mkdir(exist_ok=True)
            moved = rejected / task.id
            if moved.exists():
                shutil.rmtree(moved)
            task.folder.rename(moved)
            task.folder = moved
        say(f"  {'valid  ' if task.valid else 'REJECTED'} {task.id}: {task.reason}")


def _slug(name: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "repo"
    return slug[:80]


def _has_environment(repo: Path) -> bool:
    """Whether `repo` has an in-tree environment its tests ran with (the graph used it): a
    task's bundle carries none, so its verification must build one from the manifests."""
    from assay.tools.python import IN_TREE_VENVS

    return any((Path(repo) / venv / "bin" / "python").exists() for venv in IN_TREE_VENVS)

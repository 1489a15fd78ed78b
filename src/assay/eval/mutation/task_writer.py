"""A mutant made into a task folder the `folder` generator loads: a git bundle whose one
commit is the mutated tree (the base, with no history that would hold the answer),
`solution.patch` (the diff back to the original), `instruction.md` and `task.toml`.

All git work happens in a scratch clone of the repository: nothing is written to it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from assay.eval.git_ops import git
from assay.eval.task import INSTRUCTION_FILE, SOLUTION_FILE, TASK_FILE

BUNDLE_FILE = "source.bundle"


@dataclass(frozen=True, slots=True)
class TaskFiles:
    id: str
    language: str
    difficulty: str
    template: str
    tags: tuple[str, ...]
    instruction: str
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    kinds: tuple[str, ...] = ("test",)
    install: bool = False
    """The tests need the repository's installed environment: verification builds it from
    the base's manifests (`verification.install`)."""


class Workbench:
    """A bare scratch clone of the repository where mutant commits are made."""

    def __init__(self, repo: Path, commit: str, scratch: Path) -> None:
        self.git_dir = scratch / "work.git"
        self.scratch = scratch
        git(
            scratch,
            "clone",
            "--bare",
            "--quiet",
            "--no-local",
            "--no-hardlinks",
            "--",
            str(repo.resolve()),
            str(self.git_dir),
            env={"GIT_ALLOW_PROTOCOL": "file"},
        )
        self.commit = commit
        tree = git(self.git_dir, "rev-parse", f"{commit}^{{tree}}").stdout.text.strip()
        # The original as a root commit too, so the solution is a diff of two trees only.
        self.original = self._commit_tree(tree, "original")

    def mutant(self, files: dict[str, bytes], message: str) -> str:
        """A root commit of the original tree with `files` replaced; returns its id."""
        index = self.scratch / "mutant.index"
        env = {"GIT_INDEX_FILE": str(index)}
        git(self.git_dir, "read-tree", self.commit, env=env)
        for number, (path, data) in enumerate(sorted(files.items())):
            blob_file = self.scratch / f"blob-{number}"
            blob_file.write_bytes(data)
            blob = git(
                self.git_dir, "hash-object", "-w", "--no-filters", "-t", "blob", str(blob_file)
            ).stdout.text.strip()
            mode = git(self.git_dir, "ls-tree", self.commit, "--", path).stdout.text.split(" ")[0]
            git(self.git_dir, "update-index", "--cacheinfo", f"{mode},{blob},{path}", env=env)
        tree = git(self.git_dir, "write-tree", env=env).stdout.text.strip()
        index.unlink(missing_ok=True)
        return self._commit_tree(tree, message)

    def _commit_tree(self, tree: str, message: str) -> str:
        return git(self.git_dir, "commit-tree", tree, "-m", message).stdout.text.strip()

    def write_task(self, folder: Path, mutant: str, files: TaskFiles) -> Path:
        """The task folder for `mutant`; the folder must not exist yet."""
        folder.mkdir(parents=True)
        ref = f"refs/heads/{files.id}"
        git(self.git_dir, "update-ref", ref, mutant)
        git(self.git_dir, "bundle", "create", "--quiet", str(folder / BUNDLE_FILE), ref)
        patch = git(
            self.git_dir,
            "diff",
            "--no-ext-diff",
            "--no-textconv",
            "--no-color",
            "--binary",
            mutant,
            self.original,
        ).stdout.text
        (folder / SOLUTION_FILE).write_text(patch)
        (folder / INSTRUCTION_FILE).write_text(files.instruction)
        (folder / TASK_FILE).write_text(_task_toml(files, mutant))
        return folder


def _task_toml(files: TaskFiles, commit: str) -> str:
    def strings(values: tuple[str, ...]) -> str:
        return "[" + ", ".join(json.dumps(v) for v in values) + "]"

    return (
        'schema = "1.0"\n'
        f"id = {json.dumps(files.id)}\n"
        f"language = {json.dumps(files.language)}\n"
        f"difficulty = {json.dumps(files.difficulty)}\n"
        f"template = {json.dumps(files.template)}\n"
        f"tags = {strings(files.tags)}\n"
        f"fail_to_pass = {strings(files.fail_to_pass)}\n"
        f"pass_to_pass = {strings(files.pass_to_pass)}\n"
        "\n[source]\n"
        f"bundle = {json.dumps(BUNDLE_FILE)}\n"
        f"commit = {json.dumps(commit)}\n"
        "\n[verification]\n"
        f"kinds = {strings(files.kinds)}\n" + ("install = true\n" if files.install else "")
    )

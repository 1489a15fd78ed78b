"""A task's files as bytes, for a node that shares no filesystem with the driver.

`pack_task` (on the driver) makes a tar of the task folder and, when the task's source is
a repository, a git bundle of just its base commit's history; `unpack_task` (on the node)
writes them under a scratch directory and returns the task as it reads there, its source a
bundle. A repository that is missing, or lacks the base commit, is the same error of the
attempt the local executor records (`resolve_source`'s), found on the driver.
"""

from __future__ import annotations

import dataclasses
import io
import os
import tarfile
from pathlib import Path

from assay.eval.failures import Stage, StageError
from assay.eval.git_ops import GitFailed, git
from assay.eval.sources import resolve_source
from assay.eval.task import Source, TaskSpec
from assay.scratch import make_scratch, remove_scratch

TASK_DIR = "task"
SOURCE_BUNDLE = "source.bundle"
#: The branch the shipped bundle names the base commit by (a bundle needs a ref).
BASE_REF = "refs/heads/assay-base"


def pack_task(spec: TaskSpec) -> bytes:
    """The task folder (regular files only; links are not followed) and, for a
    repository source, a bundle of its base commit, as one uncompressed tar."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path in _regular_files(spec.folder):
            tar.add(path, arcname=f"{TASK_DIR}/{path.relative_to(spec.folder)}", recursive=False)
        if spec.source.repo is not None:
            bundle, commit = _bundle_base(spec)
            info = tarfile.TarInfo(SOURCE_BUNDLE)
            info.size = len(bundle)
            tar.addfile(info, io.BytesIO(bundle))
            info = tarfile.TarInfo(f"{SOURCE_BUNDLE}.commit")
            info.size = len(commit)
            tar.addfile(info, io.BytesIO(commit.encode("ascii")))
    return buffer.getvalue()


def unpack_task(spec: TaskSpec, payload: bytes, into: Path) -> TaskSpec:
    """`spec` as it reads from `payload` unpacked under `into`."""
    with tarfile.open(fileobj=io.BytesIO(payload), mode="r") as tar:
        tar.extractall(into, filter="data")  # no links out, no absolute names, no devices
    folder = into / TASK_DIR
    if spec.source.repo is not None:
        commit = (into / f"{SOURCE_BUNDLE}.commit").read_text("ascii").strip()
        source = Source(commit=commit, bundle=into / SOURCE_BUNDLE)
    else:
        assert spec.source.bundle is not None  # the schema requires one of the two
        bundle = folder / spec.source.bundle.relative_to(spec.folder)
        source = Source(commit=spec.source.commit, bundle=bundle)
    solution = None
    if spec.solution is not None:
        solution = folder / spec.solution.relative_to(spec.folder)
    return dataclasses.replace(spec, folder=folder, source=source, solution=solution)


def _regular_files(folder: Path) -> list[Path]:
    found: list[Path] = []
    for root, dirs, files in os.walk(folder):  # os.walk does not descend into links
        dirs[:] = sorted(d for d in dirs if d != ".git")
        paths = (Path(root, name) for name in sorted(files))
        found += [p for p in paths if not p.is_symlink() and p.is_file()]
    return found


def _bundle_base(spec: TaskSpec) -> tuple[bytes, str]:
    """A bundle of the history of the task's base commit only, and that commit's id.

    A bundle is made from refs, and the evaluator's repository is not ours to write: a
    scratch bare repository borrows its objects (git alternates) and names the commit."""
    scratch = make_scratch("ship-source")
    try:
        resolved = resolve_source(spec.source, scratch)  # source_missing, commit_missing
        try:
            common = git(resolved.repo, "rev-parse", "--path-format=absolute", "--git-common-dir")
            objects = Path(common.stdout.text.strip()) / "objects"
            borrower = scratch / "borrower.git"
            git(scratch, "init", "--quiet", "--bare", str(borrower))
            (borrower / "objects" / "info" / "alternates").write_text(f"{objects}\n")
            git(borrower, "update-ref", BASE_REF, resolved.commit)
            git(borrower, "bundle", "create", "--quiet", str(scratch / SOURCE_BUNDLE), BASE_REF)
            return (scratch / SOURCE_BUNDLE).read_bytes(), resolved.commit
        except (GitFailed, OSError) as exc:
            raise StageError(
                Stage.PROVISION, "source_unreadable", f"{resolved.repo}: {exc}"
            ) from exc
    finally:
        remove_scratch(scratch)

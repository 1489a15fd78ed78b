"""A task's source made ready to provision from: a git repository and a full commit id.

A bundle is cloned (bare) into a scratch directory for the attempt; a repository is used
where it is. A source that is missing, or lacks its base commit, is an infrastructure error
of the attempt (`source_missing`, `commit_missing`), never of the whole evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from assay.eval.failures import Stage, StageError
from assay.eval.git_ops import GitFailed, clone_bundle
from assay.eval.task import Source
from assay.sandbox.provision import CopyFailed, resolve_commit


@dataclass(frozen=True, slots=True)
class ResolvedSource:
    repo: Path
    """A git repository (a bundle's clone, for a bundle)."""
    commit: str
    """The base commit's full id."""


def resolve_source(source: Source, scratch: Path) -> ResolvedSource:
    """`source` as a repository and a commit id; a bundle is cloned under `scratch`."""
    if source.bundle is not None:
        if not source.bundle.is_file():
            raise StageError(Stage.PROVISION, "source_missing", f"no bundle at {source.bundle}")
        repo = scratch / "source.git"
        try:
            clone_bundle(source.bundle, repo)
        except GitFailed as exc:
            raise StageError(
                Stage.PROVISION, "source_unreadable", f"{source.bundle}: {exc}"
            ) from exc
    else:
        assert source.repo is not None  # the schema requires one of the two
        repo = source.repo
        if not repo.is_dir():
            raise StageError(Stage.PROVISION, "source_missing", f"no repository at {repo}")
    try:
        commit = resolve_commit(repo, source.commit)
    except (CopyFailed, OSError) as exc:
        raise StageError(Stage.PROVISION, "commit_missing", str(exc)) from exc
    return ResolvedSource(repo=repo, commit=commit)

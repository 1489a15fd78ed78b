"""git on repositories the harness makes itself (a fresh copy of a task's base, a bundle's
clone), run like every git command assay runs: nothing a repository's configuration or
attributes name can run, bounded, the whole tree killed at the deadline."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from assay.environment import EnvPolicy
from assay.errors import AssayError
from assay.process import ProcessResult, run_process
from assay.safe_git import SAFE_CONFIG, SAFE_ENV

#: Every git command the harness runs ends within this.
GIT_TIMEOUT_S = 120.0
#: The author of the commits the harness makes (base snapshots, never the agent's).
IDENTITY = {
    "GIT_AUTHOR_NAME": "assay",
    "GIT_AUTHOR_EMAIL": "assay@localhost",
    "GIT_COMMITTER_NAME": "assay",
    "GIT_COMMITTER_EMAIL": "assay@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
}
#: Content is taken byte for byte: no line-ending conversion, links kept as links.
_CONTENT_CONFIG = (
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("core.symlinks", "true"),
    ("core.filemode", "true"),
    ("init.defaultBranch", "base"),
    ("commit.gpgSign", "false"),
    ("safe.directory", "*"),
)


class GitFailed(AssayError):
    """A git command the harness needed failed; the message quotes git's reason."""


def git(
    repo: str | os.PathLike[str],
    *args: str,
    env: Mapping[str, str] | None = None,
    timeout: float = GIT_TIMEOUT_S,
) -> ProcessResult:
    """Run `git ARGS` in `repo`; raises `GitFailed` unless it exits 0."""
    result = run_git(repo, *args, env=env, timeout=timeout)
    if result.exit_code != 0:
        why = result.start_error or result.stderr.text.strip()[-500:] or "no message"
        if result.timed_out:
            why = f"timed out after {timeout:g}s"
        raise GitFailed(f"git {args[0]} failed: {why}")
    return result


def run_git(
    repo: str | os.PathLike[str],
    *args: str,
    env: Mapping[str, str] | None = None,
    timeout: float = GIT_TIMEOUT_S,
) -> ProcessResult:
    config = [a for k, v in (*SAFE_CONFIG, *_CONTENT_CONFIG) for a in ("-c", f"{k}={v}")]
    return run_process(
        ["git", "--no-pager", "-C", str(repo), *config, *args],
        env={**SAFE_ENV, **IDENTITY, **(env or {})},
        env_policy=EnvPolicy.MINIMAL,
        timeout=timeout,
    )


def clone_bundle(bundle: Path, dest: Path) -> None:
    """A bare repository holding `bundle`'s commits (a bundle is a file: no transport
    beyond reading it is allowed)."""
    git(
        dest.parent,
        "clone",
        "--bare",
        "--quiet",
        "--no-hardlinks",
        "--",
        str(bundle),
        str(dest),
        env={"GIT_ALLOW_PROTOCOL": "file"},
    )


def commit_snapshot(repo: Path, message: str) -> str:
    """Commit everything in `repo`'s working tree; return the commit id."""
    git(repo, "add", "--all", "--force")
    git(repo, "commit", "--quiet", "--allow-empty", "--no-verify", "-m", message)
    return git(repo, "rev-parse", "HEAD").stdout.text.strip()

"""The agent's change, as data: a diff against the base, applied to a fresh copy of it.

Nothing of the agent's workspace is trusted. Its files are copied out following no link
(regular files and links only; a FIFO, socket or device is left out and named), `.git`
directories and the harness's own `.assay-agent` folder are never part of a change, and
the diff is taken by a repository the harness made from the base commit. That diff is
then applied, with `git apply`, to another fresh copy of the base: whatever the agent did
to its workspace beyond changing files (processes, permissions, git state) is gone.

A change that touches a path the task protects has that path left out when it is
applied; the attempt records it as tampering.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from assay.eval.git_ops import GitFailed, commit_snapshot, git, run_git
from assay.eval.sources import ResolvedSource
from assay.sandbox.provision import export_commit
from assay.untrusted_files import Link, OpenFile, Refused, chunks, open_untrusted, walk_untrusted

#: The harness's folder in the workspace (instruction, telemetry): never part of a change.
AGENT_DIR = ".assay-agent"
#: Names never copied out of the agent's workspace, at any depth.
NEVER_COPIED = frozenset({".git", AGENT_DIR})
#: What a change never carries: build and test artefacts the agent's runs leave behind.
IGNORED = ("__pycache__/", "*.pyc", ".pytest_cache/", ".mypy_cache/", ".ruff_cache/")
#: A deeper entry is left out of a change: no fix needs it, and the verification's walks
#: of the tree take a frame of Python's recursion per folder.
MAX_DEPTH = 256
#: A larger diff is refused (it is not a fix; reading it whole would be the harness's risk).
MAX_PATCH_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Change:
    """What the agent changed, as applied to a fresh copy of the base."""

    patch_bytes: int
    files: tuple[str, ...]
    """Every path the diff touches."""
    excluded: tuple[str, ...] = ()
    """Paths the task protects that the diff touched: left out, recorded as tampering."""
    skipped: tuple[str, ...] = field(default_factory=tuple)
    """Entries of the workspace that could not be part of any diff (FIFOs, unreadable)."""
    refused: str | None = None
    """Why the change could not be applied at all (then nothing of it was)."""

    def to_dict(self) -> dict[str, object]:
        return {
            "patch_bytes": self.patch_bytes,
            "files": list(self.files),
            "excluded": list(self.excluded),
            "skipped": list(self.skipped),
            "refused": self.refused,
        }


def fresh_base(source: ResolvedSource, dest: Path) -> str:
    """A new git repository at `dest` holding `source`'s base tree as its one commit;
    returns that commit's id. Its configuration and hooks are the harness's, none of the
    source's."""
    dest.mkdir(parents=True)
    git(dest, "init", "--quiet")
    export_commit(source.repo, source.commit, dest)
    exclude = dest / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    exclude.write_text("\n".join(IGNORED) + "\n", encoding="utf-8")
    return commit_snapshot(dest, f"base {source.commit}")


def take_change(workspace: Path, base_repo: Path, scratch: Path, patch: Path) -> Change:
    """Write the diff from `base_repo`'s HEAD to the agent's `workspace` into `patch`."""
    snapshot = scratch / "agent-tree"
    snapshot.mkdir()
    skipped = copy_out(workspace, snapshot)
    env = {"GIT_INDEX_FILE": str(scratch / "agent.index"), "GIT_WORK_TREE": str(snapshot)}
    git(base_repo, "read-tree", "HEAD", env=env)
    skipped += _add_all(base_repo, env)
    common = ("--cached", "--binary", "--full-index", "--no-renames", "--no-ext-diff")
    git(base_repo, "diff", *common, f"--output={patch}", "HEAD", env=env)
    names = git(base_repo, "diff", "--cached", "--name-only", "-z", "--no-renames", "HEAD", env=env)
    files = tuple(sorted(n for n in names.stdout.text.split("\0") if n))
    return Change(patch_bytes=patch.stat().st_size, files=files, skipped=tuple(skipped))


def _add_all(base_repo: Path, env: dict[str, str]) -> list[str]:
    """Stage the snapshot whole; the paths git refuses to hold (`.GIT/`, `git~1/`, a
    linked `.gitmodules`) are left out and named, as a FIFO is: they are no change git
    can carry, and an agent that made one must not turn its attempt into an error."""
    added = run_git(base_repo, "add", "--all", "--ignore-errors", env=env)
    if added.exit_code == 0:
        return []
    left = git(base_repo, "ls-files", "--others", "--exclude-standard", "-z", env=env)
    refused = [path for path in left.stdout.text.split("\0") if path]
    told = added.stderr.text
    if added.timed_out or not refused or any(f"invalid path '{p}'" not in told for p in refused):
        why = added.start_error or told.strip()[-500:] or f"exit {added.exit_code}"
        raise GitFailed(f"git add failed: {why}")
    return [f"{path}: a path git refuses to hold" for path in refused]


def apply_change(repo: Path, patch: Path, change: Change, protected: tuple[str, ...]) -> Change:
    """Apply `patch` to `repo` (a fresh base), leaving out the paths `protected` names."""
    excluded = tuple(f for f in change.files if is_protected(f, protected))
    if change.patch_bytes > MAX_PATCH_BYTES:
        return _refused(change, excluded, f"the diff is {change.patch_bytes} bytes")
    if change.patch_bytes == 0 or len(excluded) == len(change.files):
        return Change(change.patch_bytes, change.files, excluded, change.skipped)
    args = ["apply", "--binary", "--index", "--whitespace=nowarn"]
    args += [f"--exclude={path}" for path in excluded]
    result = run_git(repo, *args, str(patch))
    if result.exit_code != 0:
        why = result.stderr.text.strip()[-500:] or f"exit {result.exit_code}"
        return _refused(change, excluded, f"git apply refused it: {why}")
    return Change(change.patch_bytes, change.files, excluded, change.skipped)


def is_protected(path: str, patterns: tuple[str, ...]) -> bool:
    """`path` matches a glob, or lies under a directory, that `patterns` names."""
    for pattern in patterns:
        bare = pattern.rstrip("/")
        if fnmatch.fnmatchcase(path, bare) or path.startswith(bare + "/"):
            return True
    return False


def _refused(change: Change, excluded: tuple[str, ...], why: str) -> Change:
    return Change(change.patch_bytes, change.files, excluded, change.skipped, refused=why)


def git_refused_at(rel: str, *, link: bool) -> str | None:
    """The part of `rel` git would refuse to hold, None when it holds all of it: a `.git`
    in any case or in NTFS's spellings (`.GIT`, `.git.`, `git~1`, `.git:x`, `a\\.git`), or
    a link named `.gitmodules`."""
    parts = rel.split("/")
    for depth, part in enumerate(parts, 1):
        for piece in part.split("\\"):
            if piece.split(":")[0].rstrip(" .").lower() in (".git", "git~1"):
                return "/".join(parts[:depth])
    if link and parts[-1].lower() == ".gitmodules":
        return rel
    return None


def copy_out(workspace: Path, dest: Path) -> list[str]:
    """Copy `workspace`'s regular files and links into `dest`, following no link; returns
    what was left out and why."""
    skipped: list[str] = []
    for name in sorted(os.listdir(workspace)):
        if name in NEVER_COPIED:
            continue
        info = os.lstat(workspace / name)
        if _refused_by_git(name, stat.S_ISLNK(info.st_mode), skipped):
            continue
        if not stat.S_ISDIR(info.st_mode):
            _copy_entry(workspace, name, dest, skipped)
            continue
        (dest / name).mkdir()
        entries = walk_untrusted(workspace, name)
        if isinstance(entries, Refused) or entries is None:
            skipped.append(f"{name}: {entries.reason if entries else 'vanished'}")
            continue
        too_long: list[str] = []
        for entry in entries:
            if NEVER_COPIED.intersection(entry.path.split("/")):
                continue
            if _refused_by_git(entry.path, entry.kind == "link", skipped):
                continue
            if any(entry.path.startswith(f"{folder}/") for folder in too_long):
                continue
            if entry.path.count("/") >= MAX_DEPTH:
                skipped.append(f"{entry.path}: deeper than {MAX_DEPTH} folders")
                too_long.append(entry.path)
                continue
            try:
                if entry.kind == "dir":
                    (dest / entry.path).mkdir(exist_ok=True)
                else:
                    _copy_entry(workspace, entry.path, dest, skipped)
            except OSError as exc:
                # A path too long to name here is no file a diff could carry either.
                if exc.errno != errno.ENAMETOOLONG:
                    raise
                skipped.append(f"{entry.path}: its path is too long to copy")
                too_long.append(entry.path)
    return skipped


def _refused_by_git(rel: str, link: bool, skipped: list[str]) -> bool:
    """Leave out, naming it once, what git cannot hold: no diff carries it."""
    refused = git_refused_at(rel, link=link)
    if refused is None:
        return False
    note = f"{refused}: a path git refuses to hold"
    if note not in skipped:
        skipped.append(note)
    return True


def _copy_entry(workspace: Path, rel: str, dest: Path, skipped: list[str]) -> None:
    with open_untrusted(workspace, rel, single_link=False) as found:
        if isinstance(found, Link):
            os.symlink(found.target, dest / rel)
        elif isinstance(found, OpenFile):
            target = dest / rel
            with open(target, "xb") as out:
                out.writelines(chunks(found))
            if found.mode & 0o111:
                os.chmod(target, 0o755)
        elif isinstance(found, Refused):
            skipped.append(f"{rel}: {found.reason}")


__all__ = [
    "AGENT_DIR",
    "Change",
    "GitFailed",
    "apply_change",
    "copy_out",
    "fresh_base",
    "is_protected",
    "take_change",
]

"""The tree as it was when the user's prompt was submitted: what `--protect` holds the
agent's work to.

A plain verification of the tree at a stop believes the tests the agent leaves there: an
agent that weakens `assert add(2, 3) == 5` to `assert add(2, 3) == add(2, 3)` passes.
`assay hook claude-code --protect` runs at `UserPromptSubmit` too, and there writes the
working tree into the repository's object store as a commit (tracked files, and untracked
ones the ignore rules do not hide, as they are on disk), through a private index: the
repository's own index, HEAD and refs are not touched. At the stop, the project is
verified with `--base <that commit> --protect`: the plan and the tests are the base's.

The base moves only at a prompt that starts new work: while the stops of the previous
one are still blocked (a chain of blocks open), a prompt keeps the base it had, so work
cannot be laundered into the base by a message sent mid-chain.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from assay.hooks.state import STALE_CHAIN_S, chain_for, record_path, write_record

TYPE_CHECKING = False  # not `typing`: this module is loaded at every prompt
if TYPE_CHECKING:
    from assay.safe_git import Repository

__all__ = ["PromptBase", "base_for", "moved_repository", "record_base"]

#: Seconds writing the tree into the object store may take (an untracked tree of
#: generated files can be large); the installed hook is given more.
SNAPSHOT_TIMEOUT_S = 60.0
#: Bound on what git prints of one object id.
_OID_LIMIT = 256
#: Whose commit the snapshot is: assay's, never the user's identity or signature.
_IDENTITY = (
    ("GIT_AUTHOR_NAME", "assay"),
    ("GIT_AUTHOR_EMAIL", "assay@localhost"),
    ("GIT_COMMITTER_NAME", "assay"),
    ("GIT_COMMITTER_EMAIL", "assay@localhost"),
)
_RECORD_KIND = "base-"
#: Untracked files larger than this, or past this many, are left out of the base.
MAX_UNTRACKED_BYTES = 4 << 20
MAX_UNTRACKED_FILES = 50_000
#: The listed names are paths, not patterns (a file named `*.py` is that file).
_LITERAL = ("GIT_LITERAL_PATHSPECS", "1")


@dataclass(frozen=True, slots=True)
class PromptBase:
    """What was recorded at the prompt: the base `commit` of the project at `root`, or
    why there is none (`unprotected`: no git repository to hold one; `error`: git failed)."""

    root: str
    commit: str = ""
    unprotected: str = ""
    error: str = ""
    top: str = ""
    """The top of the working tree `root` was in: the commit's paths are the top's."""


def record_base(key: str, root: Path, *, now: float | None = None) -> PromptBase | None:
    """Record the tree at `root` as the base of caller `key`'s work, unless a chain of
    blocks is still open for it; what was recorded (None: the base was kept)."""
    now = time.time() if now is None else now
    chain = chain_for(key)
    if chain.blocks and chain.idle_for(now) <= STALE_CHAIN_S and base_for(key) is not None:
        return None
    base = _snapshot_or_why(root)
    document: dict[str, object] = {"root": base.root, "commit": base.commit, "top": base.top}
    document |= {"unprotected": base.unprotected, "error": base.error, "recorded": now}
    write_record(record_path(key, kind=_RECORD_KIND), document)
    return base


def base_for(key: str) -> PromptBase | None:
    """The base recorded for `key`; None when none was, or the record is unreadable."""
    import json

    try:
        document = json.loads(record_path(key, kind=_RECORD_KIND).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(document, dict):
        return None
    names = ("root", "commit", "unprotected", "error", "top")
    fields = {name: document.get(name, "") for name in names}
    if not all(isinstance(value, str) for value in fields.values()) or not fields["root"]:
        return None
    return PromptBase(**fields)


def _snapshot_or_why(root: Path) -> PromptBase:
    from assay.safe_git import GitError, open_repository

    try:
        repo = open_repository(root, timeout=SNAPSHOT_TIMEOUT_S)
        top = repo.output("rev-parse", "--show-toplevel", limit=64 * 1024).strip()
    except (GitError, OSError) as exc:
        from assay.repo_root import nearest_git_entry

        if nearest_git_entry(root) is not None:
            # A repository assay will not read (alternates out of the tree, a broken HEAD)
            # is not "no repository": that let the agent's own tests judge its stop.
            return PromptBase(str(root), error=f"its git repository could not be read ({exc})")
        return PromptBase(str(root), unprotected=f"{root} is in no git repository ({exc})")
    try:
        # Every name below is the top's.
        commit = _snapshot(replace(repo, path=Path(os.fsdecode(top))))
        return PromptBase(str(root), commit=commit, top=os.fsdecode(top))
    except (GitError, OSError) as exc:
        return PromptBase(str(root), error=f"the tree could not be written into git: {exc}")


def moved_repository(base: PromptBase) -> str | None:
    """Why the project at the prompt is no longer in the working tree its base was taken
    from, when it is not (None: it is, or the record is too old to say). A `.git` the agent
    made in the project's directory, with the objects copied in, read the prompt's commit
    from the top of the monorepo: the package's tests were dropped for the root's."""
    if not base.top or not base.commit:
        return None
    from assay.safe_git import GitError, open_repository

    try:
        repo = open_repository(Path(base.root), timeout=SNAPSHOT_TIMEOUT_S)
        top = os.fsdecode(repo.output("rev-parse", "--show-toplevel", limit=64 * 1024).strip())
    except (GitError, OSError) as exc:
        return f"the project's git repository can no longer be read ({exc})"
    if top == base.top:
        return None
    return f"the project's git working tree was {base.top} at the prompt and is {top} now"


def _untracked_to_keep(repo: Repository) -> list[bytes]:
    """The untracked files the ignore rules do not hide (`repo` at the top of its working
    tree), but for those too large to be the code or tests the base is for (data a prompt would
    otherwise write into the object store each time), and past `MAX_UNTRACKED_FILES`."""
    listing = repo.output("ls-files", "-z", "--others", "--exclude-standard", limit=64 << 20)
    kept: list[bytes] = []
    for name in listing.split(b"\0"):
        if not name:
            continue
        try:
            size = os.lstat(os.path.join(os.fsencode(repo.path), name)).st_size
        except OSError:
            continue  # gone since it was listed
        if size <= MAX_UNTRACKED_BYTES:
            kept.append(name)
            if len(kept) == MAX_UNTRACKED_FILES:
                break
    return kept


def _snapshot(repo: Repository) -> str:
    """A commit of the working tree as it is on disk, made through a private index
    (`repo` at the top of its working tree)."""
    from assay.safe_git import GitError, is_oid

    try:
        head: str | None = repo.resolve_commit("HEAD")
    except GitError:
        head = None  # no commit yet: the snapshot is the first
    with tempfile.TemporaryDirectory(prefix="assay-base-") as scratch:
        # A fresh index, not a copy of the repository's: its stat data would vouch for a
        # file's content without git reading it, and whoever wrote the index chose both.
        private = replace(repo, variables=(("GIT_INDEX_FILE", f"{scratch}/index"), *_IDENTITY))
        if head is not None:
            private.output("read-tree", head, limit=_OID_LIMIT)
        private.output("add", "--update", limit=1 << 20)  # what HEAD tracks, as it is now
        untracked = _untracked_to_keep(private)
        if untracked:
            with tempfile.TemporaryFile() as listing:
                listing.write(b"\0".join(untracked))
                listing.seek(0)
                literal = replace(private, variables=(*private.variables, _LITERAL))
                literal.output(
                    "add",
                    "--pathspec-from-file=-",
                    "--pathspec-file-nul",
                    limit=1 << 20,
                    stdin=listing,
                )
        tree = private.output("write-tree", limit=_OID_LIMIT).decode("ascii").strip()
        parent = ("-p", head) if head is not None else ()
        message = "assay: the working tree when the prompt was submitted"
        commit = private.output(
            "commit-tree", "--no-gpg-sign", tree, *parent, "-m", message, limit=_OID_LIMIT
        )
    oid = commit.decode("ascii", "replace").strip()
    if not is_oid(oid):
        raise GitError(f"git commit-tree answered {commit[:100]!r}, not a commit id")
    return oid

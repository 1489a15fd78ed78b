"""A repository's committed tree, read as data through git: no file of the working tree is
opened (a link or a FIFO planted there is never followed), nothing it configures runs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from assay.errors import AssayError
from assay.eval.git_ops import GitFailed, git

#: The largest source file read for units or mutated; bigger ones are left out (below what
#: a process's captured output keeps whole).
MAX_SOURCE_BYTES = 200 * 1024
#: The most files looked at in one tree.
MAX_FILES = 5000


class SnapshotError(AssayError):
    """The repository cannot be read as a git tree; the message says why."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    repo: Path
    commit: str
    """HEAD's full id."""
    tree: str
    """HEAD's tree id: what the knowledge graph is keyed by."""
    files: tuple[str, ...]
    """Regular files (not links, not submodules) of the tree, by path."""

    def read(self, path: str) -> bytes | None:
        """A file's bytes at `commit`, or None when it is too large, not UTF-8 or not a
        regular file."""
        if path not in self.files:
            return None
        size = git(self.repo, "cat-file", "-s", f"{self.commit}:{path}").stdout.text.strip()
        if not size.isdigit() or int(size) > MAX_SOURCE_BYTES:
            return None
        text = git(self.repo, "cat-file", "blob", f"{self.commit}:{path}").stdout.text
        if "\ufffd" in text:  # not UTF-8: offsets into it would not be the file's
            return None
        return text.encode("utf-8")


def take_snapshot(repo: str | Path) -> Snapshot:
    root = Path(repo)
    if not (root / ".git").exists() and not (root / "HEAD").is_file():
        raise SnapshotError(f"{root}: not a git repository (tasks are made from a commit)")
    try:
        commit = git(root, "rev-parse", "--verify", "HEAD^{commit}").stdout.text.strip()
        tree = git(root, "rev-parse", "--verify", "HEAD^{tree}").stdout.text.strip()
        listing = git(root, "ls-tree", "-r", "-z", "--full-tree", commit).stdout.text
    except GitFailed as exc:
        raise SnapshotError(f"{root}: {exc}") from exc
    files = []
    for entry in listing.split("\0"):
        meta, _, path = entry.partition("\t")
        if path and meta.split(" ")[0] in ("100644", "100755"):
            files.append(path)
    return Snapshot(root, commit, tree, tuple(sorted(files)[:MAX_FILES]))

"""Making workspace copies fast: copy-on-write where the filesystem has it, a kernel copy otherwise.

Hard links are deliberately not used for read-write workspaces: a hard-linked
file is the same inode as the source, so code under test that writes a file in
place would write straight through into the tree it was copied from.
"""

from __future__ import annotations

import concurrent.futures
import enum
import os
import shutil
import tempfile
from pathlib import Path

from assay.environment import EnvPolicy
from assay.process import ProcessResult, run_process

#: Deadline for one copy or one git export; a workspace that takes longer is not worth waiting for.
COPY_TIMEOUT_SECONDS = 600.0


class CopyMethod(enum.StrEnum):
    """How a workspace's files were made."""

    REFLINK = "reflink"
    """Copy-on-write clones (`cp --reflink=always`): near-instant, fully independent."""
    PARALLEL = "parallel"
    """Per-file kernel copies (sendfile) issued from a thread pool: the cost is syscalls
    per file, and those overlap."""
    GIT_ARCHIVE = "git-archive"
    """The tree of a commit, exported with `git archive` (no repository state touched)."""


#: Threads issuing file copies; the work is in the kernel, so more threads than cores helps.
COPY_THREADS = 8


class CopyFailed(OSError):
    """A copy or export did not complete; carries the process result when one ran."""

    def __init__(self, message: str, result: ProcessResult | None = None) -> None:
        super().__init__(message)
        self.result = result


def _run(argv: list[str], cwd: str | os.PathLike[str] | None = None) -> ProcessResult:
    # Trusted host-side tooling, but still bounded: a stuck copy must not hang a run.
    return run_process(argv, cwd=cwd, timeout=COPY_TIMEOUT_SECONDS, env_policy=EnvPolicy.SCRUB)


def copy_tree(source: str | os.PathLike[str], dest: str | os.PathLike[str]) -> CopyMethod:
    """Copy the contents of `source` into `dest` (created if missing), preserving
    symlinks as symlinks, modes and times. Returns the method that worked."""
    src = Path(source)
    dst = Path(dest)
    if not src.is_dir():
        raise CopyFailed(f"source is not a directory: {src}")
    dst.mkdir(parents=True, exist_ok=True)
    cp = shutil.which("cp")
    if cp is not None and _reflink_works(cp, src, dst):
        result = _run([cp, "-a", "--reflink=always", "--", f"{src}/.", str(dst)])
        if result.exit_code == 0:
            return CopyMethod.REFLINK
        _empty_dir(dst)  # a partial clone must not leave files behind
    _parallel_copy(src, dst)
    return CopyMethod.PARALLEL


def _reflink_works(cp: str, src: Path, dst: Path) -> bool:
    """Clone one small file to learn whether this filesystem pair supports reflinks.

    `cp --reflink=always` on a tree does not stop at the first refusal, it tries
    (and fails) every file; one probe is cheaper than finding out that way.
    """
    with tempfile.NamedTemporaryFile(dir=src, prefix=".assay-reflink-") as probe:
        target = dst / os.path.basename(probe.name)
        try:
            return _run([cp, "--reflink=always", "--", probe.name, str(target)]).exit_code == 0
        finally:
            target.unlink(missing_ok=True)


def _parallel_copy(src: Path, dst: Path) -> None:
    files: list[tuple[Path, Path]] = []
    for dirpath, dirnames, filenames in os.walk(src):
        rel = os.path.relpath(dirpath, src)
        out = dst if rel == "." else dst / rel
        for name in list(dirnames):
            source_dir = Path(dirpath, name)
            if source_dir.is_symlink():
                dirnames.remove(name)  # copied as a link below, never followed
                filenames.append(name)
            else:
                (out / name).mkdir(exist_ok=True)
        files.extend((Path(dirpath, name), out / name) for name in filenames)
    with concurrent.futures.ThreadPoolExecutor(COPY_THREADS) as pool:
        # list() re-raises the first copy error here instead of dropping it.
        list(pool.map(lambda pair: shutil.copy2(*pair, follow_symlinks=False), files))
    for dirpath, dirnames, _ in os.walk(src):
        rel = os.path.relpath(dirpath, src)
        shutil.copystat(dirpath, dst if rel == "." else dst / rel)


def _empty_dir(path: Path) -> None:
    for child in path.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def export_commit(repo: str | os.PathLike[str], ref: str, dest: str | os.PathLike[str]) -> str:
    """Write the tree of `ref` in the git repository `repo` into `dest`; return the commit id.

    Uses `git archive` into a temporary tar, so the repository's index, worktree
    list and HEAD are never touched.
    """
    commit = resolve_commit(repo, ref)
    dst = Path(dest)
    dst.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="assay-archive-") as scratch:
        tar_path = os.path.join(scratch, "tree.tar")
        archived = _run(["git", "-C", str(repo), "archive", "--format=tar", "-o", tar_path, commit])
        if archived.exit_code != 0:
            raise CopyFailed(f"git archive {commit} failed: {_stderr(archived)}", archived)
        extracted = _run(["tar", "-x", "-f", tar_path, "-C", str(dst)])
        if extracted.exit_code != 0:
            raise CopyFailed(f"extracting {commit} failed: {_stderr(extracted)}", extracted)
    return commit


def resolve_commit(repo: str | os.PathLike[str], ref: str) -> str:
    """The full commit id `ref` names in `repo`; raises `CopyFailed` if it names none."""
    result = _run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"])
    if result.exit_code != 0:
        raise CopyFailed(f"{ref!r} is not a commit in {repo}: {_stderr(result)}", result)
    return result.stdout.text.strip()


def is_git_repo(path: str | os.PathLike[str]) -> bool:
    result = _run(["git", "-C", str(path), "rev-parse", "--is-inside-work-tree"])
    return result.exit_code == 0 and result.stdout.text.strip() == "true"


def _stderr(result: ProcessResult) -> str:
    if not result.started:
        return result.start_error or "did not start"
    return result.stderr.text.strip()[-500:] or f"exit {result.exit_code}"


def provision_copy(
    source: str | os.PathLike[str], *, commit: str | None, backend: str, run_id: str
) -> tuple[Path, str | None, CopyMethod]:
    """A fresh temporary directory holding `source` (or its tree at `commit`).

    Returns the directory, the resolved commit, and how the files were made.
    The caller owns the directory.
    """
    path = Path(tempfile.mkdtemp(prefix=f"assay-{backend}-{run_id}-"))
    try:
        if commit is not None:
            resolved = export_commit(source, commit, path)
            return path, resolved, CopyMethod.GIT_ARCHIVE
        return path, None, copy_tree(source, path)
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)
        raise


def remove_tree(path: str | os.PathLike[str]) -> None:
    """Remove `path` completely; raises OSError with the first failure (nothing swallowed)."""
    errors: list[str] = []

    def on_error(_func: object, failed: str, exc: BaseException) -> None:
        # Read-only directories (a .git made read-only, a test's chmod) block removal of
        # their entries: make the parent writable and retry once before giving up.
        try:
            os.chmod(os.path.dirname(failed), 0o700)
            if os.path.isdir(failed) and not os.path.islink(failed):
                shutil.rmtree(failed)
            else:
                os.unlink(failed)
        except OSError as retry_exc:
            errors.append(f"{failed}: {retry_exc.strerror or retry_exc}")

    if _HAS_ONEXC:
        shutil.rmtree(path, onexc=on_error)
    else:
        shutil.rmtree(path, onerror=lambda func, failed, info: on_error(func, failed, info[1]))
    if errors:
        raise OSError(f"could not remove {len(errors)} path(s) under {path}: {errors[0]}")
    if os.path.lexists(path):
        raise OSError(f"{path} still exists after removal")


_HAS_ONEXC = "onexc" in shutil.rmtree.__code__.co_varnames  # Python 3.12+

"""Creating and removing canary files in a workspace the code under test has written to.

Whatever is in the workspace was put there by the change, so a path is entered one
component at a time from the workspace root, following no link (a directory swapped for a
link must not lead the write out of the copy), and a file is only ever created, never
opened for writing where something already is. Created files are readable by the sandbox
and owned by assay: where the sandbox runs as a uid of its own, the code under test can
read a canary but not rewrite it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_MODE = 0o644
_DIR_MODE = 0o755


def create_file(root: Path, rel: str, text: str) -> list[str]:
    """Create the file `rel` (`/`-separated) beneath `root` holding `text`, and any missing
    directories on the way; returns what was created, directories first.

    Raises `ValueError` for a path that is not plain, `OSError` when a component is a link
    or the file already exists (a random name that is taken was put there to be found)."""
    parts = rel.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise ValueError(f"{rel!r} is not a plain relative path")
    created: list[str] = []
    directory = os.open(root, _DIR_FLAGS)
    try:
        for depth, part in enumerate(parts[:-1]):
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, _DIR_MODE, dir_fd=directory)
                created.append("/".join(parts[: depth + 1]))
            entered = os.open(part, _DIR_FLAGS, dir_fd=directory)  # ELOOP for a link
            os.close(directory)
            directory = entered
            if "/".join(parts[: depth + 1]) in created:
                os.fchmod(directory, _DIR_MODE)  # whatever the umask
        fd = os.open(parts[-1], _NEW_FILE_FLAGS, _FILE_MODE, dir_fd=directory)
        created.append(rel)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            os.fchmod(fd, _FILE_MODE)
            out.write(text)
    except BaseException:
        os.close(directory)
        remove_created(root, created)
        raise
    os.close(directory)
    return created


def remove_created(root: Path, created: list[str]) -> None:
    """Remove what `create_file` created, deepest first; what cannot be reached safely
    any more (a directory on the way became a link) is left for the workspace's removal."""
    for rel in reversed(created):
        parts = rel.split("/")
        try:
            directory = _enter(root, parts[:-1])
        except OSError:
            continue
        try:
            with contextlib.suppress(FileNotFoundError):
                if _is_directory(directory, parts[-1]):
                    # What the runner wrote there (bytecode caches) goes with it.
                    shutil.rmtree(parts[-1], dir_fd=directory)
                else:
                    os.unlink(parts[-1], dir_fd=directory)
        except OSError:
            pass
        finally:
            os.close(directory)


def _enter(root: Path, parts: list[str]) -> int:
    directory = os.open(root, _DIR_FLAGS)
    try:
        for part in parts:
            entered = os.open(part, _DIR_FLAGS, dir_fd=directory)
            os.close(directory)
            directory = entered
    except BaseException:
        os.close(directory)
        raise
    return directory


def _is_directory(directory: int, name: str) -> bool:
    import stat

    return stat.S_ISDIR(os.lstat(name, dir_fd=directory).st_mode)

"""Reading repository files for discovery, safely: bounded, inside the root, never blocking.

This is the only discovery module that touches the file system. Every read is
capped (a 200 MB package.json is refused, not loaded), confined to the
repository (a symlink pointing outside it is not followed), and limited to
regular files (a FIFO named `Makefile` would otherwise block forever). A file
that cannot be read raises `UnreadableFile` with a message naming it; a file
that is simply absent reads as None.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Iterator

from assay.errors import AssayError

#: Largest config file read. Real configs are kilobytes; anything bigger is refused
#: with a note rather than loaded, so a hostile file cannot stall discovery.
MAX_FILE_BYTES = 4 * 1024 * 1024

#: Most directory entries looked at in one listing (workspace globs, tests/).
MAX_DIR_ENTRIES = 5_000


class UnreadableFile(AssayError):
    """A file exists but cannot be used; the message names it and says why."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path = path
        self.why = why


class RepoFiles:
    """Bounded, confined access to the files under one repository root."""

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)
        self._text: dict[str, str | None] = {}

    def _inside(self, rel: str) -> str | None:
        """The real path of `rel` when it stays inside the root, else None (a name holding
        a NUL byte, which a configuration can spell and no path can hold, included)."""
        if "\0" in rel:
            return None
        full = os.path.join(self.root, rel)
        real = os.path.realpath(full)
        if real != self.root and not real.startswith(self.root + os.sep):
            return None
        return real

    def is_file(self, rel: str) -> bool:
        real = self._inside(rel)
        return real is not None and os.path.isfile(real)

    def is_dir(self, rel: str) -> bool:
        real = self._inside(rel)
        return real is not None and os.path.isdir(real)

    def has(self, rel: str) -> bool:
        """Whether a file or directory is at `rel` inside the root (never one outside)."""
        return self.is_file(rel) or self.is_dir(rel)

    def lexists(self, rel: str) -> bool:
        """True for anything at `rel`, even a symlink (a venv's `bin/python` points outside)."""
        return "\0" not in rel and os.path.lexists(os.path.join(self.root, rel))

    def list_dir(self, rel: str = ".") -> list[str]:
        """Sorted entry names of a directory inside the root; [] when absent or unreadable."""
        real = self._inside(rel)
        if real is None:
            return []
        names: list[str] = []
        try:
            with os.scandir(real) as entries:
                for entry in entries:
                    names.append(entry.name)
                    if len(names) >= MAX_DIR_ENTRIES:
                        break
        except OSError:
            return []
        return sorted(names)

    def list_kinds(self, rel: str = ".") -> list[tuple[str, str]]:
        """`list_dir` with each entry's kind: "dir", "file" or "other". The kind comes
        from the listing itself (no call per entry), except for a symlink, which counts
        as what it leads to only when that stays inside the root (`is_dir`, `is_file`)."""
        real = self._inside(rel)
        if real is None:
            return []
        kinds: list[tuple[str, str]] = []
        try:
            with os.scandir(real) as entries:
                for entry in entries:
                    kinds.append((entry.name, self._kind(entry, rel)))
                    if len(kinds) >= MAX_DIR_ENTRIES:
                        break
        except OSError:
            return []
        return sorted(kinds)

    def breadth_first(
        self,
        wanted: Callable[[str], bool],
        enters: Callable[[str, str], bool],
        *,
        depth: int,
        max_dirs: int,
        cut: Callable[[], None] | None = None,
    ) -> Iterator[str]:
        """The files whose name is `wanted`, breadth first from the root, entering only the
        directories `enters` (their name and path) allows; none past `depth` levels or
        `max_dirs` directories (a hostile tree must not make discovery a crawl). `cut`
        is called when a directory is left unlisted for either bound."""
        level, visited = ["."], 0
        for _ in range(depth):
            below: list[str] = []
            for directory in level:
                visited += 1
                if visited > max_dirs:
                    if cut is not None:
                        cut()
                    return
                for name, kind in self.list_kinds(directory):
                    path = name if directory == "." else f"{directory}/{name}"
                    if kind == "file" and wanted(name):
                        yield path
                    elif kind == "dir" and enters(name, path):
                        below.append(path)
            level = below
        if level and cut is not None:
            cut()

    def _kind(self, entry: os.DirEntry[str], rel: str) -> str:
        try:
            if entry.is_symlink():
                path = entry.name if rel == "." else f"{rel}/{entry.name}"
                return "dir" if self.is_dir(path) else "file" if self.is_file(path) else "other"
            if entry.is_dir(follow_symlinks=False):
                return "dir"
            return "file" if entry.is_file(follow_symlinks=False) else "other"
        except OSError:
            return "other"

    def read_text(self, rel: str) -> str | None:
        """The UTF-8 text of a file, None when absent; `UnreadableFile` when it cannot be used."""
        if rel in self._text:
            return self._text[rel]
        text = self._read(rel)
        self._text[rel] = text
        return text

    def read_texts(self, paths: Iterable[str]) -> tuple[dict[str, str], list[str]]:
        """The text of each of `paths` that exists, and a message for each that cannot be used."""
        texts: dict[str, str] = {}
        errors: list[str] = []
        for rel in paths:
            try:
                text = self.read_text(rel)
            except UnreadableFile as exc:
                errors.append(str(exc))
                continue
            if text is not None:
                texts[rel] = text
        return texts, errors

    def _read(self, rel: str) -> str | None:
        full = os.path.join(self.root, rel)
        if not os.path.lexists(full):
            return None
        real = self._inside(rel)
        if real is None:
            raise UnreadableFile(rel, "symlink pointing outside the repository, not followed")
        try:
            info = os.stat(real)
        except OSError as exc:  # dangling link, symlink loop, permission
            raise UnreadableFile(rel, _os_reason(exc)) from None
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFile(rel, "not a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise UnreadableFile(
                rel, f"{info.st_size} bytes, larger than the {MAX_FILE_BYTES} byte limit; not read"
            )
        try:
            fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as handle:
                data = handle.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise UnreadableFile(rel, _os_reason(exc)) from None
        if len(data) > MAX_FILE_BYTES:  # grew after the stat
            raise UnreadableFile(rel, f"larger than the {MAX_FILE_BYTES} byte limit; not read")
        if b"\x00" in data:
            raise UnreadableFile(rel, "binary content (NUL bytes), not a text file")
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise UnreadableFile(rel, f"not UTF-8 text (byte {exc.start})") from None


def _os_reason(exc: OSError) -> str:
    return exc.strerror.lower() if exc.strerror else type(exc).__name__

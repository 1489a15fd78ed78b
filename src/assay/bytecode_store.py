"""Byte-code for a workspace's modules, compiled by assay itself and kept across runs.

A workspace is a fresh copy without `__pycache__` (caches are never copied), so every
test run compiled every module of the project it imported, on every run: for a package of
a few hundred modules, a second or more of each verify, where the same commands by hand
read the byte-code their last run wrote. The tree's own byte-code cannot be carried in (a
`.pyc` decides what runs, and the tree writes it), nor what a run writes (the project's
code runs there, and a `.pyc` planted for a later tree's content would be believed).

So assay compiles the modules itself, on the host, in its own process: `compile` parses
a module's text and runs none of it. Each result is kept under its source's SHA-256 in a
directory of assay's state that no sandbox is shown. Before a later run's checks start,
every module of the workspace whose bytes have a kept result gets it in its `__pycache__`,
as the interpreter would have written it. What makes that safe and exact:

- Each file is a checked-hash `.pyc` (PEP 552): the interpreter compares the hash it holds
  with the source's bytes whenever it loads it, and gives the code the source's own path;
  nothing depends on the workspace's path or its shifted times. A file is placed only for
  a source whose bytes hash to its key and to the hash it holds.
- Only for checks whose interpreter is the very binary assay runs on (the same build: the
  same magic number, the same code), and only what that interpreter would compile the same
  way: a module whose compiling warned (a `SyntaxWarning`, which `-W error` makes an error)
  or failed is not kept, and its check compiles it and says what it says.
- Test modules (`test_*.py`, `*_test.py`, `conftest.py`) are imported by pytest through
  its assertion rewriting: they are rewritten by the pytest of assay's own environment,
  for a pytest check of that very version only, into a file pytest reads under that
  version's name only (`assay.pytest_bytecode`); a unittest run's are placed as compiled,
  as it imports them as any other module.
- Never for a run judged against a base (`--base`, `--protect`), nor for `--sandbox none`,
  which runs in the tree, whose own `__pycache__` is already warm.

What a run did not find is compiled after its checks, within `COMPILE_BUDGET_S`, so a
large tree's first runs fill the store in turns; what is unused longest goes first past
`MAX_STORE_BYTES`. The compiling happens in a child killed at that budget's end, under a
bound on its memory (`assay.compiling_apart`): no size bounds what compiling a module
costs.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from assay.untrusted_files import directory_untrusted, read_untrusted_at

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import CodeType

    from assay.evidence import Check, CheckerId

__all__ = [
    "BytecodeStore",
    "Source",
    "checked_pyc",
    "compile_until",
    "compiled",
    "prune",
    "store_for",
]

#: The tools whose checks import the project's modules in this interpreter.
PYTHON_TEST_TOOLS: frozenset[str | None] = frozenset({"pytest", "unittest"})
#: The most modules of a workspace given byte-code (placing a module costs ~0.1 ms).
MAX_MODULES = 5_000
#: A source larger than this is compiled by its check, as before.
MAX_SOURCE_BYTES = 1024 * 1024
#: Compiling a run's new sources after its checks stops past this many seconds.
COMPILE_BUDGET_S = 0.25
#: Compiling all of a run's sources (no budget given) stops past this many seconds.
KEEP_ALL_BUDGET_S = 30.0
#: Past this size, the least recently used entries are removed.
MAX_STORE_BYTES = 256 * 1024 * 1024
#: The store is measured at most once in this many seconds.
PRUNE_INTERVAL_S = 3600
#: Where under assay's state directory the store lives.
STORE_SUBDIR = "bytecode"
_MAX_PYC_BYTES = 16 * MAX_SOURCE_BYTES
_TAG = sys.implementation.cache_tag
_PYC_SUFFIX = f".{_TAG}.pyc" if _TAG else ""
_CHECKED_HASH = b"\x03\x00\x00\x00"  # PEP 552 flags: hash-based, checked on every load
_DIR_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True, slots=True)
class Source:
    """A module of the workspace with no byte-code kept yet."""

    rel: str
    key: str
    data: bytes


class BytecodeStore:
    """The kept byte-code of one compiler (`directory`, one file per source): for the
    modules `selects` picks (by file name), made by `compiler` (source bytes and path to
    a `.pyc`, or None), placed as `NAME` + `suffix`."""

    def __init__(
        self,
        directory: Path,
        *,
        selects: Callable[[str], bool],
        compiler: Callable[[bytes, str], bytes | None],
        suffix: str = _PYC_SUFFIX,
    ) -> None:
        self.directory = directory
        self.selects = selects
        self.compiler = compiler
        self.suffix = suffix

    def place(self, workspace: Path, files: Iterable[str], uid: int | None) -> list[Source]:
        """Put the kept byte-code of each of `files` (the workspace's copied files, by
        relative path) beside it; return the modules that had none. Each directory is
        reached once, by name, following no link: what ran in the workspace (the tools'
        probes) may have made one."""
        missing: list[Source] = []
        for rel_dir, names in _by_directory(files, self.selects).items():
            with directory_untrusted(workspace, rel_dir) as directory:
                if directory is None:
                    continue
                cache: int | None = None
                try:
                    for name in names:
                        rel = f"{rel_dir}/{name}" if rel_dir else name
                        data = read_untrusted_at(directory, name, limit=MAX_SOURCE_BYTES)
                        if not isinstance(data, bytes):
                            continue  # a link, something too large or gone: compiled there
                        key = hashlib.sha256(data).hexdigest()
                        pyc = self._kept(key, data)
                        if pyc is None:
                            missing.append(Source(rel, key, data))
                            continue
                        if cache is None:
                            cache = _pycache_in(directory, uid)
                        if cache is not None:
                            _write_new(cache, name[: -len(".py")] + self.suffix, pyc)
                finally:
                    if cache is not None:
                        os.close(cache)
        return missing

    def keep(self, sources: Sequence[Source], until: float | None = None) -> int:
        """Compile `sources` and keep each result, until the monotonic time `until` (none:
        all of them); return how many were kept."""
        if not sources:
            return 0
        from assay.compiling_apart import compiled_apart

        # the tree's source decides how long compiling takes: never past a deadline
        deadline = until if until is not None else time.monotonic() + KEEP_ALL_BUDGET_S
        made = compiled_apart(
            self.compiler, [(s.data, s.rel) for s in sources], deadline, _MAX_PYC_BYTES
        )
        kept = 0
        for source, pyc in zip(sources, made, strict=False):
            if pyc is not None and self._put(source.key, pyc):
                kept += 1
        self._prune_now_and_then()
        return kept

    def _entry(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.pyc"

    def _kept(self, key: str, data: bytes) -> bytes | None:
        entry = os.path.join(self.directory, key[:2], f"{key}.pyc")
        try:
            with open(entry, "rb") as kept:
                pyc = kept.read(_MAX_PYC_BYTES + 1)
        except OSError:
            return None
        if len(pyc) > _MAX_PYC_BYTES:
            return None  # never placed cut short: an import of it would fail
        if pyc[:8] != importlib.util.MAGIC_NUMBER + _CHECKED_HASH:
            return None
        if pyc[8:16] != importlib.util.source_hash(data):
            return None
        try:
            os.utime(entry)  # recently used: the last to be pruned
        except OSError:
            pass
        return pyc

    def _put(self, key: str, pyc: bytes) -> bool:
        if len(pyc) > _MAX_PYC_BYTES:
            return False  # never placed: not kept either
        entry = self._entry(key)
        partial = entry.with_name(f".{entry.name}.{os.getpid()}")
        try:
            entry.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            partial.write_bytes(pyc)
            os.replace(partial, entry)  # whole or not at all, for a reader beside
        except OSError:
            partial.unlink(missing_ok=True)
            return False
        return True

    def _prune_now_and_then(self) -> None:
        stamp = self.directory / ".pruned"
        try:
            if time.time() - stamp.stat().st_mtime < PRUNE_INTERVAL_S:
                return
        except FileNotFoundError:
            pass
        except OSError:
            return
        try:
            stamp.touch()
            prune(self.directory, MAX_STORE_BYTES)
        except OSError:
            pass  # kept as it is: the next prune tries again


def prune(directory: Path, max_bytes: int) -> int:
    """Remove the least recently used entries under `directory` until it holds no more
    than three quarters of `max_bytes`, once it holds more; return how many went."""
    entries: list[tuple[float, int, str]] = []
    for shard in os.scandir(directory):
        if not shard.is_dir(follow_symlinks=False):
            continue
        for entry in os.scandir(shard.path):
            info = entry.stat(follow_symlinks=False)
            entries.append((info.st_mtime, info.st_size, entry.path))
    total = sum(size for _, size, _ in entries)
    if total <= max_bytes:
        return 0
    removed = 0
    for _, size, path in sorted(entries):
        if total <= max_bytes * 3 // 4:
            break
        try:
            os.unlink(path)
        except FileNotFoundError:
            continue
        total -= size
        removed += 1
    return removed


def compile_until(stores: Sequence[tuple[BytecodeStore, Sequence[Source]]]) -> None:
    """Keep what each store's run did not find, within `COMPILE_BUDGET_S` in all."""
    for store, missing in stores:
        if missing:
            store.compiler(b"", "__init__.py")  # its imports made here, once, not in the child
    until = time.monotonic() + COMPILE_BUDGET_S
    for store, missing in stores:
        store.keep(missing, until)


def compiled(data: bytes, rel: str) -> bytes | None:
    """`data` compiled as the interpreter's import would, as a checked-hash `.pyc` (laid
    out as `py_compile` lays one out); None when compiling it failed or warned (its check
    compiles it and says so itself)."""
    return checked_pyc(data, lambda: compile(data, rel, "exec", dont_inherit=True, optimize=0))


def checked_pyc(data: bytes, compiling: Callable[[], CodeType]) -> bytes | None:
    """The checked-hash `.pyc` of `data`, its code made by `compiling`; None when that
    failed or warned."""
    import marshal

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            code = compiling()
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return None
    if caught:
        return None
    header = importlib.util.MAGIC_NUMBER + _CHECKED_HASH + importlib.util.source_hash(data)
    return header + marshal.dumps(code)


def store_for(
    checks: Sequence[Check],
    checkers: Sequence[CheckerId | None],
    *,
    sandbox: str,
    judged_against_base: bool,
    state_dir: str | os.PathLike[str] | None = None,
    pass_hook: Callable[[], bool] = lambda: False,
) -> list[BytecodeStore]:
    """The stores for this run: none when no test check runs in this very interpreter
    (each of `checkers` identifies the check beside it in `checks`), the run is judged
    against a base, or it runs in the tree. Rewritten test modules only where a pytest
    check is the version assay's environment holds, and `pass_hook` (whether the project
    turns pytest's assertion pass hook on, which rewrites them otherwise) says no."""
    if judged_against_base or sandbox == "none" or not _PYC_SUFFIX:
        return []
    ours = _identity(getattr(sys, "_base_executable", None) or sys.executable)
    mine = [
        (check.tool, checker.version)
        for check, checker in zip(checks, checkers, strict=True)
        if ours is not None and checker is not None and _identity(checker.path) == ours
    ]
    tools = {tool for tool, _ in mine}
    if not tools & PYTHON_TEST_TOOLS:
        return []
    from assay.state_dir import default_cache_dir

    top = (Path(state_dir) if state_dir is not None else default_cache_dir()) / STORE_SUBDIR
    plain = _imported if "unittest" in tools else _imported_not_rewritten
    stores = [BytecodeStore(top / _TAG, selects=plain, compiler=compiled)]
    from assay import pytest_bytecode

    own = pytest_bytecode.own_version()
    if own is not None and ("pytest", own) in mine and not pass_hook():
        tag = pytest_bytecode.tag(own)
        stores.append(
            BytecodeStore(
                top / tag,
                selects=pytest_bytecode.rewritten_module,
                compiler=pytest_bytecode.rewritten,
                suffix=f".{tag}.pyc",
            )
        )
    return stores


def _identity(binary: str | None) -> tuple[int, int] | None:
    if not binary:
        return None
    try:
        info = os.stat(binary)
    except (OSError, ValueError):
        return None
    return (info.st_dev, info.st_ino)


def _by_directory(files: Iterable[str], selects: Callable[[str], bool]) -> dict[str, list[str]]:
    """The files among `files` whose names `selects` picks, by directory: the first
    `MAX_MODULES` of them (each is read and hashed before the checks start)."""
    grouped: dict[str, list[str]] = {}
    picked = 0
    for rel in files:
        rel_dir, _, name = rel.rpartition("/")
        if selects(name):
            grouped.setdefault(rel_dir, []).append(name)
            picked += 1
            if picked >= MAX_MODULES:
                break
    return grouped


def _imported(name: str) -> bool:
    """A module the interpreter imports as it is (a unittest run's test modules too)."""
    return name.endswith(".py") and name != "conftest.py"


def _imported_not_rewritten(name: str) -> bool:
    """A module a pytest run imports as it is: not one it rewrites."""
    from assay.pytest_bytecode import rewritten_module

    return _imported(name) and not rewritten_module(name)


def _pycache_in(directory: int, uid: int | None) -> int | None:
    """`__pycache__` in `directory`, made (the sandbox's, `uid`) unless there; None when
    what is there is not a directory of its own (a link, a file)."""
    try:
        os.mkdir("__pycache__", 0o755, dir_fd=directory)
        if uid is not None:
            os.chown("__pycache__", uid, uid, dir_fd=directory, follow_symlinks=False)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        return os.open("__pycache__", _DIR_FLAGS, dir_fd=directory)
    except OSError:
        return None


def _write_new(directory: int, name: str, data: bytes) -> None:
    """`data` as the new file `name` in `directory`, whole or not at all (a `.pyc` cut
    short would fail the import that read it, where a missing one is compiled), and
    never over a file already there; nothing at all when it cannot be."""
    partial = f".{name}.{os.getpid()}"
    try:
        fd = os.open(partial, _NEW_FILE, 0o644, dir_fd=directory)
    except OSError:
        return
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.link(partial, name, src_dir_fd=directory, dst_dir_fd=directory, follow_symlinks=False)
    except OSError:
        pass  # not placed: the check compiles the module, as before
    finally:
        with contextlib.suppress(OSError):
            os.unlink(partial, dir_fd=directory)

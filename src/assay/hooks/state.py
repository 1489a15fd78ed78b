"""How many times in a row a hook has blocked, per caller: the cap's memory.

One small JSON file per key (a hashed session id) under assay's state directory. A
chain of blocks ends when the project verifies or when the cap lets a stop through;
a chain left idle longer than `STALE_CHAIN_S` is forgotten when a fresh stop arrives,
so an interrupted chain does not eat into a later one's budget.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from assay.errors import AssayError
from assay.state_dir import default_cache_dir

__all__ = ["STALE_CHAIN_S", "BlockChain", "StateError", "chain_for", "record_path", "write_record"]

#: Seconds after its last block past which a chain no longer counts for a fresh stop.
STALE_CHAIN_S = 3600.0


class StateError(AssayError):
    """The count could not be read or written (an unwritable state directory)."""


@dataclass(slots=True)
class BlockChain:
    """The consecutive blocks recorded for one key, and where they are kept."""

    path: Path
    blocks: int = 0
    last_block: float = 0.0

    def idle_for(self, now: float) -> float:
        return now - self.last_block if self.blocks else 0.0

    def add_block(self) -> None:
        self.blocks += 1
        self.last_block = time.time()
        self._save()

    def reset(self) -> None:
        self.blocks = 0
        self.last_block = 0.0
        try:
            self.path.unlink(missing_ok=True)
        except OSError as exc:
            raise StateError(f"could not reset {self.path}: {exc.strerror or exc}") from None

    def _save(self) -> None:
        write_record(self.path, {"blocks": self.blocks, "last_block": self.last_block})


def write_record(path: Path, document: dict[str, object]) -> None:
    """Write `document` as JSON to `path`, whole or not at all; `StateError` if it cannot."""
    import tempfile  # here: only a write needs it, and a hook starts at every stop

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Written beside and renamed over: a reader never sees half a file.
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".record-")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(document, out)
        os.replace(temporary, path)
    except OSError as exc:
        with contextlib.suppress(OSError, UnboundLocalError):
            os.unlink(temporary)
        raise StateError(f"could not write {path}: {exc.strerror or exc}") from None


def state_directory() -> Path:
    return default_cache_dir() / "hooks"


def record_path(key: str, directory: Path | None = None, *, kind: str = "") -> Path:
    """Where the record of `kind` (empty: the block chain) for `key` is kept."""
    name = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return (directory or state_directory()) / f"{kind}{name}.json"


def chain_for(key: str, directory: Path | None = None) -> BlockChain:
    """The chain recorded for `key` (a session id, or any caller's name for itself)."""
    path = record_path(key, directory)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return BlockChain(path)
    except (OSError, ValueError):
        # A damaged count is a count of zero: at worst one chain gets its full budget again.
        return BlockChain(path)
    blocks = document.get("blocks") if isinstance(document, dict) else None
    last = document.get("last_block") if isinstance(document, dict) else None
    if not isinstance(blocks, int) or isinstance(blocks, bool) or blocks < 0:
        return BlockChain(path)
    return BlockChain(path, blocks, float(last) if isinstance(last, int | float) else 0.0)

"""Git objects as bytes assay checks itself: each object's id is the hash of what it holds,
and the raw trees and commits are parsed here.

git believes its object store as it finds it: a loose object rewritten in place under its
old name (`.git/objects/ab/cdef...`, any zlib stream) is served by `cat-file`, `ls-tree`
and `rev-parse` alike, hash unchecked. The object store is in the working tree's `.git`,
which whoever made the change can write: a base commit's test file rewritten so was the
base's test under `--protect`. So every object assay reads of a base is hashed again here,
and the tree is walked from the commit's own bytes, never from git's listing of it.
"""

from __future__ import annotations

import hashlib

from assay.errors import AssayError

__all__ = ["Hasher", "ObjectMismatch", "commit_tree", "parse_tree"]

#: The hash of each object format, by the length of its ids in hex.
_ALGORITHMS = {40: "sha1", 64: "sha256"}


class ObjectMismatch(AssayError):
    """An object's bytes do not hash to its id."""


class Hasher:
    """The hash of one object as its bytes stream past, checked against its id at the end."""

    __slots__ = ("_hash", "_oid")

    def __init__(self, oid: str, kind: str, size: int) -> None:
        algorithm = _ALGORITHMS.get(len(oid))
        if algorithm is None:
            raise ObjectMismatch(f"{oid!r} is no object id")
        self._oid = oid
        self._hash = hashlib.new(algorithm, f"{kind} {size}\0".encode("ascii"))

    def update(self, data: bytes) -> None:
        self._hash.update(data)

    def check(self) -> None:
        if self._hash.hexdigest() != self._oid.lower():
            raise ObjectMismatch(
                f"object {self._oid} does not hold what its id names (its bytes hash to "
                f"{self._hash.hexdigest()}): the repository's object store was rewritten"
            )


def parse_tree(data: bytes, oid_hex_length: int) -> list[tuple[int, bytes, str]]:
    """The entries of a raw tree object: (mode, name, object id)."""
    width = oid_hex_length // 2
    entries = []
    at = 0
    while at < len(data):
        space = data.find(b" ", at)
        nul = data.find(b"\0", space + 1) if space >= 0 else -1
        if space < 0 or nul < 0 or nul + 1 + width > len(data):
            raise ObjectMismatch("a tree object ends inside an entry")
        try:
            mode = int(data[at:space], 8)
        except ValueError:
            raise ObjectMismatch(f"a tree entry has the mode {data[at:space][:20]!r}") from None
        name = data[space + 1 : nul]
        if not name or b"/" in name:
            raise ObjectMismatch(f"a tree entry is named {name[:200]!r}")
        entries.append((mode, name, data[nul + 1 : nul + 1 + width].hex()))
        at = nul + 1 + width
    return entries


def commit_tree(data: bytes) -> str:
    """The tree a raw commit object names (its first header line)."""
    first = data.split(b"\n", 1)[0]
    name, _, value = first.partition(b" ")
    text = value.decode("ascii", "replace")
    if name != b"tree" or len(text) not in _ALGORITHMS or text.strip("0123456789abcdef"):
        raise ObjectMismatch(f"a commit object starts with {first[:100]!r}, not its tree")
    return text

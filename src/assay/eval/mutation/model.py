"""A mutation: one edit of a file's bytes at exact offsets, named by its operator, so the
file's formatting everywhere else is kept."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

#: The operators, as template ids. Every language implements the same set.
OPERATORS = (
    "comparison_flip",
    "off_by_one",
    "wrong_return",
    "dropped_statement",
    "swapped_arguments",
    "negated_condition",
)


@dataclass(frozen=True, slots=True)
class Mutation:
    operator: str
    path: str
    line: int
    """The 1-based line the edit starts on."""
    start: int
    """Byte offset in the file where the replaced text starts."""
    end: int
    replacement: bytes
    original: bytes
    """The bytes replaced (kept to describe the site, never shown to an agent)."""

    def describe(self) -> str:
        before = self.original.decode("utf-8", "replace")
        after = self.replacement.decode("utf-8", "replace")
        return f"{self.operator} at {self.path}:{self.line}: {before!r} -> {after!r}"


def apply_mutations(text: bytes, mutations: Sequence[Mutation]) -> bytes:
    """`text` with every mutation (of this one file) applied; they must not overlap."""
    ordered = sorted(mutations, key=lambda m: m.start, reverse=True)
    for later, earlier in itertools.pairwise(ordered):
        if earlier.end > later.start:
            raise ValueError(f"overlapping mutations: {earlier.describe()}, {later.describe()}")
    for mutation in ordered:
        if text[mutation.start : mutation.end] != mutation.original:
            raise ValueError(f"the text at {mutation.describe()} is not what it was")
        text = text[: mutation.start] + mutation.replacement + text[mutation.end :]
    return text

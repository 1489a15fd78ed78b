"""A mutation task's difficulty band, from what makes a bug hard to find: few tests that
catch it (little signal), a site the failing tests reach only through other code (the
trace does not point at it), and several mutations stacked (more than one thing to fix)."""

from __future__ import annotations

BANDS = ("easy", "medium", "hard")


def difficulty_band(catching: int, *, direct: bool, stacked: int = 1) -> str:
    """`easy`, `medium` or `hard`. `catching`: how many tests fail on the mutant; `direct`:
    whether one of them calls the mutated unit itself; `stacked`: mutations in the task."""
    if catching < 1 or stacked < 1:
        raise ValueError(f"a task needs a catching test and a mutation ({catching}, {stacked})")
    points = 0 if catching >= 3 else 3 - catching  # 3+ tests: 0, two: 1, one: 2
    points += 0 if direct else 1
    points += stacked - 1
    if points <= 1:
        return "easy"
    return "medium" if points == 2 else "hard"

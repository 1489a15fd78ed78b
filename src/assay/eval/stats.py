"""The statistics of an evaluation report: Wilson score intervals for pass rates, and the
unbiased pass@k estimator over epochs.

Wilson, not the normal approximation: with the few attempts an evaluation has per group
(and rates at 0 or 1) the normal interval collapses to a point or leaves [0, 1].
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

#: The two-sided 95% normal quantile.
Z95 = 1.959963984540054


def wilson_interval(passed: int, total: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of `passed` out of `total`; None when `total` is 0."""
    if total < 0 or passed < 0 or passed > total:
        raise ValueError(f"passed must be within 0..total, got passed={passed} total={total}")
    if total == 0:
        return None
    rate = passed / total
    denominator = 1 + z * z / total
    centre = (rate + z * z / (2 * total)) / denominator
    spread = z * math.sqrt(rate * (1 - rate) / total + z * z / (4 * total * total)) / denominator
    return max(0.0, centre - spread), min(1.0, centre + spread)


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that some of `k` attempts drawn from `n` (of which `c` passed) passes:
    1 - C(n-c, k) / C(n, k), the estimator of Chen et al. (2021), unbiased unlike 1-(1-c/n)^k."""
    if not 0 <= c <= n:
        raise ValueError(f"passed must be within 0..n, got c={c} n={n}")
    if not 1 <= k <= n:
        raise ValueError(f"k must be within 1..n, got k={k} n={n}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_at_k_by_task(outcomes: Mapping[str, Sequence[bool]]) -> dict[str, dict[str, float]]:
    """pass@k for every k up to the most scored attempts of a task, keyed by str(k): the
    mean over the tasks with at least k scored attempts, and how many tasks that is."""
    most = max((len(v) for v in outcomes.values()), default=0)
    found: dict[str, dict[str, float]] = {}
    for k in range(1, most + 1):
        values = [
            pass_at_k(len(passes), sum(passes), k)
            for passes in outcomes.values()
            if len(passes) >= k
        ]
        found[str(k)] = {"value": sum(values) / len(values), "tasks": len(values)}
    return found

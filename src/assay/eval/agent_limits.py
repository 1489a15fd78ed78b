"""A task's limits on what its agent may spend (`[limits]` tokens and cost), judged on the
usage the agent reported. Wall time is enforced by the runner's deadline instead."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.eval.task import Limits


def limit_exceeded(telemetry: Mapping[str, Any], limits: Limits) -> str:
    """Which limit the reported usage is over, as a reason (`tokens 3600 > 3000`); ''
    when none is. Tokens are those read and written (`tokens_in` + `tokens_out`)."""
    if limits.tokens is not None:
        tokens = _number(telemetry.get("tokens_in")) + _number(telemetry.get("tokens_out"))
        if tokens > limits.tokens:
            return f"tokens {int(tokens)} > {limits.tokens}"
    if limits.cost_usd is not None:
        cost = _number(telemetry.get("cost_usd"))
        if cost > limits.cost_usd:
            return f"cost ${cost:.4f} > ${limits.cost_usd:.4f}"
    return ""


def unenforceable(telemetry: Mapping[str, Any], limits: Limits) -> str:
    """A note when a limit is set that the agent's report says nothing about."""
    missing = []
    if limits.tokens is not None and "tokens_in" not in telemetry and "tokens_out" not in telemetry:
        missing.append("tokens")
    if limits.cost_usd is not None and "cost_usd" not in telemetry:
        missing.append("cost")
    if not missing:
        return ""
    return (
        f"{' and '.join(missing)} limit not checked: the agent reported no {' or '.join(missing)}"
    )


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    return float(value)

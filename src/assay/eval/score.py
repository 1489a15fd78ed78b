"""Grading: a versioned rubric reads an attempt's verification (primary) and the agent's
telemetry (secondary) into a score. It reads verdicts; it never verifies anything itself.

Rubric 2: VERIFIED scores 1.0, every other status 0.0; an attempt whose agent went over
one of its task's limits (tokens, cost: `AgentResult.limit_exceeded`) scores 0.0 whatever
its verification, with the reason (`limit_exceeded: ...`). Rubric 1 had no limits. Telemetry
(turns, retries, tokens, cost) and the agent's wall time are kept beside the score, not
folded into it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.eval.runners import AgentResult
from assay.eval.verify_stage import Verification

RUBRIC = "pass@verified/2"


@dataclass(frozen=True, slots=True)
class Score:
    value: float
    rubric: str = RUBRIC
    status: str = ""
    """The verification status the value was read from."""
    secondary: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    """Why a verified attempt scored 0 (`limit_exceeded: tokens 3600 > 3000`), if it did."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "rubric": self.rubric,
            "status": self.status,
            "secondary": self.secondary,
            "reason": self.reason,
        }


def score(verification: Verification, agent: AgentResult) -> Score:
    secondary: dict[str, Any] = {
        "agent_duration_s": round(agent.duration_s, 3),
        "agent_exit_code": agent.exit_code,
        "tampering": len(verification.tampering),
    }
    for key in ("turns", "retries", "tokens_in", "tokens_out", "cost_usd"):
        if key in agent.telemetry:
            secondary[key] = agent.telemetry[key]
    if agent.limit_exceeded:
        reason = f"limit_exceeded: {agent.limit_exceeded}"
        return Score(0.0, status=verification.status, secondary=secondary, reason=reason)
    value = 1.0 if verification.verified else 0.0
    return Score(value=value, status=verification.status, secondary=secondary)

"""Grading: a versioned rubric reads an attempt's verification (primary) and the agent's
telemetry (secondary) into a score. It reads verdicts; it never verifies anything itself.

Rubric 1: VERIFIED scores 1.0, every other status 0.0. Telemetry (turns, retries, tokens,
cost) and the agent's wall time are kept beside the score, not folded into it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.eval.runners import AgentResult
from assay.eval.verify_stage import Verification

RUBRIC = "pass@verified/1"


@dataclass(frozen=True, slots=True)
class Score:
    value: float
    rubric: str = RUBRIC
    status: str = ""
    """The verification status the value was read from."""
    secondary: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "rubric": self.rubric,
            "status": self.status,
            "secondary": self.secondary,
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
    value = 1.0 if verification.verified else 0.0
    return Score(value=value, status=verification.status, secondary=secondary)

"""The plan a tree was given, remembered under the tree's digest, so that a cache hit is
found without discovering or planning again (`pipeline._remembered_hit`).

A plan is made from the tree alone and from the options that shape planning: discovery
reads nothing outside the root and no host setting, and the tree's files and the
fingerprints of its linked environments are all in its digest
(`cache.workspace_digest`). So the root, the digest, those options and assay's build
name the plan. What a plan does not decide -- each checker's version, the sandbox's
binaries -- is read again on every hit (`early_key.toolchains`), as when the plan is made
afresh, and the verdict is still looked up under the early key, which holds the plan.

A memo is written only by a run that found its tree unchanged after planning (the session's
second digest, or one taken again after an early hit), and only beside a verdict: it goes
when that verdict is evicted. A memo that cannot be read is a miss.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from assay.build_identity import assay_build
from assay.evidence import Check
from assay.verdict import Kind

#: Version of the memo's key and document; bump it when either changes meaning.
PLAN_MEMO_SCHEMA = "assay.plan-memo/1"


@dataclass(frozen=True, slots=True)
class RememberedPlan:
    """A plan as it was stored: what the early key and the verdict's check need of it."""

    document: Mapping[str, Any]
    """The plan's `to_dict()`, as the early key was made of it."""
    checks: tuple[Check, ...]
    require_tests: bool
    missing: frozenset[Kind]

    def to_dict(self) -> Mapping[str, Any]:
        return self.document


def plan_memo_key(root: str, digest: str, planning: Mapping[str, Any]) -> str:
    """The memo's key: the resolved `root`, the tree's `digest`, the `planning` options
    (JSON-able) and assay's build (`assay.build_identity`)."""
    material = [PLAN_MEMO_SCHEMA, assay_build(), root, digest, planning]
    encoded = json.dumps(material, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(encoded.encode()).hexdigest()


def encode_plan(document: Mapping[str, Any]) -> str:
    return json.dumps(document, sort_keys=True, separators=(",", ":"))


def decode_plan(text: str) -> RememberedPlan | None:
    """The plan stored as `text`, or None when it is not one `encode_plan` wrote."""
    try:
        document = json.loads(text)
        checks = tuple(Check.from_dict(entry) for entry in document["checks"])
        require_tests = document["require_tests"]
        missing = frozenset(Kind(value) for value in document["missing"])
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if not isinstance(require_tests, bool) or not checks:
        return None
    return RememberedPlan(document, checks, require_tests, missing)

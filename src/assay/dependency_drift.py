"""A check that failed inside dependencies an unlocked install chose today, not in the
project's own code.

A Node project with no lockfile gets whatever its ranges resolve to on the day: mitt 3.0.1
asks for `@types/node` and `eslint` by range, npm gave it an `@types/node` its TypeScript 4.9
cannot parse and a `get-intrinsic` its eslint 7 cannot load. Its typecheck, lint and tests
then failed in `node_modules/` alone, where its maintainers' tree of the time had none of
that. Such a failure is no verdict on the code: it could not be checked here (UNVERIFIED,
naming the packages), until a lockfile pins what it was written against. Where the output
names any place in the project's own files, the failure stands.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from assay.evidence import Evidence
from assay.verdict import Cause, Verdict

__all__ = ["drifted_dependencies", "judged_for_drift"]

#: A source location as tools print it: `path:12`, `path:12:3` (stacks, eslint, vitest) or
#: tsc's `path(12,3)`, for a file of a language Node runs or type-checks.
_LOCATION = re.compile(
    r"(?P<path>[\w@.+/-]*\.(?:[cm]?[jt]sx?|d\.[cm]?ts|vue|svelte))(?::\d+|\(\d+,\d+\))"
)
#: A dependency's directory in a location: `node_modules/@types/node/...` names `@types/node`.
_DEPENDENCY = re.compile(r"(?:^|/)node_modules/(?P<name>@[^/]+/[^/]+|[^/@][^/]*)/")
#: The most dependencies a note names.
MAX_NAMED = 3


def drifted_dependencies(output: str) -> list[str]:
    """The dependencies a failure's `output` places itself in, when every source location
    it names is inside `node_modules/`; [] when it names one of the project's own, or none."""
    found: dict[str, None] = {}
    for match in _LOCATION.finditer(output):
        dependency = _DEPENDENCY.search(match["path"])
        if dependency is None:
            return []  # the project's own file
        found[dependency["name"]] = None
    return list(found)


def judged_for_drift(evidence: Sequence[Evidence]) -> list[Evidence]:
    """`evidence` (the checks of a run whose install resolved its dependencies without a
    lockfile), each failure that lies only in those dependencies made UNVERIFIED."""
    from assay.parsers._text import combined, strip_ansi

    judged = []
    for found in evidence:
        if found.verdict is Verdict.FAIL and found.cause is Cause.EXIT_NONZERO and found.result:
            names = drifted_dependencies(strip_ansi(combined(found.result)))
            if names:
                found = replace(
                    found,
                    verdict=Verdict.UNVERIFIED,
                    cause=Cause.TOOLCHAIN_MISSING,
                    note=_note(found.check.name, names),
                )
        judged.append(found)
    return judged


def _note(check: str, names: list[str]) -> str:
    shown = ", ".join(names[:MAX_NAMED])
    if len(names) > MAX_NAMED:
        shown += f" and {len(names) - MAX_NAMED} more"
    return (
        f"{check} failed only inside dependencies ({shown}) resolved today: the "
        "project has no lockfile, so these are not the releases it was written against. "
        "Commit a lockfile (or install the dependencies yourself), then verify again."
    )

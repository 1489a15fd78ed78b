"""A test run that failed only because its tests were refused a write to a protected file.

Under `--protect` the base's test files are locked against the sandbox's user
(`assay.protected_workspace.lock_protected`), so that the code under test cannot rewrite
what judges it. Some test suites rewrite a file of their own as they run: pytest-benchmark's
sdist ships `tests/test_hd15iqr_excludes_high_outliers.svg`, which one of its tests writes
again. That test then fails with "Permission denied", and the run read as FAILED on a
clean tree.

Such a run says nothing of the code: the failure is the lock's. A failed test check whose
every failing test says it was refused a write to a protected file is inconclusive, the
note naming the file. Code under test can raise the same error on purpose; it gains an
inconclusive verdict, never a pass.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

from assay.evidence import Evidence
from assay.formats.failures import FAILED_OUTCOMES
from assay.protect import ProtectedSet
from assay.verdict import Cause, Kind, Verdict

__all__ = ["refused_protected_write"]

#: A write refused for want of permission, the path in group `path`: Python's
#: `[Errno 13] Permission denied: 'tests/x.svg'`, Node's `EACCES: permission denied,
#: open '/w/tests/x.svg'`.
_DENIED = re.compile(
    r"\[Errno 13\] Permission denied: '(?P<path>[^']+)'"
    r"|EACCES: permission denied, \w+ '(?P<node>[^']+)'"
)


def refused_protected_write(evidence: Evidence, protected: ProtectedSet, root: Path) -> Evidence:
    """`evidence` made inconclusive when it is a failed test check whose every failing
    test was refused a write to a file `protected` names (in the workspace at `root`);
    as it was otherwise."""
    if evidence.check.kind is not Kind.TEST or evidence.verdict is not Verdict.FAIL:
        return evidence
    failing = [c for c in evidence.test_cases if c.outcome in FAILED_OUTCOMES]
    if not failing:
        return evidence
    cwd = evidence.result.cwd if evidence.result is not None else None
    written = [_protected_path(c.message or "", protected, root, cwd) for c in failing]
    if any(path is None for path in written):
        return evidence
    files = ", ".join(sorted({p for p in written if p is not None})[:5])
    note = (
        f"{evidence.check.name}: every failing test was refused a write to a file of the "
        f"base's tests ({files}), which --protect keeps read-only so that the code under "
        "test cannot rewrite what judges it; the tests rewrite it themselves, so this run "
        "says nothing of the code. Verify without --protect to see their outcome."
    )
    return replace(
        evidence, verdict=Verdict.INCONCLUSIVE, cause=Cause.SANDBOX_UNAVAILABLE, note=note
    )


def _protected_path(
    message: str, protected: ProtectedSet, root: Path, cwd: str | None
) -> str | None:
    """The workspace-relative path of the protected file `message` says a write to was
    refused; None when it says no such thing."""
    found = _DENIED.search(message)
    if found is None:
        return None
    said = found["path"] or found["node"]
    where = os.path.normpath(os.path.join(cwd or str(root), said))
    relative = os.path.relpath(where, root)
    if relative.startswith(".." + os.sep) or relative == "..":
        return None
    relative = relative.replace(os.sep, "/")
    return relative if protected.matches(relative) else None

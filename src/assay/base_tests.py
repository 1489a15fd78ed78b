"""Every test that ran at the base must be reported executed by the change.

A change can keep a failing test from failing without touching it: code under test that
skips it at run time, a plugin that deselects it, an early exit before it ran. What the
change's run reports is then all true and all passing, and one test is simply not there.
So with a base (`--base REF`), the base's test checks are run on the base's own tree (a
second workspace of the same sandbox, the commit's tree with today's environments
linked), per-test outcomes read from their reports; and every test that passed or failed
there and is now skipped, expected to fail, deselected or missing from the
change's report keeps the change from VERIFIED, by name. The tests that failed at the base
most of all: they are what a change is asked to fix, and one skipped from library code
(`raise SkipTest`) was not fixed. Tests the change adds are fine.

Where a check reports no per-test names (a wrapper read by its summary alone), its count
of passing tests is held against the change's instead.

The base is a commit, so its outcomes depend only on its tree, the plan, the toolchains,
the sandbox and the environments it links: they are cached under those
(`assay.cache.VerdictCache`), so judging many changes against one base runs its tests once.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.evidence import Check, Evidence
from assay.verdict import Kind

__all__ = [
    "BASE_NOTE_MAX_TESTS",
    "BaseCheck",
    "BaseTests",
    "NotExecuted",
    "base_tests",
    "compare",
]

#: Tests named in a report's note; the JSON lists them all.
BASE_NOTE_MAX_TESTS = 10
#: Outcomes that mean a test ran (the change's failures are its own verdict's business).
_RAN = frozenset({"passed", "failed", "error"})
#: Version of the cached base outcomes' key and document.
BASE_CACHE_SCHEMA = "assay.base-tests/3"


@dataclass(frozen=True, slots=True)
class NotExecuted:
    """A test that passed or failed at the base and that the change's run did not execute."""

    check: str
    test: str
    """The test's name as its runner reports it; for a check without per-test names, how
    many of its passing tests are missing."""
    now: str
    """What the change's run reported for it: `skipped` (skipped, or expected to fail) or
    `missing` (deselected, hidden, never reported)."""

    def describe(self) -> str:
        return f"{self.check}: {self.test} ({self.now})"

    def to_dict(self) -> dict[str, str]:
        return {"check": self.check, "test": self.test, "now": self.now}


@dataclass(frozen=True, slots=True)
class BaseCheck:
    """What one of the base's test checks gave at the base."""

    name: str
    verdict: str
    cause: str
    passed: tuple[str, ...]
    """Tests that passed there, by name (empty when the check reports no per-test names)."""
    passed_count: int
    """How many passed, named or not."""
    failed: tuple[str, ...] = ()
    """Tests that failed there, by name."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "verdict": self.verdict,
            "cause": self.cause,
            "passed": self.passed_count,
            "tests": list(self.passed),
            "failed_tests": list(self.failed),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BaseCheck:
        return cls(
            name=str(data["name"]),
            verdict=str(data["verdict"]),
            cause=str(data["cause"]),
            passed=tuple(str(t) for t in data["tests"]),
            passed_count=int(data["passed"]),
            failed=tuple(str(t) for t in data.get("failed_tests", ())),
        )

    @classmethod
    def of(cls, evidence: Evidence) -> BaseCheck:
        cases = evidence.test_cases
        tests = evidence.tests
        if tests is not None and len(cases) < tests.executed:
            # Only some named (unittest without `-v` names its failures alone): a test the
            # change fixed would go unnamed too, so the count is what is held.
            cases = ()
        named = tuple(dict.fromkeys(c.name for c in cases if c.outcome == "passed"))
        count = tests.passed if tests is not None else len(named)
        # Failed, not errored: an error may be a module that did not import at the base
        # (the function the change adds), reported under a name no test has once it does.
        failed = (c.name for c in cases if c.outcome == "failed")
        return cls(
            name=evidence.check.name,
            verdict=evidence.verdict.value,
            cause=evidence.cause.value,
            passed=named,
            passed_count=max(count, len(named)),
            failed=tuple(n for n in dict.fromkeys(failed) if n not in named),
        )


@dataclass(frozen=True, slots=True)
class BaseTests:
    """The base's tests held against the change's run: the report record's `base_tests`."""

    base: str
    """The base as it was asked for (`--base`)."""
    checks: tuple[BaseCheck, ...] = ()
    not_executed: tuple[NotExecuted, ...] = ()
    duration_s: float = 0.0
    """Wall time spent getting the base's outcomes (near 0 when they were cached)."""
    cached: bool = False
    unavailable: str | None = None
    """Why the base's tests could not be run or read; nothing was compared then."""

    def problems(self) -> tuple[str, ...]:
        """One line per test that keeps the change from VERIFIED (for `aggregate`)."""
        return tuple(n.describe() for n in self.not_executed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "base": self.base,
            "checks": [c.to_dict() for c in self.checks],
            "not_executed": [n.to_dict() for n in self.not_executed],
            "duration_s": round(self.duration_s, 6),
            "cached": self.cached,
            "unavailable": self.unavailable,
        }


def compare(base: Sequence[BaseCheck], change: Sequence[Evidence]) -> tuple[NotExecuted, ...]:
    """Every test that passed or failed in `base` and that the change's evidence does not
    show run.

    Matched by check name, then by test name; a base check without per-test names is
    matched by its count of passing tests, against the change's count of tests run: one
    that fails now ran."""
    by_name = {e.check.name: e for e in change if e.check.kind is Kind.TEST}
    found: list[NotExecuted] = []
    for at_base in base:
        evidence = by_name.get(at_base.name)
        if not at_base.passed and not at_base.failed:
            ran = evidence.tests.executed if evidence is not None and evidence.tests else 0
            if ran < at_base.passed_count:
                lost = at_base.passed_count - ran
                test = f"{lost} of its {at_base.passed_count} passing tests"
                found.append(NotExecuted(at_base.name, test, "missing"))
            continue
        outcomes: dict[str, str] = {}
        for case in evidence.test_cases if evidence is not None else ():
            # A name reported twice (a rerun) counts as run if it ran once.
            if outcomes.get(case.name) not in _RAN:
                outcomes[case.name] = case.outcome
        at_base_names = {*at_base.passed, *at_base.failed}
        renamed = Counter(
            _without_indices(name)
            for name, outcome in outcomes.items()
            if outcome in _RAN and name not in at_base_names
        )
        for test in (*at_base.passed, *at_base.failed):
            outcome = outcomes.get(test)
            if outcome is None and renamed[_without_indices(test)] > 0:
                renamed[_without_indices(test)] -= 1  # run under another index: one for one
                continue
            if outcome not in _RAN:
                now = "missing" if outcome is None else outcome
                found.append(NotExecuted(at_base.name, test, now))
    return tuple(found)


#: A part of a pytest parameter id pytest made from an argument's name and the parameter
#: set's index (`expected12`), for a value it cannot spell.
_INDEXED_PART = re.compile(r"(?<=[\[-])([A-Za-z_]\w*?)\d+(?=[-\]])")


#: The line a Rust doc-test starts on, in its name (`src/lib.rs - AutoCfg::probe_raw (line 371)`).
_DOC_TEST_LINE = re.compile(r" \(line \d+\)$")


def _without_indices(name: str) -> str:
    """`name` with the indices of its parameter id left out (`test_parse[4-19-expected#]`):
    the index of a case is its place in the parameter list, and a list built from a set
    (isodate's TEST_CASES) is in another order in each process, as the hash seed is. A
    doc-test's line goes too: a comment added above it moves it (autocfg's probe_raw)."""
    name = _DOC_TEST_LINE.sub(" (line #)", name)
    head, bracket, params = name.partition("[")
    return head + _INDEXED_PART.sub(r"\1#", bracket + params) if bracket else name


#: The plan's test checks for a workspace root.
TestChecks = Callable[[Path], Sequence[Check]]
#: Builds the environment the base's tests run in, in its session (the install steps of
#: `--install`); returns the variables its checks run with, raises when it could not.
Prepare = Callable[[Any], Mapping[str, str]]


def base_tests(
    root: Path,
    base: str,
    change: Sequence[Evidence],
    *,
    sandbox: str,
    test_checks: TestChecks,
    tool_paths: Sequence[str] = (),
    expires: float | None = None,
    cache_dir: str | None = None,
    use_cache: bool = True,
    prepare: Prepare | None = None,
) -> BaseTests:
    """Run the base's test checks at `base` (a commit of the repository at `root`) and
    hold them against the change's evidence `change`.

    `test_checks` plans the base's test checks for the base's workspace; `cache_dir`:
    the verdict cache's directory (None: the default), whose `base-tests` store remembers
    the base's outcomes unless `use_cache` is False; `prepare`: builds the base's own
    environment first (`--install`: the change's tests ran in one built from the base's
    manifests, and so must the base's, or their tests differ by what is installed). Never
    raises: what goes wrong is `unavailable`, with the reason."""
    started = time.monotonic()
    try:
        checks, cached = _base_checks(
            root,
            base,
            sandbox=sandbox,
            test_checks=test_checks,
            tool_paths=tool_paths,
            expires=expires,
            store=_store_at(cache_dir) if use_cache else None,
            prepare=prepare,
        )
    except Exception as exc:  # the base could not be run: say why, compare nothing
        return BaseTests(
            base,
            duration_s=time.monotonic() - started,
            unavailable=f"the base's tests could not be run: {type(exc).__name__}: {exc}",
        )
    elapsed = time.monotonic() - started
    readable = tuple(c for c in checks if c.passed_count > 0 or c.verdict in ("pass", "fail"))
    unread = [c for c in checks if c not in readable]
    unavailable = None
    if unread:
        names = ", ".join(f"{c.name} ({c.cause})" for c in unread)
        unavailable = f"at the base, no test outcome could be read from {names}"
    return BaseTests(
        base,
        checks=checks,
        not_executed=compare(readable, change),
        duration_s=elapsed,
        cached=cached,
        unavailable=unavailable,
    )


def _base_checks(
    root: Path,
    base: str,
    *,
    sandbox: str,
    test_checks: TestChecks,
    tool_paths: Sequence[str],
    expires: float | None,
    store: Path | None,
    prepare: Prepare | None = None,
) -> tuple[tuple[BaseCheck, ...], bool]:
    """The base's test checks as they ran at the base (or as the cache remembers them)."""
    from assay.session import open_session

    # `none` runs in place, so it cannot hold a commit; the base is trusted: a copy will do.
    backend = "local" if sandbox == "none" else sandbox
    with open_session(backend, root, tool_paths=tool_paths, commit=base) as session:
        if session.refusal is not None:
            raise RuntimeError(session.refusal.reason)
        if prepare is not None:
            return _installed_base_checks(session, test_checks, tool_paths, expires, store, prepare)
        checks = tuple(c for c in test_checks(session.root) if c.kind is Kind.TEST)
        if not checks:
            return (), False
        checkers = session.identify(checks)
        key = _cache_key(root, session, checks, checkers) if store is not None else None
        remembered = _cached(store, key)
        if remembered is not None:
            return remembered, True
        evidence = session.run(checks, expires=expires)
        found = tuple(BaseCheck.of(e) for e in evidence)
        if all(c.verdict in ("pass", "fail") for c in found):
            # Only outcomes a rerun would repeat: never a timeout or a missing tool.
            _store(store, key, found)
        return found, False


def _installed_base_checks(
    session: Any,
    test_checks: TestChecks,
    tool_paths: Sequence[str],
    expires: float | None,
    store: Path | None,
    prepare: Prepare,
) -> tuple[tuple[BaseCheck, ...], bool]:
    """The base's test checks run in an environment `prepare` builds in its workspace,
    remembered under the base's tree and the toolchains that build it (looked up before
    building it: a fresh environment is never the same files twice)."""
    key = _installed_key(session, tool_paths) if store is not None else None
    remembered = _cached(store, key)
    if remembered is not None:
        return remembered, True
    env = prepare(session)
    checks = tuple(c for c in test_checks(session.root) if c.kind is Kind.TEST)
    if not checks:
        return (), False
    evidence = session.run(checks, env=dict(env), expires=expires)
    found = tuple(BaseCheck.of(e) for e in evidence)
    if all(c.verdict in ("pass", "fail") for c in found):
        _store(store, key, found)
    return found, False


def _installed_key(session: Any, tool_paths: Sequence[str]) -> str | None:
    """What the base's outcomes in an environment of its own depend on: the commit's
    tree, the toolchains shown to its install and the sandbox; None when the tree cannot
    be named."""
    workspace = session.workspace
    if workspace is None or workspace.base_commit is None:
        return None
    from assay.cache import CacheError, workspace_digest
    from assay.probe_record import fingerprint

    try:
        digest = workspace_digest(workspace.path, times=False)
        tools = {path: fingerprint(path) for path in sorted(tool_paths)}
    except (CacheError, OSError):
        return None
    material = json.dumps(
        [BASE_CACHE_SCHEMA, "installed", digest, tools, session.name], sort_keys=True, default=str
    )
    return hashlib.sha256(material.encode()).hexdigest()


def _store_at(cache_dir: str | None) -> Path:
    """The base outcomes' own store beside the verdict cache: they are not verdicts, and
    the verdict cache stays untouched by a run with a base."""
    from assay.state_dir import default_cache_dir

    return Path(cache_dir or default_cache_dir()) / "base-tests"


def _cache_key(
    source: Path, session: Any, checks: Sequence[Check], checkers: Sequence[Any]
) -> str | None:
    """What the base's outcomes depend on: the commit's tree, the environments linked into
    its workspace, the checks, the toolchains that run them and the sandbox; None when a
    toolchain is missing (nothing worth remembering) or the tree cannot be named."""
    workspace = session.workspace
    if workspace is None or workspace.base_commit is None or None in checkers:
        return None
    from assay.cache import CacheError, cache_key, environment_fingerprint, workspace_digest

    try:
        # The commit's files (a linked environment is a link there), and a fingerprint of
        # each environment it links, taken where the link leads.
        digest = workspace_digest(workspace.path, times=False)
        linked = workspace.provisioned.linked if workspace.provisioned else ()
        environments = {
            rel: environment_fingerprint(source, rel).hex() for rel in linked if rel != ".git"
        }
    except (CacheError, OSError):
        return None
    plan = {
        "schema": BASE_CACHE_SCHEMA,
        "checks": [c.to_dict() for c in checks],
        "environments": environments,
    }
    from assay.environment import inherited_by_checks

    key = cache_key(
        digest,
        plan,
        [c for c in checkers if c],
        session.name,
        workspace_path=workspace.path,
        host_env=inherited_by_checks(session.sandbox.name),
    )
    return hashlib.sha256(f"{BASE_CACHE_SCHEMA}:{key}".encode()).hexdigest()


def _cached(store: Path | None, key: str | None) -> tuple[BaseCheck, ...] | None:
    if store is None or key is None:
        return None
    from assay.cache import CacheError, VerdictCache

    try:
        hit = VerdictCache(store).get(key)
        if hit is None or hit.report.get("schema") != BASE_CACHE_SCHEMA:
            return None
        return tuple(BaseCheck.from_dict(c) for c in hit.report["checks"])
    except (CacheError, OSError, KeyError, TypeError, ValueError):
        return None  # an unreadable entry is a miss


def _store(store: Path | None, key: str | None, checks: tuple[BaseCheck, ...]) -> None:
    if store is None or key is None:
        return
    from assay.cache import CacheError, VerdictCache

    document = {"schema": BASE_CACHE_SCHEMA, "checks": [c.to_dict() for c in checks]}
    try:
        VerdictCache(store).put(key, document)
    except (CacheError, OSError):
        pass

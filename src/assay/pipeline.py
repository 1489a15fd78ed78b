"""The pipeline behind `assay verify`: digest -> [remembered plan -> early cache key ->]
discover -> plan -> early cache key -> session [-> install -> plan again] -> identify ->
cache -> run the plan's stages -> aggregate.

A cache hit under the early key (`assay.early_key`: the tree, the plan, the options and
what decides each checker's version, all read without running anything) returns before
any sandbox is made; with the plan the tree was last given (`assay.plan_memo`), before
anything is discovered or planned, and so without loading the modules that do it.

With `--base`, the base commit's tree is read first (tampering signals, and the paths its
configuration adds to the protected ones). With `--protect` the plan is the base's (the
change's configuration, Makefile or scripts never decide what runs), the session restores
the protected files from it, and they are restored again after the install steps and
before every stage: whatever of the change ran meanwhile (its setup.py, a build step, a
tool's probe) cannot leave them rewritten; what had to be put back is recorded
(`RunRecord.rewritten`). This module owns sequencing only; the session (`assay.session`) owns the sandbox, and
`aggregate` owns every status rule. `verify` is fail-closed as a library: unusable
options, path or configuration raise `VerifyUsageError` (nothing ran); anything else
that goes wrong becomes an INDETERMINATE report naming its cause, never a traceback
and never a pass.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import re
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.errors import AssayError
from assay.evidence import Check, CheckerId, Diagnostic, Evidence
from assay.progress import Progress
from assay.report import Report, aggregate
from assay.run_record import CacheHit, Rewritten, RunRecord
from assay.scratch import sweep_stale, temporary_scratch
from assay.verdict import Cause, Kind, Verdict

if TYPE_CHECKING:
    from assay.cache import CachedReport, VerdictCache
    from assay.code_rewrites import Stamp
    from assay.installed_tools import InstalledTools
    from assay.package_managers import Provided
    from assay.plan import Plan, Stage
    from assay.plan_memo import RememberedPlan
    from assay.protect import ProtectedSet
    from assay.session import Restore, Session
    from assay.tool_era import Dating


class VerifyUsageError(AssayError):
    """Nothing was run: the path, the options or the configuration are unusable (exit code 2)."""


#: The backends `VerifyOptions.sandbox` names (as `--sandbox` spells them).
SANDBOXES = ("auto", "bwrap", "local", "none")
#: The most reruns a failing test gets (a task's `rerun_failures` has the same bound): a
#: caller's 10**30 kept a failing test running again until its deadline, or for ever.
MAX_RERUN_FAILURES = 10


@dataclass(frozen=True, slots=True)
class VerifyOptions:
    """What `assay verify` was asked to do. Checked when built: an unusable combination
    raises `VerifyUsageError` here, before anything runs."""

    timeout_s: float | None = None
    """Per-check deadline in seconds (> 0); None: configured, else the planner's default."""
    sandbox: str = "auto"
    """One of `SANDBOXES`."""
    use_cache: bool = True
    base: str | None = None
    """A git ref to compare the change against (tampering signals)."""
    protect: bool = False
    """Run in a fresh workspace with protected files restored from `base`."""
    kinds: frozenset[Kind] | None = None
    """Only these kinds (given as `Kind`s or their values); None: all."""
    cache_dir: str | None = None
    install: bool = False
    """Run the ecosystem's install steps first (network on for them only), for a fresh clone."""
    install_commands: tuple[str, ...] = ()
    """With `install`: shell commands run after those steps, each in the sandbox with the
    network on, the project's `.venv/bin` first on PATH (a task's own set-up, `assay.eval`)."""
    deadline_s: float | None = None
    """A budget for the whole verification (> 0 s); each check's own deadline is cut to what is left."""
    all_tests: bool = False
    """Run every test, not stopping at the first failure (`pytest -x` is the quick gate's
    fast path); always so with `base`, where every test's outcome is compared."""
    canaries: bool | None = None
    """Plant canary tests (one must fail, one must pass) in every test run, in the workspace
    copy, to prove its report (`assay.canaries`); None: with `protect`, where the code
    under test is not trusted to leave its own report alone."""

    rerun_failures: int = 0
    """Run a failed test check's failing tests again, up to this many times, each in a fresh
    process (`assay.reruns`): one that passes on a rerun is flaky, and a check whose every
    failure is flaky is INDETERMINATE, naming them. 0: no reruns."""
    rerun_only: Callable[[str], bool] | None = None
    """Of the failing tests, only those this says yes to (given the name their runner
    reported) are run again; None: every one. A grader's choice, used with `base`, which
    never reads the verdict cache: it is no part of a cache key."""

    @property
    def plants_canaries(self) -> bool:
        return self.protect if self.canaries is None else self.canaries

    def __post_init__(self) -> None:
        for name in ("timeout_s", "deadline_s"):
            _check_seconds(name, getattr(self, name))
        if self.sandbox not in SANDBOXES:
            raise VerifyUsageError(
                f"unknown sandbox {self.sandbox!r}: choose one of {', '.join(SANDBOXES)}"
            )
        for name in ("use_cache", "protect", "install", "all_tests"):
            if not isinstance(getattr(self, name), bool):
                raise VerifyUsageError(f"{name} must be True or False, got {getattr(self, name)!r}")
        for name in ("base", "cache_dir"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise VerifyUsageError(f"{name} must be a non-empty string or None, got {value!r}")
        if (
            isinstance(self.rerun_failures, bool)
            or not isinstance(self.rerun_failures, int)
            or not 0 <= self.rerun_failures <= MAX_RERUN_FAILURES
        ):
            raise VerifyUsageError(
                f"rerun_failures must be a whole number from 0 to {MAX_RERUN_FAILURES}, "
                f"got {self.rerun_failures!r}"
            )
        if not isinstance(self.install_commands, tuple) or not all(
            isinstance(c, str) and c.strip() for c in self.install_commands
        ):
            raise VerifyUsageError("install_commands must be a tuple of non-empty strings")
        if self.install_commands and not self.install:
            raise VerifyUsageError("install_commands run with install only")
        if self.canaries is not None and not isinstance(self.canaries, bool):
            raise VerifyUsageError(f"canaries must be True, False or None, got {self.canaries!r}")
        if self.canaries and self.sandbox == "none":
            raise VerifyUsageError(
                "canaries need a sandbox that works on a copy (auto, bwrap or local): "
                "with --sandbox none they would be written into your tree"
            )
        if self.kinds is not None:
            object.__setattr__(self, "kinds", _kinds(self.kinds))
        if self.protect and not self.base:
            raise VerifyUsageError(
                "--protect needs --base REF: the protected files are restored from it"
            )
        if self.protect and self.sandbox == "none":
            # `none` runs in place: restoring the base's files would overwrite the user's tree.
            raise VerifyUsageError(
                "--protect needs a sandbox that works on a copy (auto, bwrap or local): "
                "with --sandbox none it would overwrite the files in your tree"
            )


def _check_seconds(name: str, value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise VerifyUsageError(f"{name} must be a number of seconds or None, got {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise VerifyUsageError(f"{name} must be a finite number of seconds > 0, got {value!r}")


def _kinds(kinds: object) -> frozenset[Kind]:
    if isinstance(kinds, str) or not hasattr(kinds, "__iter__"):
        raise VerifyUsageError(f"kinds must be a set of kinds, got {kinds!r}")
    chosen: set[Kind] = set()
    for kind in kinds:
        try:
            chosen.add(Kind(kind))
        except ValueError:
            known = ", ".join(k.value for k in Kind)
            raise VerifyUsageError(f"unknown kind {kind!r}: choose from {known}") from None
    if not chosen:
        raise VerifyUsageError("kinds is empty: leave it None to check every kind")
    return frozenset(chosen)


def make_plan(
    path: str | Path, options: VerifyOptions, *, installed: str | Path | None = None
) -> Plan:
    """Discover and plan; raises `VerifyUsageError` when nothing can be planned at all.

    `installed`: the tree whose installed environment (in-tree virtualenv,
    node_modules/.bin) the commands will use, when it is not `path` (`base_plan`)."""
    from assay.discovery import discover
    from assay.plan import PlanOptions, plan

    plan_options = PlanOptions(**{**_planning(options), "kinds": options.kinds})
    found = plan(discover(Path(path), installed=installed), plan_options)
    if found.root_problem:
        raise VerifyUsageError(found.root_problem)
    if found.config_error:
        raise VerifyUsageError(f"assay configuration error: {found.config_error}")
    return found


def _planning(options: VerifyOptions) -> dict[str, Any]:
    """Every option that shapes the plan (`PlanOptions`'s fields), JSON-able: it keys the
    plan memo (`assay.plan_memo`) as well as making the plan."""
    # Asking for some kinds only, without tests, is asking for a verdict on those kinds.
    without_tests = options.kinds is not None and Kind.TEST not in options.kinds
    return {
        "timeout_s": options.timeout_s,
        "fail_fast": not (options.all_tests or options.base),
        "kinds": sorted(k.value for k in options.kinds) if options.kinds is not None else None,
        "require_tests": False if without_tests else None,
    }


def base_plan(base: Path, root: Path, options: VerifyOptions, *, installed: Path) -> Plan:
    """The plan `--protect` runs: made from the base commit's tree `base` (its assay
    configuration, manifests, Makefile, scripts and CI), never from the change's, and run
    in the change's workspace: its root is the change's `root`, its commands use the
    environment installed in `installed`, and its cwds stay relative to the workspace."""
    try:
        found = make_plan(base, options, installed=installed)
    except VerifyUsageError as exc:
        raise VerifyUsageError(f"at --base {options.base}: {exc}") from None
    return replace(found, root=str(root), checks=_compiled_as_changed(found, root))


def _compiled_as_changed(the_plan: Plan, root: Path) -> tuple[Check, ...]:
    """The base plan's checks, assay's own compileall (not the project's configuration:
    what it checks is what the tree holds) checking the change's packages and modules at
    the root, which include those the change adds."""
    from assay.discovery.fallback import compile_targets, retargeted_compile
    from assay.discovery.files import RepoFiles

    if the_plan.env is None or not any(c.tool == "compileall" for c in the_plan.checks):
        return the_plan.checks
    targets = compile_targets(RepoFiles(str(root)), the_plan.env)
    checks = []
    for check in the_plan.checks:
        argv = retargeted_compile(check.argv, targets) if check.tool == "compileall" else None
        checks.append(replace(check, argv=argv) if argv is not None else check)
    return tuple(checks)


def verify(
    path: str | Path, options: VerifyOptions | None = None, *, progress: Progress | None = None
) -> Report:
    """Verify the repository at `path` and return the report.

    Raises only `VerifyUsageError` (nothing ran: the path, the options, the configuration
    or `base` are unusable). Anything else that goes wrong -- a sandbox error, a file that
    could not be restored, a bug -- is an INDETERMINATE report whose note and
    `record.error` name it. First removes what runs that died left behind
    (`assay.scratch`); `record.swept` names it. `progress` is told of each check as it
    starts and ends (`assay.progress`).
    """
    if not isinstance(path, str | os.PathLike):
        raise VerifyUsageError(f"path must be a directory path, got {path!r}")
    if options is not None and not isinstance(options, VerifyOptions):
        raise VerifyUsageError(f"options must be VerifyOptions, got {type(options).__name__}")
    swept: list[str] = []
    try:
        swept = sweep_stale()
        report = _verify(Path(path), options or VerifyOptions(), progress)
    except VerifyUsageError:
        raise
    except Exception as exc:  # fail closed: never a traceback, never a pass
        report = internal_error_report(exc)
    if swept:
        report = replace(report, record=replace(report.record, swept=tuple(swept)))
    return report


def internal_error_report(exc: BaseException) -> Report:
    """The INDETERMINATE report for a run assay could not finish; the traceback goes to
    stderr only when ASSAY_DEBUG is set."""
    if os.environ.get("ASSAY_DEBUG"):
        import traceback

        traceback.print_exception(exc)
    error = (
        f"assay could not finish ({type(exc).__name__}: {exc}); nothing was verified. "
        "Set ASSAY_DEBUG=1 to see where, and report it."
    )
    record = RunRecord(error=error)
    return aggregate([], run_errors=record.run_errors, record=record)


def _verify(path: Path, options: VerifyOptions, progress: Progress | None = None) -> Report:
    expires = None if options.deadline_s is None else time.monotonic() + options.deadline_s
    try:
        root = path.resolve()
    except RuntimeError:  # Python 3.11's word for a symlink loop on the way
        raise VerifyUsageError(f"{path}: a symlink loop, not a directory") from None
    if options.base is not None:
        from assay.repo_root import linked_base_refusal

        if (refusal := linked_base_refusal(path)) is not None:
            raise VerifyUsageError(refusal)
    named_base = options.base
    if options.base is not None:
        # Resolved once, before anything of the change runs: the base's tree, its plan and
        # its tests are then all of one commit, whatever a ref names meanwhile.
        options = replace(options, base=_base_commit(root, options.base))
    with _base_tree(root, options.base) as base_dir:
        protected = _protected(base_dir, options) if base_dir is not None else None
        restore = None
        if options.protect and base_dir is not None and protected is not None:
            from assay.session import Restore

            restore = Restore(base_dir, protected)
        # Taken before planning and the workspace's copy and compared after: a tree edited
        # meanwhile must not have its new key paired with a verdict on the old copy.
        digest = _source_digest(root, options)
        if digest is not None and (hit := _remembered_hit(root, digest, options)) is not None:
            return hit  # nothing was discovered, planned, provisioned, copied or probed
        if restore is not None:
            the_plan = base_plan(restore.base, root, options, installed=root)
            protected = _with_named_settings(restore.protected, the_plan, restore.base)
            restore = replace(restore, protected=protected)
        else:
            the_plan = make_plan(root, options)
        manager = _package_manager(restore.base if restore is not None else root, options)
        the_plan = _with_package_manager(the_plan, manager)
        if not the_plan.checks:
            return aggregate([], plan=the_plan.to_dict(), empty_note=the_plan.empty_note)
        tampering = None
        if base_dir is not None and protected is not None:
            tampering = _tampering(base_dir, root, protected, the_plan)
        early = _early_key(root, the_plan, options, digest)
        if early is not None and (hit := _early_hit(early, the_plan, options)) is not None:
            if hit.record.cached is not None and digest == _source_digest(root, options):
                _remember_plan(root, digest, the_plan, options, hit.record.cached.key)
            return hit  # nothing was provisioned, copied or probed
        from assay.session import open_session, shown_toolchains

        tools = shown_toolchains(the_plan.checks, root)
        if manager is not None and manager.bin_dir is not None:  # the install's too
            tools = (*tools, *(str(p) for p in manager.bin_dir.iterdir()))
        mypy_cache = _mypy_cache(root, the_plan, options)
        go_cache = _go_cache(root, the_plan, options)
        writable = tuple(c for c in (mypy_cache, go_cache) if c is not None)
        with open_session(
            options.sandbox, root, tool_paths=tools, restore=restore, writable=writable
        ) as session:
            run = _Run(
                root,
                options,
                expires,
                digest,
                restore,
                progress,
                early,
                mypy_cache,
                go_cache,
                manager,
            )
            ran = run.in_session(session, the_plan)
    if ran.cached is not None:
        return ran.cached
    the_plan = ran.plan
    record = replace(
        session.record,
        base=_base_named(named_base, options.base),
        tampering=tampering,
        base_tests=_base_tests(root, options, ran.evidence, tools, expires),
        install=ran.install,
        skipped=tuple(ran.skipped),
        rewritten=tuple(ran.rewritten),
    )
    report = aggregate(
        ran.evidence,
        require_tests=the_plan.require_tests,
        missing_kinds=the_plan.missing,
        config_errors=the_plan.errors,
        run_errors=(*record.run_errors, *the_plan.unplanned),
        plan=the_plan.to_dict(),
        record=record,
    )
    if ran.cache is not None and ran.key is not None:
        stored = _cache_store(ran.cache, ran.key, report, alias=ran.alias)
        if stored and ran.alias is not None:
            _remember_plan(root, digest, the_plan, options, ran.key)
    return report


def _base_tests(
    root: Path,
    options: VerifyOptions,
    evidence: list[Evidence],
    tools: tuple[str, ...],
    expires: float | None,
) -> dict[str, Any] | None:
    """With a base, its test checks run at the base and held against the change's tests
    (`assay.base_tests`); None without a base, or when no test of the change ran at all."""
    if options.base is None or not any(
        e.check.kind is Kind.TEST and e.result is not None for e in evidence
    ):
        return None
    from assay.base_tests import base_tests

    tests_only = replace(options, kinds=frozenset({Kind.TEST}))
    return base_tests(
        root,
        options.base,
        evidence,
        sandbox=options.sandbox,
        test_checks=lambda at: make_plan(at, tests_only).checks,
        tool_paths=tools,
        expires=expires,
        cache_dir=options.cache_dir,
        use_cache=options.use_cache,
        prepare=(
            functools.partial(_install_at_base, root, options, expires=expires)
            if options.install
            else None
        ),
    ).to_dict()


def _install_at_base(
    root: Path, options: VerifyOptions, session: Session, *, expires: float | None = None
) -> dict[str, str]:
    """The base's environment built in its workspace as the change's was (`--install`),
    within the run's overall deadline `expires`: its variables, or `RuntimeError` naming
    the step that did not succeed."""
    from assay.tools import dependency_caches

    why = _discard_environments(session, protect=options.protect)
    env = dependency_caches(session.root)
    manager = _package_manager(session.root, options)
    steps = _install(
        session,
        env,
        why=why,
        commands=options.install_commands,
        dated_from=_dating(root, options, session.root),
        package_manager=manager,
        expires=expires,
    )
    failed = next((e for e in steps if not e.passed), None)
    if failed is not None:
        raise RuntimeError(f"its install step {failed.check.name} did not succeed ({failed.cause})")
    return env


def _dating(root: Path, options: VerifyOptions, base_files: Path | None) -> Path | Dating:
    """Whose date decides the releases of the tools nothing pins: the source tree's, or
    under `--base` the base's (its files, and its commit's date, read hashed): the change's
    own commit date is its author's to choose."""
    if options.base is None or base_files is None:
        return root
    from assay.tool_era import Dating

    return Dating(base_files, root, options.base)


def _protected(base_dir: Path, options: VerifyOptions) -> ProtectedSet:
    """Every ecosystem's protected paths, plus those the base's own configuration names
    (`protect`), where the base's pytest configuration keeps its tests (`testpaths`,
    `python_files`), the setup files its JS runners' configuration names, the settings
    files its pre-commit hooks name, the files its TypeScript configurations and its linters'
    and type checkers' settings extend, the modules its pytest configuration loads as plugins,
    the `__init__.py` files its test modules are imported through, and the data files its
    tests name: the base's, because the change must not choose what
    guards it."""
    from assay.discovery.assay_config import detect
    from assay.discovery.files import RepoFiles
    from assay.discovery.js_runner_setup import js_setup_files
    from assay.discovery.named_settings import hook_config_files
    from assay.discovery.pytest_plugin_modules import pytest_plugin_modules
    from assay.discovery.python import pytest_test_files
    from assay.discovery.settings_extends import extended_settings
    from assay.discovery.tsconfig_extends import extended_configs
    from assay.protect import protected_set
    from assay.test_data import named_test_data
    from assay.test_packages import inits_above_tests

    files = RepoFiles(str(base_dir))
    found = detect(files)
    if found.error:
        raise VerifyUsageError(f"assay configuration error at --base {options.base}: {found.error}")
    named = (
        *(found.config.protect if found.config else ()),
        *pytest_test_files(files),
        *js_setup_files(files),
        *extended_configs(files),
        *extended_settings(files),
        *pytest_plugin_modules(files, own=_own_pytest_plugins(base_dir)),
        *hook_config_files(base_dir),
    )
    tests = protected_set(extra=named)
    named = (*named, *inits_above_tests(base_dir, tests))
    return protected_set(extra=(*named, *named_test_data(base_dir, tests)))


def _own_pytest_plugins(base_dir: Path) -> frozenset[str]:
    """The modules of the `pytest11` entry points the base declares for itself: the
    project's own plugin, which is its code (`assay.own_plugins`), not its tests'."""
    from assay.base_requirements import declared_in_tree
    from assay.install_records import entry_point_module

    entry_points = declared_in_tree(base_dir).entry_points
    return frozenset(entry_point_module(v) for group, _, v in entry_points if group == "pytest11")


def _with_named_settings(protected: ProtectedSet, the_plan: Plan, base_dir: Path) -> ProtectedSet:
    """`protected` with the settings files the base's planned commands name by an option
    (`mypy --config-file ci/types.cfg` in a CI step: a change set `ignore_errors` there) or
    in the options their environment gives pytest (`PYTEST_ADDOPTS`), and the modules of
    the tree their pytest loads as plugins (`-p support.cases`, `PYTEST_PLUGINS`)."""
    from assay.discovery.files import RepoFiles, UnreadableFile
    from assay.discovery.named_settings import check_settings
    from assay.discovery.pytest_plugin_modules import check_plugin_modules

    files, own = RepoFiles(str(base_dir)), _own_pytest_plugins(base_dir)

    def read(rel: str) -> str | None:
        try:
            return files.read_text(rel)
        except UnreadableFile:
            return None

    named = [p for c in the_plan.checks for p in check_settings(c.argv, c.env, c.cwd, read)]
    for c in the_plan.checks:  # and the pytest plugins they load from the tree
        named += check_plugin_modules(files, c.argv, c.env, c.cwd, own)
    fresh = tuple(p for p in dict.fromkeys(named) if p not in protected.patterns)
    return replace(protected, patterns=(*protected.patterns, *fresh)) if fresh else protected


@dataclass
class _SessionResult:
    """What running in the session produced (or the cached report that made it unnecessary)."""

    evidence: list[Evidence]
    skipped: list[str]
    plan: Plan
    install: tuple[Evidence, ...] | None = None
    cached: Report | None = None
    cache: VerdictCache | None = None
    key: str | None = None
    alias: str | None = None
    """The early key (`assay.early_key`) to name the report stored under `key` too."""
    rewritten: list[Rewritten] = field(default_factory=list)


@dataclass
class _Run:
    """One verification's fixed inputs, for the steps that happen inside its session."""

    root: Path
    options: VerifyOptions
    expires: float | None = None
    """Monotonic time at which the overall deadline passes (None: no overall deadline)."""
    digest: str | None = None
    """The source tree's digest before its workspace was made (None: no caching)."""
    restore: Restore | None = None
    """`--protect`: the base's tree and the protected paths, restored again in the session."""
    progress: Progress | None = None
    """Told of each check of the plan as it starts and ends."""
    early: _EarlyKey | None = None
    """The key looked up before the session, with what it was made of."""
    mypy_cache: Path | None = None
    """The repository's warm mypy cache (`assay.mypy_cache`), writable in the session."""
    go_cache: Path | None = None
    """The repository's warm Go build cache (`assay.go_cache`), writable in the session."""
    package_manager: Provided | None = None
    """The project's pnpm or yarn, when the machine has none (`assay.package_managers`)."""
    made_env: str | None = None
    """The environment the install steps made in the workspace (`.venv`), if they made one."""

    def in_session(self, session: Session, the_plan: Plan) -> _SessionResult:
        """Install (if asked), identify every tool, consult the cache, then run the checks."""
        if session.refusal is not None:
            return _SessionResult(session.run(the_plan.checks), [], the_plan)
        env: dict[str, str] = {}
        installed: tuple[Evidence, ...] | None = None
        tools: InstalledTools | None = None
        rewritten: list[Rewritten] = []
        unserved: list[Evidence] = []  # failed steps only some checks needed (`served_checks`)
        left_out: list[str] = []
        if self.options.install:
            rebuilt = _discard_environments(session, protect=self.options.protect)
            from assay.tools import dependency_caches

            env = dependency_caches(session.root)
            tools = self._installed_tools(session)
            installed = tuple(
                _install(
                    session,
                    env,
                    why=rebuilt,
                    commands=self.options.install_commands,
                    dated_from=_dating(
                        self.root, self.options, self.restore.base if self.restore else None
                    ),
                    package_manager=self.package_manager,
                    installed_tools=tools,
                    expires=self.expires,
                )
            )
            self._put_back(session, "the install steps", rewritten)
            failed = [e for e in installed if not e.passed]
            if any(_serves(e, the_plan) is None for e in failed):
                return self._install_did_not_succeed(session, env, installed, the_plan, rewritten)
            from assay.install import MADE_ENV, MADE_ENV_STEP

            if any(e.check.name == MADE_ENV_STEP for e in installed):
                self.made_env = MADE_ENV
            the_plan = self._plan_again(session)
            if failed:
                # What a failed step served cannot run; the rest can, and the step's failure
                # stands beside theirs: never a pass, FAILED where one of them fails.
                serves = {e.check.name: _serves(e, the_plan) or frozenset() for e in failed}
                served = frozenset().union(*serves.values())
                left_out = [c.name for c in the_plan.checks if c.name in served]
                kept = tuple(c for c in the_plan.checks if c.name not in served)
                the_plan = replace(the_plan, checks=kept)
                root, manager = session.root, self.package_manager
                unserved = [
                    _install_failed(e, root, manager, _needing(serves[e.check.name]))
                    for e in failed
                ]
        if self.options.protect:
            from assay.environment_proof import protect_environment, uses_python
            from assay.npm_install_proof import hold_npm_install

            base = self.options.base
            npm = hold_npm_install(session, installed or (), self.root, base)
            env.update(protect_environment(session, the_plan.checks, self.root, base, npm))
            if tools is not None:
                python_checks = [c.name for c in the_plan.checks if uses_python(c)]
                held = tools.hold_unproven(session.unproven, python_checks)
                environment = {**(session.record.environment or {}), "installed_tools": held}
                session.record = replace(session.record, environment=environment)
        checkers = session.identify(the_plan.checks)
        cache, key = _cache_lookup(
            self.root, self.digest, the_plan, self.options, checkers, session
        )
        if unserved:
            cache, key = None, None  # a verdict on part of the plan is no answer for it
        alias = None
        if cache is not None and key is not None:
            alias = _still_early_key(self.early, self.root, the_plan, self.options)
            hit = _cached_report(cache, key, the_plan, self.options.rerun_failures)
            if hit is not None:
                if alias is not None:
                    _remember_alias(cache, alias, key)
                    _remember_plan(self.root, self.digest, the_plan, self.options, key)
                return _SessionResult([], [], the_plan, cached=hit)
        evidence: list[Evidence] = list(unserved)
        skipped: list[str] = list(left_out)
        self._hand_over_caches(session)
        compile_after = self._place_bytecode(session, the_plan, checkers)
        ran = "the tool probes"  # a project's own tool answers its --version in the workspace
        for stage in the_plan.stages:
            if any(e.verdict is Verdict.FAIL for e in evidence):
                # A failed build decides the verdict; the rest would only fail after it.
                skipped.extend(c.name for c in stage.checks)
                continue
            self._put_back(session, ran, rewritten)
            ran = f"the {stage.stage.value} stage"
            before = self._stamp(session, stage.stage)
            evidence.extend(
                session.run(
                    self._prepared(session, stage.checks),
                    env=env,
                    expires=self.expires,
                    canaries=self.options.plants_canaries,
                    progress=self.progress,
                )
            )
            self._put_back_code(session, before, ran, rewritten)
        if self.options.rerun_failures and any(e.verdict is Verdict.FAIL for e in evidence):
            from assay.reruns import rerun_failures

            self._put_back(session, ran, rewritten)
            evidence = rerun_failures(
                session,
                evidence,
                self.options.rerun_failures,
                only=self.options.rerun_only,
                env=env,
                expires=self.expires,
                prepare=lambda checks: self._prepared(session, checks),
            )
            ran = "the reruns of failing tests"
        compile_after()
        if installed is not None:
            from assay.classify import after_install

            evidence = [after_install(e) for e in evidence]
        if self.restore is not None and _locks_protected(session):
            from assay.protected_write import refused_protected_write

            protected, root = self.restore.protected, session.root
            evidence = [refused_protected_write(e, protected, root) for e in evidence]
        if installed is not None and _resolved_unlocked(installed):
            evidence = _drift_or_code(session, evidence, env, self.expires)
        if _unplaced_syntax_error(session.root, evidence):
            evidence = _syntax_located(session, evidence, env, self.expires)
        # Looked at once more: a rewrite while the last stage ran is one its verdict saw.
        self._put_back(session, ran, rewritten)
        return _SessionResult(
            evidence,
            skipped,
            the_plan,
            install=installed,
            cache=cache,
            key=key,
            alias=alias,
            rewritten=rewritten,
        )

    def _installed_tools(self, session: Session) -> InstalledTools | None:
        """Under `--protect`, what the tools step installs is held to (`assay.installed_tools`)."""
        if not self.options.protect or session.workspace is None:
            return None
        from assay.install import MADE_ENV
        from assay.installed_tools import InstalledTools

        own = frozenset[str]()
        if self.options.base is not None:
            from assay.base_requirements import declared_by_base

            own = declared_by_base(self.root, self.options.base).projects
        return InstalledTools(session.workspace.path, MADE_ENV, own)

    def _install_did_not_succeed(
        self,
        session: Session,
        env: dict[str, str],
        installed: tuple[Evidence, ...],
        the_plan: Plan,
        rewritten: list[Rewritten],
    ) -> _SessionResult:
        """The checks could not run as planned. Where no step's own output named the code as
        the cause, the compile check runs anyway (`assay.code_does_not_compile`): code of the
        project that does not compile fails it, whatever else the install stopped on."""
        judged = [_install_failed(e, session.root, self.package_manager) for e in installed]
        if not any(e.verdict is Verdict.FAIL for e in judged):
            blamed = self._compiled_anyway(session, env, installed, judged, rewritten)
            if blamed is not None:
                evidence, compiled_plan = blamed
                ran = {e.check.name for e in evidence}
                skipped = [c.name for c in compiled_plan.checks if c.name not in ran]
                return _SessionResult(
                    evidence, skipped, compiled_plan, install=installed, rewritten=rewritten
                )
        skipped = [c.name for c in the_plan.checks]
        return _SessionResult(judged, skipped, the_plan, install=installed, rewritten=rewritten)

    def _compiled_anyway(
        self,
        session: Session,
        env: dict[str, str],
        installed: tuple[Evidence, ...],
        judged: list[Evidence],
        rewritten: list[Rewritten],
    ) -> tuple[list[Evidence], Plan] | None:
        """The install's evidence and the compile check's, with the plan it came from, when
        that check fails on the project's own code; None when it passes, fails only on
        other people's code, or the plan has none. Planned again from what the install
        made, as after a successful one: the compile check then leaves its `.venv` out."""
        from assay.code_does_not_compile import blamed_on_code, compile_checks, own_code_errors
        from assay.install import MADE_ENV, MADE_ENV_STEP
        from assay.tools import DEPENDENCY_DIR

        if any(e.check.name == MADE_ENV_STEP and e.passed for e in installed):
            self.made_env = MADE_ENV  # the check runs in it, and leaves it out, as any check
        try:
            the_plan = self._plan_again(session)
        except VerifyUsageError:
            return None  # the install left a tree that cannot be planned: as it was
        checks = compile_checks(the_plan.checks)
        if not checks:
            return None
        compiled = session.run(
            self._prepared(session, checks), env=env, expires=self.expires, progress=self.progress
        )
        self._put_back(session, "the compile check", rewritten)
        failed = next(
            ((e, own) for e in compiled if (own := own_code_errors(e, (MADE_ENV, DEPENDENCY_DIR)))),
            None,
        )
        if failed is None:
            return None
        failing, errors = failed
        step = next(e for e in installed if not e.passed)
        evidence = blamed_on_code(judged, failing, errors, _how_it_ended(step))
        return evidence, the_plan

    def _hand_over_caches(self, session: Session) -> None:
        """Let this session's sandbox write the warm mypy and Go caches; one it cannot write
        is not named to its tool, which starts cold."""
        if self.mypy_cache is None and self.go_cache is None:
            return
        from assay.sandbox.base import sandbox_uid
        from assay.tool_caches import hand_over

        uid = sandbox_uid(session.sandbox)
        if self.mypy_cache is not None:
            try:
                hand_over(self.mypy_cache, uid)
            except OSError:
                self.mypy_cache = None
        if self.go_cache is not None:
            try:
                hand_over(self.go_cache, uid)
            except OSError:
                self.go_cache = None

    def _place_bytecode(
        self, session: Session, the_plan: Plan, checkers: Sequence[CheckerId | None]
    ) -> Callable[[], object]:
        """Put the kept byte-code of the workspace's modules in place
        (`assay.bytecode_store`); return what compiles, once the checks have run, the
        modules that had none."""
        workspace = session.workspace
        if workspace is None or workspace.provisioned is None or not workspace.owned:
            return lambda: None
        from assay.bytecode_store import compile_until, store_for
        from assay.pytest_bytecode import pass_hook_configured
        from assay.sandbox.base import sandbox_uid

        copied = workspace.provisioned.copied_as
        try:  # only ever a speed-up: the checks compile what they import
            stores = store_for(
                the_plan.checks,
                checkers,
                sandbox=self.options.sandbox,
                judged_against_base=self.options.base is not None or self.options.protect,
                state_dir=self.options.cache_dir,
                pass_hook=lambda: pass_hook_configured(workspace.path, copied, the_plan.checks),
            )
            uid = sandbox_uid(session.sandbox)
            missing = [(store, store.place(workspace.path, copied, uid)) for store in stores]
        except Exception:
            return lambda: None

        def compile_after() -> None:
            with contextlib.suppress(Exception):
                compile_until(missing)

        return compile_after

    def _prepared(self, session: Session, checks: Sequence[Check]) -> Sequence[Check]:
        """`checks` as this session runs them: told of the warm caches, and inside the
        environment the install made, which the linters' walks leave out, as they leave
        out the version file the build backend writes and what the project's pre-commit
        hooks exclude."""
        from assay.tools.pre_commit_excludes import with_hook_exclusions
        from assay.tools.python_version_files import generated_version_files

        checks = with_hook_exclusions(checks, session.root)
        if written := generated_version_files(session.root):
            from assay.installed_env_exclusion import exclude_from_lint_walks

            checks = exclude_from_lint_walks(checks, session.root, written)
        if self.made_env is not None:
            from assay.install import activated
            from assay.installed_env_exclusion import exclude_installed_env

            checks = exclude_installed_env(checks, session.root, self.made_env)
            checks = activated(checks, session.root / self.made_env)
        if self.mypy_cache is not None:
            from assay.mypy_cache import with_mypy_cache

            checks = with_mypy_cache(checks, self.mypy_cache)
        if self.go_cache is not None:
            from assay.go_cache import with_go_cache

            checks = with_go_cache(checks, self.go_cache)
        return checks

    def _plan_again(self, session: Session) -> Plan:
        """The plan once the install steps have run: from the base under `--protect`."""
        if self.restore is not None:
            the_plan = base_plan(self.restore.base, self.root, self.options, installed=session.root)
        else:
            the_plan = make_plan(session.root, self.options)
        return _with_package_manager(the_plan, self.package_manager)

    def _put_back(self, session: Session, ran: str, rewritten: list[Rewritten]) -> None:
        """Under `--protect`, restore the protected files after `ran` (something of the
        change) ran in the workspace, lock them again where the sandbox has a uid of its
        own, and record what had to be put back."""
        if self.restore is None:
            return
        from assay.protected_workspace import lock_protected, restore_again, sandbox_uid

        done = restore_again(session.root, self.restore.base, self.restore.protected)
        if done.restored or done.removed:
            rewritten.append(Rewritten(ran, done.restored, done.removed))
        uid = sandbox_uid(session.sandbox)
        if uid is not None:
            lock_protected(session.root, self.restore.protected, uid)

    def _stamp(self, session: Session, stage: Stage) -> Stamp | None:
        """Under `--protect`, the workspace's files before a stage that is no build, so that
        the change's own code rewritten while it ran is found (`assay.code_rewrites`)."""
        from assay.code_rewrites import stamp
        from assay.plan import Stage

        if self.restore is None or stage is Stage.BUILD:
            return None

        return stamp(session.root)

    def _put_back_code(
        self, session: Session, before: Stamp | None, ran: str, rewritten: list[Rewritten]
    ) -> None:
        """Put back the change's files rewritten since `before`, and record them."""
        if before is None or self.restore is None:
            return
        from assay.code_rewrites import put_back_rewrites

        done, added = put_back_rewrites(session.root, self.root, before, self.restore.protected)
        if done or added:
            rewritten.append(Rewritten(ran, done, (), added))


def _locks_protected(session: Session) -> bool:
    """Whether the session's checks run as a uid of their own, against which protected
    files are locked (`protected_workspace.lock_protected`)."""
    from assay.sandbox.base import sandbox_uid

    return sandbox_uid(session.sandbox) is not None


def _mypy_cache(root: Path, the_plan: Plan, options: VerifyOptions) -> Path | None:
    from assay.mypy_cache import mypy_cache_for

    return mypy_cache_for(
        root,
        the_plan.checks,
        sandbox=options.sandbox,
        judged_against_base=options.base is not None or options.protect,
        state_dir=options.cache_dir,
    )


def _discard_environments(session: Session, *, protect: bool) -> str:
    """Unlink the source's environments the install steps must build anew in the workspace,
    and say why ("" when none is): under `--protect` all of them (the tree's environments
    are not the base's); otherwise the project's own virtualenv when it lacks a tool the
    plan runs, since the user's environment is never installed into."""
    from assay.environment_proof import discard_linked_environments

    if protect:
        discard_linked_environments(session)
        return ""
    from assay.install import incomplete_environment

    incomplete = incomplete_environment(session.root)
    if incomplete is None:
        return ""
    discard_linked_environments(session, only=(incomplete.venv,))
    return incomplete.describe()


def _go_cache(root: Path, the_plan: Plan, options: VerifyOptions) -> Path | None:
    from assay.go_cache import go_cache_for

    return go_cache_for(
        root,
        the_plan.checks,
        sandbox=options.sandbox,
        judged_against_base=options.base is not None or options.protect,
        state_dir=options.cache_dir,
    )


def _install(
    session: Session,
    env: dict[str, str],
    *,
    why: str = "",
    commands: Sequence[str] = (),
    dated_from: Path | Dating | None = None,
    package_manager: Provided | None = None,
    installed_tools: InstalledTools | None = None,
    expires: float | None = None,
) -> list[Evidence]:
    """Run the install steps, then `commands`, one after another, in the sandbox with the
    network on, each cut to what is left of the run's overall deadline `expires` (a
    setup.py that never returns held a `--deadline 90` run for the step's own 900 s);
    `why` is noted on the first step (why an environment had to be built);
    `dated_from`: the source tree, whose date decides the releases of tools nothing pins
    (`assay.tool_era`; the workspace's `.git` may not be readable by assay), or under
    `--base` the base (`_dating`);
    `package_manager`: the project's, from assay's cache, on the steps' PATH;
    `installed_tools` hears of each step that succeeded."""
    from assay.install import command_steps, install_steps, served_checks

    evidence: list[Evidence] = []
    steps = install_steps(session.root, dated_from=dated_from)
    if installed_tools is not None and session.workspace is not None:
        # Under --protect: no script of the tree's runs while node_modules is made.
        from assay.npm_install_proof import scriptless

        steps = [scriptless(step, session.workspace.path) for step in steps]
    if package_manager is not None and package_manager.bin_dir is not None:
        from assay.package_managers import on_path

        steps = on_path(steps, package_manager.bin_dir)
    for step in [*steps, *command_steps(commands)]:
        (done,) = session.run(
            [replace(step, env={**step.env, **env})], online=True, expires=expires
        )
        if done.passed and (fell_back := _fallback_said(done)):
            done = replace(done, note=f"{done.note}; {fell_back}" if done.note else fell_back)
        if why and not evidence:
            done = replace(done, note=f"{done.note}; {why}" if done.note else why)
        evidence.append(done)
        if not done.passed:
            if served_checks(step, ()) is None:
                break  # the whole project needs what it did not install
            continue  # only some checks need it (`served_checks`): the rest can run
        if installed_tools is not None:
            installed_tools.after(step.name)
    return evidence


def _fallback_said(done: Evidence) -> str | None:
    """What a best-effort install step that passed by falling back said on stderr
    (`assay.tools.python.FELL_BACK`), for its note."""
    if done.result is None:
        return None
    from assay.tools.python import FELL_BACK  # loaded by the install already

    found = re.search(f"^{re.escape(FELL_BACK)}(.+)$", done.result.stderr.text, re.MULTILINE)
    return f"best effort: {found.group(1)}" if found else None


def _drift_or_code(
    session: Session, evidence: list[Evidence], env: dict[str, str], expires: float | None
) -> list[Evidence]:
    """`evidence` with each failure that lies only in dependencies resolved today made
    UNVERIFIED (`dependency_drift`), unless the project's own JavaScript does not parse:
    then that decides, and the failures stand (`own_js_syntax`)."""
    from assay.dependency_drift import judged_for_drift

    judged = judged_for_drift(evidence)
    if judged == evidence:
        return judged
    from assay.own_js_syntax import syntax_check, syntax_verdict

    check = syntax_check(session.root)
    if check is None:
        return judged
    (ran,) = session.run([check], env=env, expires=expires)
    failed = syntax_verdict(ran)
    return judged if failed is None else [failed, *evidence]


def _unplaced_syntax_error(root: Path, evidence: Sequence[Evidence]) -> bool:
    """Whether a check of a Node project that did not pass told of a syntax error without
    placing it: mocha and ava blame the test file that imported the broken module, and
    mocha's "Exception during run" read as a failure it did not explain."""
    if not (root / "package.json").is_file():
        return False  # the common case costs one stat
    return any(not e.passed and not e.diagnostics and "SyntaxError" in e.reason for e in evidence)


def _syntax_located(
    session: Session, evidence: list[Evidence], env: dict[str, str], expires: float | None
) -> list[Evidence]:
    """`evidence` led by the project's own file that does not parse, when one does not
    (`own_js_syntax`); as it was when every file parses, or one already leads."""
    from assay.own_js_syntax import CHECK_NAME, syntax_check, syntax_verdict

    check = syntax_check(session.root)
    if check is None or any(e.check.name == CHECK_NAME for e in evidence):
        return evidence
    (ran,) = session.run([check], env=env, expires=expires)
    failed = syntax_verdict(ran)
    return evidence if failed is None else [failed, *evidence]


def _resolved_unlocked(installed: Sequence[Evidence]) -> bool:
    """Whether an install step resolved the Node dependencies without a lockfile."""
    from assay.tools.node import resolved_unlocked

    return any(resolved_unlocked(e.check) for e in installed)


def _package_manager(root: Path, options: VerifyOptions) -> Provided | None:
    """The project's pnpm or yarn when the machine has none (fetched with `--install`)."""
    if not (root / "package.json").is_file():
        return None  # the common case costs one stat, not an import
    from assay.package_managers import provide

    return provide(root, fetch=options.install)


def _with_package_manager(the_plan: Plan, manager: Provided | None) -> Plan:
    if manager is None:
        return the_plan
    from assay.package_managers import with_package_manager

    return with_package_manager(the_plan, manager)


def _needing(checks: Iterable[str]) -> str:
    """What did not run for want of an install step only `checks` needed."""
    names = ", ".join(sorted(checks))
    return f"the checks that need it were not run ({names})" if names else "no check needs it"


def _serves(step: Evidence, the_plan: Plan) -> frozenset[str] | None:
    """The checks of `the_plan` that the install step of `step` alone serves
    (`install.served_checks`); None when the whole project needs it."""
    from assay.install import served_checks

    return served_checks(step.check, the_plan.checks)


def _install_failed(
    evidence: Evidence,
    root: Path,
    manager: Provided | None = None,
    unrun: str = "the checks were not run",
) -> Evidence:
    """A failed install step means the checks could not run (`unrun` says which): not a
    verdict on the code, unless the step failed on the code itself, a file of the project
    (`root`, the workspace) that is not valid Python (a build backend imports the package
    for its version), TypeScript (npm's `prepare` builds it) or C (its extension module)."""
    if evidence.passed:
        return evidence
    broken = _syntax_error_in_project(evidence, root)
    if broken is not None:
        note = (
            f"install step {evidence.check.name} failed on the project's own code: "
            f"{broken.file}:{broken.line}: {broken.message}"
        )
        return replace(
            evidence,
            verdict=Verdict.FAIL,
            cause=Cause.EXIT_NONZERO,
            diagnostics=(broken,),
            note=note,
        )
    if evidence.cause is Cause.TOOLCHAIN_MISSING:
        # The tool a step runs is not here (the pnpm the project names, which assay could
        # not fetch either), or too old for the project (a pnpm too new for this node).
        why = evidence.reason.strip().splitlines()[0] if evidence.reason.strip() else ""
        if manager is not None and manager.bin_dir is None:
            why = f"{why} ({manager.note})"  # why assay could not fetch it either
        elif wanted := _newer_toolchain_wanted(evidence):  # pnpm 11 under Node 20
            from assay.toolchain_too_old import UNKNOWN_NODE_OPTION

            if wanted.startswith(UNKNOWN_NODE_OPTION):
                why = f"the project needs {wanted}, which the toolchain here does not know"
            else:
                why = f"the project needs {wanted}, newer than the toolchain here"
        note = (
            f"install step {evidence.check.name} could not run: {why}; {unrun}. Install it, "
            "then verify again."
        )
        return replace(evidence, note=note)
    typed = _type_error_in_project(evidence, root)
    if typed is not None:
        # Named over the last error line, which was another script's noise (path-to-regexp's
        # `ts-scripts install`: "could not lock config file .git/config").
        note = (
            f"install step {evidence.check.name} did not succeed: {typed.place}: "
            f"{typed.message.rstrip('.')} ({typed.code}), a type error in the project's own code, with "
            "dependencies resolved today from package.json's ranges, not a lockfile: their "
            f"types may be what broke it; {unrun}. Verify from a lockfile to have it judged."
        )
    else:
        note = (
            f"install step {evidence.check.name} did not succeed ({_how_it_ended(evidence)}); "
            f"{unrun}. Check the lockfile and the network, or set the environment up yourself."
        )
    return replace(evidence, verdict=Verdict.INCONCLUSIVE, cause=Cause.START_FAILED, note=note)


def _newer_toolchain_wanted(evidence: Evidence) -> str | None:
    if evidence.result is None:
        return None
    from assay.parsers._text import combined
    from assay.toolchain_too_old import toolchain_too_old

    return toolchain_too_old(combined(evidence.result))


def _how_it_ended(evidence: Evidence) -> str:
    """An install step's end, and the line that says why: where it could not reach the
    network, else the last error it printed (pip's "Invalid requirement" names the file and
    line at fault)."""
    result = evidence.result
    if result is None or result.exit_code is None or result.exit_code == 0:
        return evidence.cause.value
    from assay.classify import last_error_line, npm_error_line
    from assay.formats.failures import relative  # the workspace's path means nothing
    from assay.parsers._text import combined
    from assay.parsers.crash import no_network

    text = combined(result)
    # npm's own error lines name no error as the others do (`npm error ERESOLVE ...`)
    error = no_network(text) or last_error_line(text) or npm_error_line(text)
    if not error:
        return f"exited {result.exit_code}"
    return f"exited {result.exit_code}: {relative(evidence, error)}"


def _syntax_error_in_project(evidence: Evidence, root: Path) -> Diagnostic | None:
    if evidence.result is None or evidence.verdict is not Verdict.FAIL:
        return None
    from assay.install import MADE_ENV
    from assay.parsers._text import combined
    from assay.parsers.crash import c_compile_error_in, syntax_error_in
    from assay.parsers.node import ts_syntax_error_in
    from assay.tools import DEPENDENCY_DIR

    said, outside = combined(evidence.result), (MADE_ENV, DEPENDENCY_DIR)
    # A build backend that imports the package; npm's `prepare`, which builds it with tsc:
    # from a lockfile (`npm ci`, `--frozen-lockfile`) a type error in the project's own file
    # is the code's (content-type's `prepare` stopped at src/index.ts(105,9) TS2322, and the
    # run was INDETERMINATE, "fatal: not a git repository"); from ranges, today's types of a
    # dependency may be what broke it.
    argv = evidence.check.argv
    locked = argv[1:2] == ("ci",) or "--frozen-lockfile" in argv or "--immutable" in argv
    return (
        syntax_error_in(said, str(root), outside)
        or ts_syntax_error_in(said, str(root), outside, type_errors=locked)
        # setuptools' build_ext compiling the project's extension module
        or c_compile_error_in(said, str(root), outside)
    )


def _type_error_in_project(evidence: Evidence, root: Path) -> Diagnostic | None:
    """tsc's first error in a TypeScript source of the project that a failed install step
    printed (npm's `prepare` building it), where `_syntax_error_in_project` held the code
    unjudged: dependencies from ranges."""
    if evidence.result is None:
        return None
    from assay.install import MADE_ENV
    from assay.parsers._text import combined
    from assay.parsers.node import ts_syntax_error_in
    from assay.tools import DEPENDENCY_DIR

    said = combined(evidence.result)
    return ts_syntax_error_in(said, str(root), (MADE_ENV, DEPENDENCY_DIR), type_errors=True)


def _base_commit(root: Path, base: str) -> str:
    """The full id of the commit `base` names in the repository at `root`."""
    from assay.sandbox import resolve_commit

    try:
        return resolve_commit(root, base)
    except Exception as exc:  # a bad ref is a usage problem: say which
        raise VerifyUsageError(f"could not read --base {base!r} from {root}: {exc}") from exc


def _base_named(named: str | None, commit: str | None) -> dict[str, str] | None:
    """The base as the run record keeps it: the name it was given and the commit read."""
    if named is None or commit is None:
        return None
    return {"named": named, "commit": commit}


@contextlib.contextmanager
def _base_tree(root: Path, base: str | None) -> Iterator[Path | None]:
    """The tree of `base` (a git ref of the repository at `root`), exported to a temp dir."""
    if base is None:
        yield None
        return
    from assay.sandbox import export_commit

    with temporary_scratch("base", dir=tempfile.gettempdir()) as scratch:
        try:
            export_commit(root, base, Path(scratch))
        except Exception as exc:  # a bad ref is a usage problem: say which
            raise VerifyUsageError(f"could not read --base {base!r} from {root}: {exc}") from exc
        yield Path(scratch)


def _tampering(
    base_dir: Path, root: Path, protected: ProtectedSet, the_plan: Plan
) -> dict[str, Any]:
    from assay.installed_modules import installed_modules
    from assay.tamper import detect_tampering

    installed = installed_modules(root, the_plan.env) if the_plan.env is not None else frozenset()
    return detect_tampering(base_dir, root, protected, installed).to_dict()


# --------------------------------------------------------------------------- the verdict cache


def _caching(options: VerifyOptions) -> bool:
    """Whether this verification may use the verdict cache at all."""
    return options.use_cache and not (options.base or options.protect or options.install)


def _source_digest(root: Path, options: VerifyOptions) -> str | None:
    """The digest of everything a workspace of `root` would hold; None when not caching."""
    if not _caching(options):
        return None
    from assay.cache import CacheError, VerdictCache, workspace_digest

    try:
        return workspace_digest(root, memo=VerdictCache(options.cache_dir))
    except (CacheError, OSError):
        return None
    except Exception:  # a tree keying cannot take (no cache, then): never the run's end
        return None


def _cache_lookup(
    root: Path,
    digest_before: str | None,
    the_plan: Plan,
    options: VerifyOptions,
    checkers: list[CheckerId | None],
    session: Session,
) -> tuple[VerdictCache | None, str | None]:
    """The cache and this run's key; (None, None) when caching is off or impossible, or
    when the tree changed while its workspace was being made."""
    if digest_before is None or None in checkers:
        return None, None  # a missing tool's verdict is not worth caching
    from assay.cache import CacheError, VerdictCache, cache_key, workspace_digest
    from assay.environment import inherited_by_checks

    workspace = session.workspace
    copied_as = workspace.provisioned.copied_as if workspace and workspace.provisioned else None
    try:
        cache = VerdictCache(options.cache_dir)
        # Keyed only if the workspace holds what is keyed: the tree, unchanged, before,
        # during and after the copy.
        digest = workspace_digest(root, memo=cache, copied_as=copied_as)
        if digest != digest_before:
            return None, None
        key = cache_key(
            digest,
            the_plan.to_dict(),
            [c for c in checkers if c],
            session.name,
            workspace_path=session.root,
            host_env=inherited_by_checks(options.sandbox),
        )
    except (CacheError, OSError):
        return None, None
    return cache, key


def _cached_report(cache: VerdictCache, key: str, the_plan: Plan, reruns: int = 0) -> Report | None:
    """The stored report for `key`, if it is readable and its status is the one its own
    evidence gives: a stored status is never believed on its own word."""
    from assay.cache import CacheError

    try:
        hit = cache.get(key)
    except CacheError:
        return None
    return _believed(hit, the_plan, reruns)


def _believed(
    hit: CachedReport | None, the_plan: Plan | RememberedPlan, reruns: int = 0
) -> Report | None:
    """`hit`'s report, unless it is unreadable or its status is not the one its evidence
    gives, or `reruns` are asked for and a failed test check in it had none."""
    if hit is None:
        return None
    try:
        report = Report.from_dict(hit.report)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None  # an unreadable entry is a miss, never a verdict
    recomputed = aggregate(
        report.checks,
        require_tests=the_plan.require_tests,
        missing_kinds=the_plan.missing,
        run_errors=report.record.run_errors,
    )
    if recomputed.status is not report.status:
        return None
    if reruns and any(
        e.check.kind is Kind.TEST and e.verdict is Verdict.FAIL and "reruns" not in e.extra
        for e in report.checks
    ):
        return None  # a failure measured without reruns may be a flaky test's
    cached = CacheHit(stored_at=hit.stored_at, key=hit.key)
    return replace(report, record=replace(report.record, cached=cached))


def _cache_store(cache: VerdictCache, key: str, report: Report, *, alias: str | None) -> bool:
    """Store `report` under `key` (and `alias`, the early key) if it is worth reusing;
    whether it was stored."""
    from assay.cache import CacheError, cacheable

    if not cacheable(report.status, report.checks) or report.record.run_errors:
        return False
    try:
        cache.put(key, report.to_dict())
        if alias is not None:
            cache.put_alias(alias, key)
    except (CacheError, OSError):
        return False
    return True


# ------------------------------------------------------- the verdict cache, before any sandbox


@dataclass(frozen=True, slots=True)
class _EarlyKey:
    """`assay.early_key`'s key for this run, and the digest of the host's binaries in it."""

    key: str
    toolchains: str


def _judging_options(options: VerifyOptions) -> dict[str, Any]:
    """The options that change what runs or how it is judged, beyond what the plan shows.
    Left out: the cache's own settings, and `deadline_s`: a report is stored only when every
    check finished (one cut short is inconclusive, never stored), and then it does not
    depend on how much of the budget was left."""
    from assay.environment import inherited_by_checks

    return {
        "sandbox": options.sandbox,
        "host_env": inherited_by_checks(options.sandbox),
        "canaries": options.plants_canaries,
        "timeout_s": options.timeout_s,
        "kinds": sorted(k.value for k in options.kinds) if options.kinds else None,
        "all_tests": options.all_tests,
        # Only when asked for: the keys of runs without reruns stay as they were.
        **({"rerun_failures": options.rerun_failures} if options.rerun_failures else {}),
    }


def _early_key(
    root: Path, the_plan: Plan | RememberedPlan, options: VerifyOptions, digest: str | None
) -> _EarlyKey | None:
    """This run's early key, or None when caching is off or a checker cannot be pinned down."""
    if digest is None:
        return None
    from assay.early_key import early_key, toolchains

    try:
        host = toolchains(the_plan.checks, root, options.sandbox)
    except OSError:
        return None
    if host is None:
        return None
    key = early_key(digest, the_plan.to_dict(), _judging_options(options), host)
    return _EarlyKey(key, host)


def _early_hit(
    early: _EarlyKey, the_plan: Plan | RememberedPlan, options: VerifyOptions
) -> Report | None:
    from assay.cache import CacheError, VerdictCache

    try:
        hit = VerdictCache(options.cache_dir).get_by_alias(early.key)
    except (CacheError, OSError):
        return None
    return _believed(hit, the_plan, options.rerun_failures)


def _still_early_key(
    early: _EarlyKey | None, root: Path, the_plan: Plan, options: VerifyOptions
) -> str | None:
    """`early`'s key, if the host's binaries it was made of are still as they were once the
    session has identified its checkers: only then does it name what the session's key does."""
    if early is None:
        return None
    from assay.early_key import toolchains

    try:
        return (
            early.key
            if toolchains(the_plan.checks, root, options.sandbox) == early.toolchains
            else None
        )
    except OSError:
        return None


def _remembered_hit(root: Path, digest: str, options: VerifyOptions) -> Report | None:
    """The stored report for the plan this tree was last given (`assay.plan_memo`), under
    the early key made of it and of the host's binaries as they are now; None: a miss."""
    from assay.cache import CacheError, VerdictCache
    from assay.plan_memo import decode_plan, plan_memo_key

    key = plan_memo_key(str(root), digest, _planning(options))
    try:
        text = VerdictCache(options.cache_dir).remembered_plan(key)
    except (CacheError, OSError):
        return None
    remembered = decode_plan(text) if text is not None else None
    if remembered is None:
        return None
    early = _early_key(root, remembered, options, digest)
    return None if early is None else _early_hit(early, remembered, options)


def _remember_plan(
    root: Path, digest: str | None, the_plan: Plan, options: VerifyOptions, verdict_key: str
) -> None:
    """Remember `the_plan` as the one `root`'s tree at `digest` is given, beside the verdict
    stored under `verdict_key`; the caller has seen the tree unchanged after planning."""
    if digest is None:
        return
    from assay.cache import CacheError, VerdictCache
    from assay.plan_memo import encode_plan, plan_memo_key

    key = plan_memo_key(str(root), digest, _planning(options))
    with contextlib.suppress(CacheError, OSError):
        VerdictCache(options.cache_dir).remember_plan(
            key, encode_plan(the_plan.to_dict()), verdict_key=verdict_key
        )


def _remember_alias(cache: VerdictCache, alias: str, key: str) -> None:
    from assay.cache import CacheError

    with contextlib.suppress(CacheError, OSError):
        cache.put_alias(alias, key)

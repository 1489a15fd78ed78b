"""Running every detector over one repository root: the whole of static discovery."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from assay.config import AssayConfig
from assay.discovery import (
    assay_config,
    autotools,
    ci,
    cmake,
    docs,
    fallback,
    make,
    manifests,
    meson,
    native_builds,
    node,
    pre_commit_hooks,
    python,
    python_envs,
)
from assay.discovery.files import RepoFiles
from assay.discovery.model import Candidate, DetectorAnswer, DetectorReport, ProjectEnv, report
from assay.discovery.toolenv import PATH_PYTHON, detect_env, with_installed

Detector = Callable[[RepoFiles, ProjectEnv], DetectorReport]

#: Detectors in priority order (assay's own configuration runs first, separately).
DETECTORS: tuple[tuple[str, Detector], ...] = (
    (node.NAME, node.detect),
    (python.NAME, python.detect),
    (python_envs.NAME, python_envs.detect),
    (pre_commit_hooks.NAME, pre_commit_hooks.detect),
    # Before make: a declared CTest, Automake or Meson suite outranks a root Makefile's
    # targets, and one of them is checked (`native_builds`).
    (cmake.NAME, cmake.detect),
    (autotools.NAME, autotools.detect),
    (meson.NAME, meson.detect),
    (make.NAME, make.detect),
    (ci.NAME, ci.detect),
    (manifests.NAME, manifests.detect),
    (docs.NAME, docs.detect),
    (fallback.NAME, fallback.detect),
)


@dataclass(frozen=True, slots=True)
class Discovery:
    """Everything discovery found about one repository, before any choice is made."""

    root: str
    env: ProjectEnv
    reports: tuple[DetectorReport, ...]
    config: AssayConfig | None = None
    config_error: str | None = None
    """assay's own configuration is malformed: a usage error (exit 2), nothing should run."""
    root_problem: str | None = None
    """The root cannot be examined at all (does not exist, is not a directory)."""

    @property
    def candidates(self) -> tuple[Candidate, ...]:
        return tuple(c for r in self.reports for c in r.candidates)

    @property
    def errors(self) -> tuple[str, ...]:
        return tuple(e for r in self.reports for e in r.errors)

    @property
    def unplanned(self) -> tuple[str, ...]:
        return tuple(u for r in self.reports for u in r.unplanned)

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "environment": self.env.to_dict(),
            "config": self.config.to_dict() if self.config else None,
            "config_error": self.config_error,
            "root_problem": self.root_problem,
            "detectors": [r.to_dict() for r in self.reports],
        }


def discover(
    root: str | os.PathLike[str], *, installed: str | os.PathLike[str] | None = None
) -> Discovery:
    """Read the repository's configuration files and list every way it checks itself.

    `installed`: the tree whose installed environment (in-tree virtualenv,
    node_modules/.bin) the commands will use, when it is not `root` (the plan of a base
    commit, run in the change's workspace). Never raises for anything about the
    repository: a missing root, an unreadable or malformed file, or a detector's own
    bug becomes a message in the result.
    """
    path = os.fspath(root)
    problem = _root_problem(path)
    if problem is not None:
        return Discovery(
            root=path, env=ProjectEnv(PATH_PYTHON, "PATH"), reports=(), root_problem=problem
        )
    files = RepoFiles(path)
    env = detect_env(files)
    if installed is not None and not _root_problem(os.fspath(installed)):
        env = with_installed(env, RepoFiles(os.fspath(installed)))
    config_result = assay_config.detect(files)
    reports = [config_result.report]
    for name, detect in DETECTORS:
        reports.append(_guarded(name, detect, files, env))
    reports = native_builds.one_suite(reports, files)
    return Discovery(
        root=files.root,
        env=env,
        reports=tuple(reports),
        config=config_result.config,
        config_error=config_result.error,
    )


def _guarded(name: str, detect: Detector, files: RepoFiles, env: ProjectEnv) -> DetectorReport:
    # A detector bug must cost its own source, not the whole discovery.
    try:
        result = detect(files, env)
    except Exception as exc:
        return report(name, errors=[f"{name} detector failed: {type(exc).__name__}: {exc}"])
    if not isinstance(result, DetectorReport) or not isinstance(result.outcome, DetectorAnswer):
        return report(name, errors=[f"{name} detector returned {type(result).__name__}"])
    return result


def _root_problem(path: str) -> str | None:
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"{path}: a symlink loop, not a directory"
        if exc.errno != errno.ENOENT:
            return f"{path}: {exc.strerror}"
    if not os.path.exists(path):
        return f"{path}: no such file or directory"
    if not os.path.isdir(path):
        return f"{path}: not a directory"
    if not os.access(path, os.R_OK | os.X_OK):
        return f"{path}: permission denied"
    return None

"""A warm mypy: a per-repository cache of mypy's, kept by assay outside the workspace.

Each workspace is a fresh copy without `.mypy_cache` (caches are never copied), so mypy
would start cold on every run (0.9 s against 0.29 s for a small project). Instead, the
repository gets a directory of its own under assay's state directory, named by the
repository's path and what decides the mypy that runs (its binary, interpreter and
packages: `probe_record.fingerprint`), which the mypy checks may write (under bubblewrap
every other check of the run sees it read-only: a test cannot plant an entry there) and
mypy is pointed at through `MYPY_CACHE_DIR` (a `cache_dir` of the project's own
configuration, or a `--cache-dir` in its command, still wins).

Why what is in it cannot decide a verdict wrongly:

- mypy uses a cached module when the source has the size and whole-second mtime it
  recorded, else only when its content hash is the same (and the same mypy version,
  options and Python version, all in its meta files). A workspace's times are its
  source's made a random 1 to 30 days older on every copy (`provision.workspace_age_ns`),
  so no mtime is the one recorded on an earlier run: every module is hashed, and an edit,
  however small and whatever its timestamps, is checked again. A planted type error is
  found on a warm run as on a cold one.
- It is used only where the repository's own configuration already decides what runs:
  never with `--base` or `--protect`, where a change is judged against a base it must
  not be able to influence. There, what the project's code could still write into it
  (a mypy plugin, which runs in mypy's process) gives it no power that editing its own
  configuration would not.
- One directory per repository path, never shared between repositories.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from assay.evidence import Check
from assay.tool_caches import ToolCache

#: The variable mypy reads its default cache directory from.
MYPY_CACHE_ENV = "MYPY_CACHE_DIR"
#: Caches kept; the least recently used are removed past it.
MYPY_CACHES_KEPT = 16
#: Where under assay's state directory the caches live.
MYPY_CACHES = "mypy"

MYPY = ToolCache("mypy", MYPY_CACHE_ENV, MYPY_CACHES, MYPY_CACHES_KEPT)


def type_checks(checks: Sequence[Check]) -> list[Check]:
    """The checks that run mypy."""
    return MYPY.checks(checks)


def mypy_cache_for(
    root: Path,
    checks: Sequence[Check],
    *,
    sandbox: str,
    judged_against_base: bool,
    state_dir: str | os.PathLike[str] | None = None,
) -> Path | None:
    """The warm cache directory for the mypy checks of the repository at `root` (made
    now), or None: no mypy check, a run judged against a base, or `none` (which runs in
    the tree, where mypy's own `.mypy_cache` is already warm)."""
    return MYPY.directory_for(
        root, checks, sandbox=sandbox, judged_against_base=judged_against_base, state_dir=state_dir
    )


def with_mypy_cache(checks: Sequence[Check], directory: Path | None) -> list[Check]:
    """`checks`, each mypy check told to keep its cache in `directory` (unless its own
    variables say where)."""
    return MYPY.told(checks, directory)

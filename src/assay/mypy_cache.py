"""A warm mypy: a per-repository cache of mypy's, kept by assay outside the workspace.

Each workspace is a fresh copy without `.mypy_cache` (caches are never copied), so mypy
would start cold on every run (0.9 s against 0.29 s for a small project). Instead, the
repository gets a directory of its own under assay's state directory, named by the
repository's path and what decides the mypy that runs (its binary, interpreter and
packages: `probe_record.fingerprint`), which the sandbox may write and mypy is pointed at
through `MYPY_CACHE_DIR` (a `cache_dir` of the project's own configuration, or a
`--cache-dir` in its command, still wins).

Why what is in it cannot decide a verdict wrongly:

- mypy uses a cached module only when the source it was made from has the same content
  hash (and the same mypy version, options and Python version, all in its meta files):
  an edit, however small and whatever its timestamps, is checked again. A planted type
  error is found on a warm run as on a cold one.
- It is used only where the repository's own configuration already decides what runs:
  never with `--base` or `--protect`, where a change is judged against a base it must
  not be able to influence. There, whatever code under test could write into it (a
  test, a mypy plugin) gives it no power that editing its own configuration would not.
- One directory per repository path, never shared between repositories.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from assay.evidence import Check
from assay.state_dir import default_cache_dir

#: The variable mypy reads its default cache directory from.
MYPY_CACHE_ENV = "MYPY_CACHE_DIR"
#: Caches kept; the least recently used are removed past it.
MYPY_CACHES_KEPT = 16
#: Where under assay's state directory the caches live.
MYPY_CACHES = "mypy"


def type_checks(checks: Sequence[Check]) -> list[Check]:
    """The checks that run mypy."""
    return [check for check in checks if check.tool == "mypy"]


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
    mypy = type_checks(checks)
    if not mypy or judged_against_base or sandbox == "none":
        return None
    from assay.check_execution import locate
    from assay.probe_record import fingerprint

    installs = []
    for check in mypy:
        binary = locate(check, root=root)
        installs.append([binary, fingerprint(binary) if binary else None])
    material = json.dumps([str(root.resolve()), installs], sort_keys=True, default=str)
    name = hashlib.sha256(material.encode()).hexdigest()[:32]
    top = Path(state_dir) if state_dir is not None else default_cache_dir()
    directory = top / MYPY_CACHES / name
    try:
        directory.mkdir(parents=True, exist_ok=True)
        os.utime(directory)  # most recently used
        _forget_old(directory.parent)
    except OSError:
        return None  # mypy starts cold, as it would without
    return directory


def with_mypy_cache(checks: Sequence[Check], directory: Path | None) -> list[Check]:
    """`checks`, each mypy check told to keep its cache in `directory` (unless its own
    variables say where)."""
    if directory is None:
        return list(checks)
    return [
        replace(check, env={MYPY_CACHE_ENV: str(directory), **check.env})
        if check.tool == "mypy"
        else check
        for check in checks
    ]


def hand_over(directory: Path, uid: int | None) -> None:
    """As root, give the sandbox's uid (another one on every run) the cache and everything
    an earlier run wrote in it; links are changed themselves, never followed."""
    if uid is None:
        return
    os.lchown(directory, uid, uid)
    for top, dirs, files in os.walk(directory):
        for name in (*dirs, *files):
            with contextlib.suppress(FileNotFoundError):
                os.lchown(os.path.join(top, name), uid, uid)


def _forget_old(caches: Path) -> None:
    """Remove the least recently used caches past `MYPY_CACHES_KEPT`."""
    with os.scandir(caches) as listing:
        entries = [e for e in listing if e.is_dir(follow_symlinks=False)]
    entries.sort(key=lambda e: e.stat(follow_symlinks=False).st_mtime, reverse=True)
    for old in entries[MYPY_CACHES_KEPT:]:
        shutil.rmtree(old.path, ignore_errors=True)

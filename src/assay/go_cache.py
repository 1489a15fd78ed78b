"""A warm Go build cache: one per repository, kept by assay outside the workspace.

The sandbox's HOME is a fresh directory on every run, so Go's default build cache
(`$HOME/.cache/go-build`) starts empty and every check compiles the standard library and
every dependency again: go-cmp's `go test -race ./...` took 60 s in the sandbox against
1.6 s by hand. Instead, the repository gets a directory of its own under assay's state
directory, named by the repository's path and what decides the Go that runs (its binary
and that binary's identity: `probe_record.fingerprint`), which the Go checks may write
(under bubblewrap every other check of the run sees it read-only) and `go` is pointed at
through `GOCACHE` (a `GOCACHE` of the check's own still wins).

Why what is in it cannot decide a verdict wrongly:

- Go finds a cached compilation by an action ID, a hash of everything that decides it:
  the content of every source file, the compiler's own build ID, flags, build tags,
  GOOS/GOARCH and the IDs of the packages it imports. An edit, however small and whatever
  its timestamps, is a new ID and is compiled again. A planted wrong value fails on a warm
  run as on a cold one.
- Test results are cached too, and would be replayed as "(cached)" without running: every
  `go test` assay instruments is given `-count=1` (`assay.tools.go`), the documented way to
  turn that off, so the tests really run on every verification.
- It is used only where the repository's own configuration already decides what runs:
  never with `--base` or `--protect`, where a change is judged against a base it must not
  be able to influence. There, whatever code under test could write into it (a Go test,
  which runs inside `go test`, or a `go generate`d tool) gives it no power that editing
  its own code would not.
- One directory per repository path and Go installation, never shared between
  repositories; the least recently used are removed past `GO_CACHES_KEPT`, and one grown
  past `GO_CACHE_MAX_BYTES` is emptied.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from assay.evidence import Check
from assay.go_cache_view import GO_CACHE_ENV
from assay.tool_caches import ToolCache

#: Caches kept; the least recently used are removed past it. Fewer than mypy's: a Go cache
#: holding race-instrumented builds of the standard library runs to hundreds of megabytes.
GO_CACHES_KEPT = 8
#: Where under assay's state directory the caches live.
GO_CACHES = "go"
#: A cache past this size is emptied (go starts cold once). Each workspace is at a path of
#: its own, part of the action IDs of the repository's own packages, so every run adds
#: their compilations again; go trims only entries unused for days.
GO_CACHE_MAX_BYTES = 1 << 30

GO = ToolCache("go", GO_CACHE_ENV, GO_CACHES, GO_CACHES_KEPT, GO_CACHE_MAX_BYTES)


def go_checks(checks: Sequence[Check]) -> list[Check]:
    """The checks that run `go`."""
    return GO.checks(checks)


def go_cache_for(
    root: Path,
    checks: Sequence[Check],
    *,
    sandbox: str,
    judged_against_base: bool,
    state_dir: str | os.PathLike[str] | None = None,
) -> Path | None:
    """The warm build cache directory for the Go checks of the repository at `root` (made
    now), or None: no Go check, a run judged against a base, or `none` (which runs with the
    caller's HOME, where Go's own cache is already warm)."""
    return GO.directory_for(
        root, checks, sandbox=sandbox, judged_against_base=judged_against_base, state_dir=state_dir
    )


def with_go_cache(checks: Sequence[Check], directory: Path | None) -> list[Check]:
    """`checks`, each Go check told to keep its build cache in `directory` (unless its own
    variables say where)."""
    return GO.told(checks, directory)

"""The releases of a tree's tools as its maintainers had them: linters as of its date.

A project that does not pin its linter, type checker or test runner got whatever release
was newest when its CI ran. A release of ruff, mypy or pyflakes made since finds what its
maintainers' never did (a new rule, a stricter inference), and a tree that was clean is
then failed for a tool's change, not its own. `--install` therefore installs each tool the
plan runs, where nothing pins it, at its newest release as of the tree's date:

- the tree's date is, for an sdist (a `PKG-INFO` at the root; its files' times are the
  build backend's, often fixed), the day PyPI received that release, even when the tree
  has since been committed; else its HEAD commit's (read with `assay.safe_git`);
- never before the interpreter's own release: a tool older than the Python it runs on
  may not run at all (pytest 5 on 3.11);
- release dates come from PyPI's JSON API, each tool's releases filtered as pip would:
  no pre-releases, nothing yanked, nothing whose `Requires-Python` excludes the
  interpreter;
- below a release that checks an unchanged tree otherwise than every release before it
  (`ceilings`), where the tree's configuration relies on what that release changed:
  ruff 0.16.0's default rule selection, for a tree written for the one before.

Every failure to learn a date or a release (no network, a private index, a tree with
neither) leaves the tool uncapped: the newest release, as before.
"""

from __future__ import annotations

import datetime
import json
import re
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from packaging.version import Version

#: PyPI's JSON API: a project's releases, each with its files.
PYPI_JSON = "https://pypi.org/pypi/{project}/json"
#: Seconds one request to PyPI may take; a slower answer leaves the tool uncapped.
FETCH_TIMEOUT_S = 10.0
#: The largest answer read (ruff's whole history is about 6 MB).
FETCH_MAX_BYTES = 64 * 1024 * 1024
#: Seconds git may take to say when HEAD was committed.
GIT_TIMEOUT_S = 10.0
#: The day each CPython feature release came out.
PYTHON_RELEASED = {
    (3, 8): datetime.date(2019, 10, 14),
    (3, 9): datetime.date(2020, 10, 5),
    (3, 10): datetime.date(2021, 10, 4),
    (3, 11): datetime.date(2022, 10, 24),
    (3, 12): datetime.date(2023, 10, 2),
    (3, 13): datetime.date(2024, 10, 7),
    (3, 14): datetime.date(2025, 10, 7),
}
#: Names and versions read from a PKG-INFO before they are put in a URL.
_PROJECT_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,200}[A-Za-z0-9])?")
_VERSION = re.compile(r"[A-Za-z0-9.+!_-]{1,100}")
_PKG_INFO_MAX_BYTES = 1024 * 1024

Fetch = Callable[[str], Any]
"""Reads a URL's JSON; raises `OSError` or `ValueError` when it cannot."""


def fetch_json(url: str) -> Any:
    """The JSON at `url` (PyPI's), within `FETCH_TIMEOUT_S` and `FETCH_MAX_BYTES`."""
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT_S) as answer:
        body = answer.read(FETCH_MAX_BYTES + 1)
    if len(body) > FETCH_MAX_BYTES:
        raise ValueError(f"{url} answered more than {FETCH_MAX_BYTES} bytes")
    return json.loads(body)


@dataclass(frozen=True, slots=True)
class Dating:
    """A tree whose date is another commit's: a change judged against a base (`--base`)
    has the base's tools. The change's own date is its author's to choose (a commit dated
    2019 had mypy 0.982 check it, which does not know `truthy-function`, and an `if
    is_empty:` was VERIFIED)."""

    files: Path
    """The tree read for an sdist's PKG-INFO and the tools' configuration (the base's)."""
    repository: Path
    """The git repository that holds `ref`."""
    ref: str
    """The commit whose committer date is the tree's (read hashed, `assay.safe_git`)."""


def tree_date(root: Path | Dating, *, fetch: Fetch = fetch_json) -> datetime.datetime | None:
    """When the tree at `root` was made: its PyPI release's time for an sdist, committed
    or not (an sdist unpacked and put under git has a commit made today, and today's
    linters failed code its maintainers' passed), else its HEAD commit's (a `Dating`'s
    commit's); None when neither can be learnt."""
    files = root.files if isinstance(root, Dating) else root
    released = _released(files, fetch)
    if released is not None:
        return released
    if isinstance(root, Dating):
        return _committed(root.repository, root.ref)
    return _committed(root, "HEAD") if (root / ".git").exists() else None


def _committed(root: Path, ref: str) -> datetime.datetime | None:
    from assay.safe_git import GitError, open_repository

    try:
        git = open_repository(root, timeout=GIT_TIMEOUT_S)
        kind, commit = git.read_object(git.resolve_commit(ref), limit=1 << 20)
    except GitError:
        return None
    if kind != "commit":
        return None
    for line in commit.split(b"\n\n", 1)[0].splitlines():
        found = re.fullmatch(rb"committer .*> (\d{1,12}) [+-]\d{4}", line)
        if found:
            return datetime.datetime.fromtimestamp(int(found.group(1)), tz=datetime.UTC)
    return None


def _released(root: Path, fetch: Fetch) -> datetime.datetime | None:
    """The day PyPI received the release whose sdist `root` is (its PKG-INFO's name and
    version), or None."""
    from assay.untrusted_files import read_untrusted

    raw = read_untrusted(root, "PKG-INFO", limit=_PKG_INFO_MAX_BYTES)
    if not isinstance(raw, bytes):
        return None
    text = raw.decode("utf-8", "replace")
    fields = dict(
        line.split(": ", 1) for line in text.split("\n\n", 1)[0].splitlines() if ": " in line
    )
    name, version = fields.get("Name", "").strip(), fields.get("Version", "").strip()
    if not (_PROJECT_NAME.fullmatch(name) and _VERSION.fullmatch(version)):
        return None
    from packaging.version import Version

    try:
        releases = fetch(PYPI_JSON.format(project=urllib.parse.quote(name)))["releases"]
        wanted = Version(version)
        files = next(f for v, f in releases.items() if _same_version(v, wanted))
        return min((_uploaded(f) for f in files), default=None)
    except (OSError, ValueError, AttributeError, TypeError, KeyError, StopIteration):
        return None  # InvalidVersion is a ValueError


def _same_version(text: str, wanted: Version) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(text) == wanted
    except InvalidVersion:
        return False


def ceilings(root: Path | Dating, tools: Iterable[str]) -> dict[str, str]:
    """`tool -> release`: the first release of each of `tools` that would check the tree
    at `root` otherwise than any before it did, with the tree unchanged: ruff's widened
    default selection, where the tree's configuration was written for the old one
    (`assay.ruff_selection`)."""
    if "ruff" not in tools:
        return {}
    from assay.ruff_selection import DEFAULTS_WIDENED, written_for_old_defaults

    files = root.files if isinstance(root, Dating) else root
    return {"ruff": DEFAULTS_WIDENED} if written_for_old_defaults(files) else {}


def tools_as_of(
    tools: Iterable[str],
    when: datetime.datetime,
    python: str,
    *,
    fetch: Fetch = fetch_json,
    below: Mapping[str, str] | None = None,
    held_back: set[str] | None = None,
) -> dict[str, str]:
    """`tool -> version`: each of `tools`' newest final, unyanked release, made by `when`
    (or by the day the `python` version's feature release came out, if later), that
    supports `python`, and comes before the release `below` names for it (`ceilings`);
    the tools that ceiling held back from a release of then are added to `held_back`. A
    tool whose releases cannot be read, or that had none by then, is left out."""
    from packaging.version import InvalidVersion, Version

    try:
        interpreter = Version(python)
    except InvalidVersion:
        return {}
    released = PYTHON_RELEASED.get((interpreter.major, interpreter.minor))
    if released is not None:
        floor = datetime.datetime.combine(released, datetime.time(), tzinfo=datetime.UTC)
        when = max(when, floor)
    found: dict[str, str] = {}
    for tool in tools:
        try:
            releases = fetch(PYPI_JSON.format(project=urllib.parse.quote(tool)))["releases"]
            version = newest_release(releases, when, interpreter)
            ceiling = (below or {}).get(tool)
            if version is not None and ceiling and Version(version) >= Version(ceiling):
                version = newest_release(releases, when, interpreter, below=Version(ceiling))
                if held_back is not None:
                    held_back.add(tool)
        except OSError:
            break  # PyPI is out of reach: each further tool would wait out the timeout too
        except (ValueError, AttributeError, TypeError, KeyError):
            continue
        if version is not None:
            found[tool] = version
    return found


def newest_release(
    releases: Mapping[str, list[Mapping[str, Any]]],
    when: datetime.datetime,
    python: Version,
    *,
    below: Version | None = None,
) -> str | None:
    """The newest of PyPI's `releases` (version -> files) as pip would pick it on `python`
    at `when`: final, not yanked, first uploaded by then, with a file whose Requires-Python
    `python` meets; and older than `below`, if given."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    best: Version | None = None
    for text, files in releases.items():
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        live = [f for f in files if not f.get("yanked")]
        if version.is_prerelease or not live or (best is not None and version <= best):
            continue
        if below is not None and version >= below:
            continue
        if min(_uploaded(f) for f in live) > when:
            continue
        try:
            supported = any(python in SpecifierSet(f.get("requires_python") or "") for f in live)
        except InvalidSpecifier:
            continue
        if supported:
            best = version
    return None if best is None else str(best)


def _uploaded(file: Mapping[str, Any]) -> datetime.datetime:
    return datetime.datetime.fromisoformat(str(file["upload_time_iso_8601"]))

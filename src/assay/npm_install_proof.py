"""Believing a `node_modules` under `--install --protect`: npm's, made by assay itself.

A `node_modules` the tree brings cannot be proven (a lockfile's `integrity` hashes the
packed tarballs, and nothing records the unpacked files). One that assay's install step
makes in the workspace can be, when three things hold:

- **No script of the tree's ran.** `npm ci --ignore-scripts` unpacks what the lockfile
  locks, each tarball checked against its `integrity`, and runs nothing; then the install
  scripts of the packages that have them run by name (`npm rebuild NAME...`, which runs
  none of the root's: a `postinstall` runs code the change may have written, with
  `node_modules` writable). `scriptless` makes the step so.
- **What it locks is what the base locks.** Every package the base's `package-lock.json`
  locks is locked by the change's at the same place, version, source and integrity (or not
  at all); a package the change adds lies outside every one of the base's (nested inside
  one, it would be what that package resolves in its place), runs no install script, and
  names no command in `.bin` (where `npm test`'s `jest` is found). A package the change
  adds is code under test like the change's own: it runs only where something requires it.
- **Nothing rewrites it afterwards.** The sandbox shows it read-only to every later
  command, each with empty private caches (`Sandbox.hold`).

Anything else (yarn's or pnpm's lockfile, a lockfile before npm 7's, a backend that cannot
hold a directory read-only) leaves it unproven, as before, saying why.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.evidence import Check, Evidence
from assay.untrusted_files import Link, list_untrusted, open_untrusted, read_untrusted

if TYPE_CHECKING:
    from assay.session import Session

__all__ = ["HeldInstall", "hold_npm_install", "npm_install_unproven", "scriptless"]

LOCKFILE = "package-lock.json"
MODULES = "node_modules"
#: A lockfile larger than this is not read (npm's for a large monorepo is a few MB).
_LOCKFILE_MAX_BYTES = 64 * 1024 * 1024
_NPM_CI = ("npm", "ci")
#: The name of the install step that makes node_modules (`assay.tools.node.install_steps`).
_STEP = "install-node"
#: A package at the top of node_modules: `node_modules/name`, `node_modules/@scope/name`.
_TOP_LEVEL = re.compile(r"^node_modules/(?:@[^/]+/)?[^/]+$")
#: A package's name as npm allows it: nothing a shell or npm's options could read otherwise.
_PACKAGE_NAME = re.compile(r"^(?:@[a-z0-9~][\w.~-]*/)?[a-z0-9~][\w.~-]*$", re.IGNORECASE)
#: What must be the same for a package the base locks to be the base's.
_IDENTITY = ("version", "resolved", "integrity", "link")

Packages = dict[str, dict[str, Any]]


def scriptless(step: Check, workspace: Path) -> Check:
    """`step`, an install from npm's lockfile, as `--protect` runs it: no script of the
    root's; the install scripts of the packages the lockfile marks as having them, by
    name. Any other step is returned as it is."""
    if step.argv[:2] != _NPM_CI:
        return step
    packages = _packages(read_untrusted(workspace, LOCKFILE, limit=_LOCKFILE_MAX_BYTES)) or {}
    names = sorted(
        {
            name
            for path, entry in packages.items()
            if path and entry.get("hasInstallScript") is True
            if _PACKAGE_NAME.match(name := path.rsplit("node_modules/", 1)[-1])
        }
    )
    if names:
        script = f'npm ci --ignore-scripts "$@" && npm rebuild {shlex.join(names)}'
        argv: tuple[str, ...] = ("sh", "-c", script, "sh", *step.argv[2:])
        then = f", then the install scripts of the {len(names)} packages it marks as having them"
    else:
        argv, then = (*step.argv, "--ignore-scripts"), ""
    said = f"no script of the tree's run (--ignore-scripts){then}"
    return replace(step, argv=argv, reason=f"{step.reason}; {said}" if step.reason else said)


@dataclass(frozen=True, slots=True)
class HeldInstall:
    """What became of the `node_modules` assay's own npm install made."""

    held: tuple[str, ...] = ()
    """Believed, and shown read-only to every later command."""
    why_not: str | None = None
    """Why it is not believed, when it is not."""


def hold_npm_install(
    session: Session, installed: Sequence[Evidence], repository: Path, base: str | None
) -> HeldInstall | None:
    """Believe the `node_modules` the `installed` steps made in `session`'s workspace and
    hold it read-only, or say why not; None when no scriptless npm install made one.
    `repository` at `base` holds the lockfile it is held to."""
    workspace = session.workspace
    if workspace is None:
        return None
    made = [e for e in installed if e.passed and _is_scriptless(e.check)]
    if not made:
        other = next((e.check for e in installed if e.passed and e.check.name == _STEP), None)
        return None if other is None else HeldInstall(why_not=_made_otherwise(other))
    if base is None:
        return HeldInstall(why_not="no base was given to hold the install to")
    why = npm_install_unproven(workspace.path, _base_lockfile(repository, base))
    if why is not None:
        return HeldInstall(why_not=why)
    if session.sandbox is None or not session.sandbox.hold(workspace, (MODULES,)):
        return HeldInstall(why_not="this sandbox cannot show it read-only to the checks")
    return HeldInstall(held=(MODULES,))


def _made_otherwise(step: Check) -> str:
    """Why the `node_modules` an install `step` other than npm's from a lockfile made is
    not believed: the note said only "what the base's lockfile installs" of a tree that
    had none (fast-content-type-parse, installed with `npm install` from its ranges)."""
    command = " ".join(step.argv[:2])
    if step.source == "package.json":
        return (
            f"the tree has no lockfile, so `{command}` resolved its dependencies' ranges "
            "as the registry has them today, and nothing holds that to the base"
        )
    return f"it was made by `{command}` from {step.source}, not by npm from a {LOCKFILE}"


def _is_scriptless(step: Check) -> bool:
    return step.argv[:3] == (*_NPM_CI, "--ignore-scripts") or (
        step.argv[:2] == ("sh", "-c") and step.argv[2].startswith("npm ci --ignore-scripts ")
    )


def _base_lockfile(repository: Path, base: str) -> bytes | None:
    """The base's root `package-lock.json`; None when it has none or it cannot be read."""
    from assay.base_requirements import READ_TIMEOUT_S
    from assay.safe_git import GitError, open_repository

    try:
        git = open_repository(repository, timeout=READ_TIMEOUT_S)
        tree = git.project_tree(git.resolve_commit(base))
        return git.blob_at(tree, LOCKFILE, limit=_LOCKFILE_MAX_BYTES)
    except GitError:
        return None


def npm_install_unproven(workspace: Path, base_lockfile: bytes | None) -> str | None:
    """Why the `node_modules` assay's scriptless npm install made in `workspace` cannot be
    believed; None when it can (it must still be held read-only from now on).
    `base_lockfile`: the base's `package-lock.json`, None when it has none."""
    if base_lockfile is None:
        return f"the base has no {LOCKFILE} (or it could not be read) to hold the install to"
    base = _packages(base_lockfile)
    if base is None:
        return f"the base's {LOCKFILE} cannot be read as npm 7's or later (lockfileVersion 2 or 3)"
    change = _packages(read_untrusted(workspace, LOCKFILE, limit=_LOCKFILE_MAX_BYTES))
    if change is None:
        return f"the change's {LOCKFILE} cannot be read as npm 7's or later"
    if (differs := _differs_from_base(base, change)) is not None:
        return differs
    return _bin_not_the_bases(workspace, base)


def _differs_from_base(base: Packages, change: Packages) -> str | None:
    base_dirs = [path for path in base if path]
    for path, entry in change.items():
        if not path:
            continue
        locked = base.get(path)
        if locked is not None:
            changed = [key for key in _IDENTITY if entry.get(key) != locked.get(key)]
            if changed:
                return (
                    f"{path} is locked at another {changed[0]} than the base locks it "
                    f"({locked.get(changed[0])!r}, now {entry.get(changed[0])!r})"
                )
            continue
        inside = next((d for d in base_dirs if path.startswith(d + "/")), None)
        if inside is not None:
            return (
                f"the change adds {path} inside {inside}, which would resolve it there in "
                "place of what the base locks"
            )
        if entry.get("hasInstallScript") is True:
            return f"the change adds {path}, which has install scripts"
        if entry.get("bin"):
            return f"the change adds {path}, which puts commands in node_modules/.bin"
    return None


def _bin_not_the_bases(workspace: Path, base: Packages) -> str | None:
    """The first command of `node_modules/.bin` that is not a link into a package the base
    locks from the registry (npm makes each a relative link into the package that declares
    it)."""
    names = list_untrusted(workspace, f"{MODULES}/.bin")
    if names is None:
        return None
    if not isinstance(names, list):
        return f"node_modules/.bin cannot be listed: {names.reason}"
    # Not a workspace's link: what it leads to is the tree's, and its commands the change's.
    tops = [
        path for path, entry in base.items() if _TOP_LEVEL.match(path) and not entry.get("link")
    ]
    for name in sorted(names):
        rel = f"{MODULES}/.bin/{name}"
        with open_untrusted(workspace, rel) as found:
            target = found.target if isinstance(found, Link) else None
        resolved = posixpath.normpath(posixpath.join(f"{MODULES}/.bin", target or ""))
        if target is None or not any(resolved.startswith(top + "/") for top in tops):
            return f"{rel} is not a link into a package the base locks"
    return None


def _packages(data: object) -> Packages | None:
    """The `packages` of an npm 7+ lockfile (path -> entry); None when `data` is not one."""
    if not isinstance(data, bytes):
        return None
    try:
        lock = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(lock, Mapping) or lock.get("lockfileVersion") not in (2, 3):
        return None
    packages = lock.get("packages")
    if not isinstance(packages, Mapping):
        return None
    return {
        path: dict(entry)
        for path, entry in packages.items()
        if isinstance(path, str) and isinstance(entry, Mapping)
    }

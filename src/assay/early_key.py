"""The verdict cache's key before any sandbox exists: a cache hit copies nothing, starts
no bubblewrap and runs no tool's `--version`.

The key the session computes (`cache.cache_key`) needs every checker's probed version,
and so a workspace to probe the project's own tools in. This one is made only of what
can be read without running anything:

- the source tree's digest (`cache.workspace_digest`, the same one the session checks
  again after provisioning);
- the plan, and the options that change what runs or how it is judged;
- for every check, the binary it would run, found in the source tree exactly as the
  session finds it in the workspace, and what decides its version: the identities of
  the binary, its interpreter and the packages that interpreter loads, plus the host
  variables that steer it (`probe_record.fingerprint`, `record_key`: the premise the
  persistent probe record already rests on). A tool assay does not know is keyed by its
  file: a file in the tree by its bytes (in the digest), one outside by its identity;
- the sandbox's binaries (bubblewrap and its helpers), by their identities: they decide
  the backend's description, which the session's key holds.

A tool whose version cannot be pinned down that way (a version manager's shim, a shell
wrapper), a binary changed within the last `RACY_WINDOW_NS`, or one missing: no key,
and the run goes the long way. The key is stored only as another name for the session's
own key, and only when everything it was made of was found unchanged after the session
identified the checkers (`pipeline`): an answer for it is always one the session gave.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from assay.build_identity import assay_build
from assay.evidence import Check, CheckerId
from assay.probe import ProbeCache, ProbeFailure, find_binary
from assay.probe_record import fingerprint, record_key, search_path, settled
from assay.toolchains import generic_toolchain, toolchain_for

#: Version of this key's derivation; bump it when its inputs change meaning.
EARLY_KEY_SCHEMA = "assay.early-key/1"
#: The binaries a bubblewrap session runs on the host (`sandbox.bwrap`'s probe finds them).
SANDBOX_BINARIES: dict[str, tuple[str, ...]] = {
    "auto": ("bwrap", "setpriv"),
    "bwrap": ("bwrap", "setpriv"),
    "local": (),
    "none": (),
}


class _Unvouched(ProbeFailure):
    """This tool's version cannot be known without running something."""


def toolchains(checks: Sequence[Check], root: Path, sandbox: str) -> str | None:
    """A digest of everything outside the tree that decides the checkers and the sandbox
    (see the module docstring), or None when some of it cannot be pinned down."""
    from assay.check_execution import identify

    started_ns = time.time_ns()
    probes = _Fingerprints(root, started_ns)
    entries: list[Any] = []
    try:
        for check in checks:
            checker = identify(check, root=root, probes=probes)
            entries.append([check.name, checker.tool, checker.version, checker.path])
        for name in SANDBOX_BINARIES[sandbox]:
            found = shutil.which(name)
            if found is None:
                return None
            entries.append(["sandbox", name, _identity(os.path.abspath(found), started_ns)])
    except ProbeFailure:
        return None
    return _digest(entries)


def early_key(digest: str, plan: Any, options: Mapping[str, Any], toolchain_digest: str) -> str:
    """The key: the tree's `digest`, the `plan` (any JSON-able value), the `options` that
    decide what runs and how it is judged, and `toolchains`' digest."""
    return _digest(
        {
            "schema": EARLY_KEY_SCHEMA,
            "workspace": digest,
            "plan": plan,
            "options": options,
            "toolchains": toolchain_digest,
            "assay": assay_build(),
        }
    )


def _digest(material: Any) -> str:
    encoded = json.dumps(material, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(encoded.encode()).hexdigest()


def _identity(path: str, started_ns: int) -> list[Any]:
    """`path` and the identity of the file it leads to (which changes whenever its bytes
    do); `_Unvouched` when it cannot be looked at or changed too recently to be trusted."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise _Unvouched(f"cannot stat {path}: {exc}") from exc
    parts = [(path, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)]
    if not settled(parts, started_ns):
        raise _Unvouched(f"{path} changed too recently")
    return list(parts)


class _Fingerprints(ProbeCache):
    """Identifies each tool by what decides its version, never by running anything: the
    `version` of each checker it gives is that fingerprint, not a version number."""

    def __init__(self, root: Path, started_ns: int) -> None:
        super().__init__(persistent=False)
        self._root = root
        self._started_ns = started_ns

    def get(
        self,
        tool: str,
        *,
        path: str | None = None,
        env: Mapping[str, str] | None = None,
        module: str | None = None,
        cwd: str | None = None,
    ) -> CheckerId:
        known = toolchain_for(tool)
        toolchain = known or generic_toolchain(tool)
        invoked = self._binary(tool, path, env)
        binary, choice = self._through_shim(invoked, env, cwd)
        inside = self._inside(invoked)
        shown = f"<tree>/{inside}" if inside is not None else binary
        if known is None and module is None:
            # Identified by its bytes: those of a file in the tree are in its digest.
            if inside is not None:
                return CheckerId(tool=tool, version="in-tree", path=shown)
            identity = _identity(binary, self._started_ns)
            return CheckerId(tool=tool, version=_digest(identity), path=shown)
        parts = fingerprint(binary, env=env, module=module)
        if parts is None or not settled(parts, self._started_ns):
            raise _Unvouched(f"{binary} cannot be pinned down")
        steering = record_key(tool, toolchain, binary, module, env)
        return CheckerId(tool=tool, version=_digest([steering, parts, choice]), path=shown)

    def _through_shim(
        self, binary: str, env: Mapping[str, str] | None, cwd: str | None
    ) -> tuple[str, list[Any]]:
        """The binary a pyenv shim at `binary` would run, as the session's probe finds it
        (`probe._through_shim`) wherever the workspace is made, and what chose it: the
        shim, the version, and the version file when it lies outside the tree (one inside
        is in the tree's digest). `binary` itself, and nothing, when it is no shim pyenv's
        rules can be followed for; `fingerprint` then refuses it as a launcher."""
        from assay.pyenv_shim import resolve_shim_anywhere
        from assay.scratch import scratch_places

        target = resolve_shim_anywhere(
            binary,
            tree=str(self._root),
            cwd=cwd or str(self._root),
            env={**os.environ, **(env or {})},
            places=[str(place.resolve()) for place in scratch_places()],
        )
        if target is None:
            return binary, []
        choice = [_identity(binary, self._started_ns), target.version]
        if target.selected_by != "PYENV_VERSION" and self._inside(target.selected_by) is None:
            choice.append(_identity(target.selected_by, self._started_ns))
        return target.binary, choice

    def _binary(self, tool: str, path: str | None, env: Mapping[str, str] | None) -> str:
        toolchain = toolchain_for(tool) or generic_toolchain(tool)
        if path is None:
            found = find_binary(toolchain, env)
        elif os.sep not in path:
            found = shutil.which(path, path=search_path(env))
        else:
            found = path
        if found is None:
            raise _Unvouched(f"{tool} not found")
        return os.path.abspath(found)

    def _inside(self, binary: str) -> str | None:
        """`binary`'s path in the tree, as it will be invoked (links not followed)."""
        inside = os.path.relpath(binary, self._root)
        if inside == os.pardir or inside.startswith(os.pardir + os.sep):
            return None
        return inside

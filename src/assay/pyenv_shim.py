"""Seeing through a pyenv shim to the interpreter it would run, without running it.

A pyenv shim is a shell script that runs `pyenv exec`, which picks a version at every
call: probing a tool through it costs dozens of shell executions, and the shim's own file
says nothing about the version, so its answer could never be kept. `pyenv which` would
tell, but it is a host execution steered by files of the repository under verification
(`.python-version`). pyenv's choice is made from plain data instead, read here:

1. `PYENV_VERSION`, else
2. the first `.python-version` found from `PYENV_DIR` (then the working directory)
   upwards, else
3. `$PYENV_ROOT/version`;

and the binary is `$PYENV_ROOT/versions/<first version>/bin/<program>`. Whatever this
module does not follow exactly (the system interpreter, a version given by prefix, a
version name that is a path, hooks that may rename a version) is left to the shim:
`resolve_shim` returns None and the caller probes through it as before.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass

#: The lines of pyenv's shim (as `pyenv rehash` writes it) that name its root.
_SHIM_ROOT = re.compile(rb'^export PYENV_ROOT="(?P<root>[^"\n]+)"$', re.MULTILINE)
_SHIM_EXEC = re.compile(
    rb'^exec "(?P<root>[^"\n]+)/libexec/pyenv" exec "\$program" "\$@"$', re.MULTILINE
)
#: The most read of a shim or a version file (real ones are a few hundred bytes).
READ_MAX_BYTES = 4096
#: Hooks that may change which version is chosen or which binary answers.
_CHOOSING_HOOKS = ("version-name", "which")
_VERSION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*$")


@dataclass(frozen=True, slots=True)
class ShimTarget:
    """The binary a shim would run, and what chose it."""

    binary: str
    """`$PYENV_ROOT/versions/<version>/bin/<program>`."""
    version: str
    selected_by: str
    """`PYENV_VERSION`, or the path of the version file that named the version."""


def resolve_shim(path: str, *, cwd: str, env: Mapping[str, str]) -> ShimTarget | None:
    """The binary the pyenv shim at `path` would run from `cwd` under `env`; None when
    `path` is not a pyenv shim or its choice is not followed exactly here."""
    shim_dir = os.path.dirname(os.path.abspath(path))
    if os.path.basename(shim_dir) != "shims":
        return None
    text = _read_small(path)
    if text is None:
        return None
    named, execs = _SHIM_ROOT.search(text), _SHIM_EXEC.search(text)
    if named is None or execs is None or named["root"] != execs["root"]:
        return None
    root = os.fsdecode(named["root"])
    if shim_dir != os.path.join(root, "shims") or _has_choosing_hooks(root, env):
        return None
    chosen = _chosen_version(root, cwd, env)
    if chosen is None:
        return None
    version, selected_by = chosen
    binary = os.path.join(root, "versions", version, "bin", os.path.basename(path))
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        return None  # pyenv would try the next version, a prefix, or fail: not followed
    return ShimTarget(binary=binary, version=version, selected_by=selected_by)


def _chosen_version(root: str, cwd: str, env: Mapping[str, str]) -> tuple[str, str] | None:
    named = env.get("PYENV_VERSION", "")
    if named:
        versions, selected_by = named.split(":"), "PYENV_VERSION"
    else:
        version_file = _version_file(root, cwd, env)
        if version_file is None:
            return None
        text = _read_small(version_file)
        if text is None:
            return None
        versions, selected_by = _versions_in(text), version_file
    first = versions[0] if versions else "system"
    if first == "system" or not _VERSION_NAME.match(first):
        return None
    return first, selected_by


def _version_file(root: str, cwd: str, env: Mapping[str, str]) -> str | None:
    """The file pyenv reads the version from (`pyenv version-file`)."""
    starts = [env.get("PYENV_DIR") or cwd]
    if starts[0] != cwd:
        starts.append(cwd)
    for start in starts:
        directory = os.path.abspath(start)
        while True:
            candidate = os.path.join(directory, ".python-version")
            if os.path.isfile(candidate):  # as pyenv's `-f`: a dangling link is passed over
                return candidate
            parent = os.path.dirname(directory)
            if parent == directory:
                break
            directory = parent
    return os.path.join(root, "version") if os.path.exists(os.path.join(root, "version")) else None


def _versions_in(text: bytes) -> list[str]:
    """The versions a version file names: each line's first word, comments skipped."""
    versions = []
    for line in text.decode("utf-8", "replace").splitlines():
        words = line.split()
        if words and not words[0].startswith("#"):
            versions.append(words[0])
    return versions


def _has_choosing_hooks(root: str, env: Mapping[str, str]) -> bool:
    """Whether a hook directory pyenv searches holds hooks that may change the choice."""
    dirs = [*env.get("PYENV_HOOK_PATH", "").split(":"), os.path.join(root, "pyenv.d")]
    dirs += ["/usr/local/etc/pyenv.d", "/etc/pyenv.d", "/usr/lib/pyenv/hooks"]
    plugins = os.path.join(root, "plugins")
    try:
        dirs += [os.path.join(plugins, p, "etc", "pyenv.d") for p in os.listdir(plugins)]
    except OSError:
        pass
    return any(os.path.isdir(os.path.join(d, hook)) for d in dirs if d for hook in _CHOOSING_HOOKS)


def _read_small(path: str) -> bytes | None:
    """At most `READ_MAX_BYTES` of a regular file (a version file may be the repository's:
    opened without blocking, so a FIFO put there cannot hang us), or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, READ_MAX_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)

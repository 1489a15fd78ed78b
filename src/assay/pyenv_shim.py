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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

#: The lines of pyenv's shim (as `pyenv rehash` writes it) that name its root.
_SHIM_ROOT = re.compile(rb'^export PYENV_ROOT="(?P<root>[^"\n]+)"$', re.MULTILINE)
_SHIM_EXEC = re.compile(
    rb'^exec "(?P<root>[^"\n]+)/libexec/pyenv" exec "\$program" "\$@"$', re.MULTILINE
)
#: The most read of a shim or a version file (real ones are a few hundred bytes).
READ_MAX_BYTES = 4096
#: The most read of a hook (pyenv-virtualenv's largest is about 3 KB).
HOOK_READ_MAX_BYTES = 16384
_VERSION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*$")


@dataclass(frozen=True, slots=True)
class ShimTarget:
    """The binary a shim would run, and what chose it."""

    binary: str
    """`$PYENV_ROOT/versions/<version>/bin/<program>`."""
    version: str
    selected_by: str
    """`PYENV_VERSION`, or the path of the version file that named the version."""
    only_version: bool = True
    """Whether it names no other version after this one (`3.12:3.11` names two)."""


def resolve_shim(path: str, *, cwd: str, env: Mapping[str, str]) -> ShimTarget | None:
    """The binary the pyenv shim at `path` would run from `cwd` under `env`; None when
    `path` is not a pyenv shim or its choice is not followed exactly here."""
    return _resolve(path, env, lambda root: _version_file(root, cwd, env))


def resolve_shim_anywhere(
    path: str, *, tree: str, cwd: str, env: Mapping[str, str], places: Sequence[str]
) -> ShimTarget | None:
    """The binary the pyenv shim at `path` would run from `cwd` (inside `tree`) wherever
    the tree is run from: in place, or copied to a fresh directory under any of `places`
    (a workspace). None when the answer depends on where (a `.python-version` above the
    tree that is not above every place, or the other way round), or is not followed here.

    A version file inside the tree goes wherever the tree does; above it, pyenv would see
    the host's directories of wherever the run happens, so every such start must agree."""
    if env.get("PYENV_DIR") and not env.get("PYENV_VERSION"):
        return None  # pyenv would search from a directory of the host's choosing first

    def version_file(root: str) -> str | None:
        inside = _first_version_file(cwd, ceiling=tree)
        if inside is not None:
            return inside
        above = {_first_version_file(start) for start in (os.path.dirname(tree), *places)}
        if len(above) != 1:
            raise _DependsOnPlace
        (found,) = above
        return found or _global_version_file(root)

    try:
        return _resolve(path, env, version_file)
    except _DependsOnPlace:
        return None


def resolve_shim_in_tree(
    path: str, *, tree: str, cwd: str, env: Mapping[str, str]
) -> ShimTarget | None:
    """The binary the pyenv shim at `path` would run from `cwd` inside `tree` wherever a
    sandbox shows the tree (at its own path or another) and nothing of the host's above
    it: chosen by `PYENV_VERSION`, by a `.python-version` in the tree between `cwd` and
    its root (a regular file: a link could lead to what the sandbox does not show), or,
    with no such file above the tree either, by the global version file. One version
    named, exactly: `pyenv exec` exports them all, and this knows the first only. None
    otherwise (the shim is left to choose)."""
    if env.get("PYENV_DIR") and not env.get("PYENV_VERSION"):
        return None

    def version_file(root: str) -> str | None:
        inside = _first_version_file(cwd, ceiling=tree)
        if inside is not None:
            if os.path.islink(inside):
                raise _DependsOnPlace
            return inside
        if _first_version_file(os.path.dirname(tree)) is not None:
            raise _DependsOnPlace
        return _global_version_file(root)

    try:
        target = _resolve(path, env, version_file)
    except _DependsOnPlace:
        return None
    return target if target is not None and target.only_version else None


class _DependsOnPlace(Exception):
    """Which version a shim picks depends on where the tree runs from."""


def _resolve(
    path: str, env: Mapping[str, str], version_file: Callable[[str], str | None]
) -> ShimTarget | None:
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
    chosen = _chosen_version(root, env, version_file)
    if chosen is None:
        return None
    version, selected_by, only = chosen
    binary = os.path.join(root, "versions", version, "bin", os.path.basename(path))
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        return None  # pyenv would try the next version, a prefix, or fail: not followed
    return ShimTarget(binary=binary, version=version, selected_by=selected_by, only_version=only)


def _chosen_version(
    root: str, env: Mapping[str, str], version_file: Callable[[str], str | None]
) -> tuple[str, str, bool] | None:
    named = env.get("PYENV_VERSION", "")
    if named:
        versions, selected_by = named.split(":"), "PYENV_VERSION"
    else:
        found = version_file(root)
        if found is None:
            return None
        text = _read_small(found)
        if text is None:
            return None
        versions, selected_by = _versions_in(text), found
    first = versions[0] if versions else "system"
    if first == "system" or not _VERSION_NAME.match(first):
        return None
    return first, selected_by, len(versions) == 1


def _version_file(root: str, cwd: str, env: Mapping[str, str]) -> str | None:
    """The file pyenv reads the version from (`pyenv version-file`)."""
    starts = [env.get("PYENV_DIR") or cwd]
    if starts[0] != cwd:
        starts.append(cwd)
    for start in starts:
        found = _first_version_file(start)
        if found is not None:
            return found
    return _global_version_file(root)


def _first_version_file(start: str, *, ceiling: str | None = None) -> str | None:
    """The first `.python-version` from `start` upwards (to `ceiling`, inclusive)."""
    directory = os.path.abspath(start)
    while True:
        candidate = os.path.join(directory, ".python-version")
        if os.path.isfile(candidate):  # as pyenv's `-f`: a dangling link is passed over
            return candidate
        parent = os.path.dirname(directory)
        if parent == directory or directory == ceiling:
            return None
        directory = parent


def _global_version_file(root: str) -> str | None:
    path = os.path.join(root, "version")
    return path if os.path.exists(path) else None


def _versions_in(text: bytes) -> list[str]:
    """The versions a version file names: each line's first word, comments skipped."""
    versions = []
    for line in text.decode("utf-8", "replace").splitlines():
        words = line.split()
        if words and not words[0].startswith("#"):
            versions.append(words[0])
    return versions


def _has_choosing_hooks(root: str, env: Mapping[str, str]) -> bool:
    """Whether a hook directory pyenv searches holds hooks that may change the choice.
    A `which` hook wholly inside `if [ ! -x "${PYENV_COMMAND_PATH}" ]` acts only when the
    chosen version lacks the program, and `_resolve` never follows that case: such hooks
    (pyenv-virtualenv's, installed with pyenv by its installer) are no obstacle."""
    dirs = [*env.get("PYENV_HOOK_PATH", "").split(":"), os.path.join(root, "pyenv.d")]
    dirs += ["/usr/local/etc/pyenv.d", "/etc/pyenv.d", "/usr/lib/pyenv/hooks"]
    plugins = os.path.join(root, "plugins")
    try:
        dirs += [os.path.join(plugins, p, "etc", "pyenv.d") for p in os.listdir(plugins)]
    except OSError:
        pass
    for directory in filter(None, dirs):
        if os.path.isdir(os.path.join(directory, "version-name")):
            return True
        which = os.path.join(directory, "which")
        try:
            hooks = os.listdir(which)
        except OSError:
            continue
        if not all(_only_for_a_missing_program(os.path.join(which, h)) for h in hooks):
            return True
    return False


#: The guard of a `which` hook that acts only when the version lacks the program.
_MISSING_PROGRAM_GUARD = re.compile(r'^if \[ ! -x "\$\{?PYENV_COMMAND_PATH\}?" \]( &&.*)?; then$')
#: Shell words that open and close a block (a hook's code is plain lines of them).
_OPENS, _CLOSES = re.compile(r"^(if|case|for|while|until)\b"), re.compile(r"^(fi|esac|done)\b")


def _only_for_a_missing_program(hook: str) -> bool:
    """Whether every statement of the `which` hook at `hook` sits inside one leading
    `if [ ! -x "${PYENV_COMMAND_PATH}" ]` block (read, never run; anything else: False)."""
    if not hook.endswith(".bash"):
        return True  # pyenv sources only `*.bash` hooks
    text = _read_small(hook, limit=HOOK_READ_MAX_BYTES)
    if text is None:
        return False
    lines = [
        line.strip()
        for line in text.decode("utf-8", "replace").splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]
    if not lines or _MISSING_PROGRAM_GUARD.match(lines[0]) is None:
        return not lines
    depth = 0
    for number, line in enumerate(lines):
        depth += bool(_OPENS.match(line)) - bool(_CLOSES.match(line))
        if depth == 0 and number != len(lines) - 1:
            return False  # a statement after the guarded block runs for every program
    return depth == 0


def _read_small(path: str, *, limit: int = READ_MAX_BYTES) -> bytes | None:
    """A regular file of at most `limit` bytes (a version file may be the repository's:
    opened without blocking, so a FIFO put there cannot hang us), or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, limit + 1)
        return None if len(data) > limit else data
    except OSError:
        return None
    finally:
        os.close(fd)

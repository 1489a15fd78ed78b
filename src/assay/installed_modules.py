"""The top-level modules installed in the environment a plan's Python checks run in, read
from its `site-packages` directory, nothing run: what a module a change adds at the root
must not stand in for (`assay.code_signals`). A red team's change added a `hypothesis/`
package of its own, whose `@given` fed a broken `add` only the values it passed for.

Only a virtualenv's interpreter is followed (in the tree, or outside it, as `PATH` finds
it): its `site-packages` is where its own distributions are. An interpreter of the system
adds none here; the base's manifests name what the project depends on all the same.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from assay.discovery.model import ProjectEnv

__all__ = ["installed_modules"]

#: The most names read from one `site-packages`.
MAX_NAMES = 20_000
#: Names some distributions install at the top level by mistake, which a project's own
#: directories rightly hold.
_GENERIC = frozenset({"tests", "test", "docs", "doc", "examples", "scripts", "benchmarks"})
_MODULE_SUFFIXES = (".py", ".so", ".pyd")


def installed_modules(root: Path, env: ProjectEnv) -> frozenset[str]:
    """The top-level module names of the virtualenv whose interpreter `env` names (a path
    from `root`, or a command `PATH` finds); empty when it is no virtualenv's."""
    python = env.python
    found = str(root / python) if "/" in python and not os.path.isabs(python) else python
    found = found if os.path.isabs(found) else (shutil.which(found) or "")
    if not found:
        return frozenset()
    venv = Path(found).parent.parent
    if not (venv / "pyvenv.cfg").is_file():
        return frozenset()
    names: set[str] = set()
    for site in sorted(venv.glob("lib/python3*/site-packages")):
        try:
            entries = sorted(os.scandir(site), key=lambda e: e.name)[:MAX_NAMES]
        except OSError:
            continue
        for entry in entries:
            name = _module_name(entry)
            if name is not None and name not in _GENERIC:
                names.add(name)
    return frozenset(names)


def _module_name(entry: os.DirEntry[str]) -> str | None:
    """The module an entry of `site-packages` makes importable: a package directory, a
    module file, an extension (`_cffi_backend.cpython-311-x86_64-linux-gnu.so`)."""
    name = entry.name
    # Private modules too: hypothesis's pytest plugin is `_hypothesis_pytestplugin`.
    if name.startswith(".") or name == "__pycache__" or name.endswith((".dist-info", ".egg-info")):
        return None
    if entry.is_dir(follow_symlinks=False):
        return name if name.isidentifier() else None
    if name.endswith(_MODULE_SUFFIXES):
        stem = name.split(".", 1)[0]
        return stem if stem.isidentifier() else None
    return None

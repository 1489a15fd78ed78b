"""Where checks run: the `Sandbox` seam and its backends, chosen by name.

`select_sandbox("auto" | "bwrap" | "local" | "none")`. `auto` means bubblewrap:
when it cannot run, the caller gets `SandboxUnavailable` (with how to fix it or
how to opt into `local`), never a weaker backend in its place.
"""

from __future__ import annotations

import enum
import importlib
from typing import TYPE_CHECKING, Any

from assay.sandbox.base import CleanupError as CleanupError
from assay.sandbox.base import ProvisionError as ProvisionError
from assay.sandbox.base import Sandbox as Sandbox
from assay.sandbox.base import SandboxError as SandboxError
from assay.sandbox.base import SandboxUnavailable as SandboxUnavailable
from assay.sandbox.base import Workspace as Workspace

if TYPE_CHECKING:
    from assay.sandbox.bwrap import BwrapOptions as BwrapOptions
    from assay.sandbox.bwrap import BwrapSandbox as BwrapSandbox
    from assay.sandbox.bwrap import Limits as Limits
    from assay.sandbox.local import LocalSandbox as LocalSandbox
    from assay.sandbox.none import NoSandbox as NoSandbox
    from assay.sandbox.provision import CopyMethod as CopyMethod
    from assay.sandbox.provision import copy_tree as copy_tree
    from assay.sandbox.provision import export_commit as export_commit
    from assay.sandbox.provision import resolve_commit as resolve_commit

# Each backend is loaded on first use: a run without bubblewrap, or a cache hit, never
# pays for bwrap, seccomp and cgroup (start-up is paid on every call).
_LAZY = {
    "BwrapOptions": "assay.sandbox.bwrap",
    "BwrapSandbox": "assay.sandbox.bwrap",
    "Limits": "assay.sandbox.bwrap",
    "LocalSandbox": "assay.sandbox.local",
    "NoSandbox": "assay.sandbox.none",
    "CopyMethod": "assay.sandbox.provision",
    "copy_tree": "assay.sandbox.provision",
    "export_commit": "assay.sandbox.provision",
    "resolve_commit": "assay.sandbox.provision",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


class SandboxChoice(enum.StrEnum):
    """The values `--sandbox` accepts."""

    AUTO = "auto"
    BWRAP = "bwrap"
    LOCAL = "local"
    NONE = "none"


def select_sandbox(name: str, *, bwrap_options: BwrapOptions | None = None) -> Sandbox:
    """The backend `--sandbox NAME` asks for; raises ValueError for an unknown name.

    Does not probe: call `ensure_available()` (or `describe()`) once per run before
    running anything, and turn `SandboxUnavailable` into `sandbox_unavailable` checks.
    """
    match SandboxChoice(name):
        case SandboxChoice.AUTO | SandboxChoice.BWRAP:
            from assay.sandbox.bwrap import BwrapSandbox

            return BwrapSandbox(bwrap_options)
        case SandboxChoice.LOCAL:
            from assay.sandbox.local import LocalSandbox

            return LocalSandbox()
        case SandboxChoice.NONE:
            from assay.sandbox.none import NoSandbox

            return NoSandbox()
    raise ValueError(f"unknown sandbox {name!r}")  # unreachable: SandboxChoice() raised


__all__ = [
    "BwrapOptions",
    "BwrapSandbox",
    "CleanupError",
    "CopyMethod",
    "Limits",
    "LocalSandbox",
    "NoSandbox",
    "ProvisionError",
    "Sandbox",
    "SandboxChoice",
    "SandboxError",
    "SandboxUnavailable",
    "Workspace",
    "copy_tree",
    "export_commit",
    "resolve_commit",
    "select_sandbox",
]

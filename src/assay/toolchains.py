"""The toolchain registry: how to find and identify each tool assay knows, derived from the
tool declarations in `assay.tools`.

Pure data plus tiny helpers; probing (which runs processes) lives in `assay.probe`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assay.tools import tool_spec
from assay.tools.index import ANY_VERSION, TOOL_ECOSYSTEMS, Ecosystem

if TYPE_CHECKING:
    from assay.tools.spec import ToolSpec

    #: Every tool assay can find and identify by itself, by logical name (from `assay.tools`);
    #: built, from every declaration, when first read.
    TOOLCHAINS: Mapping[str, Toolchain]

_ANY_VERSION = ANY_VERSION


@dataclass(frozen=True, slots=True)
class Toolchain:
    """How to find and identify one logical tool."""

    tool: str
    """Logical name, as `Check.tool` spells it."""
    ecosystem: Ecosystem
    """The ecosystem it is declared in; GENERIC for a tool assay has no entry for."""
    candidates: tuple[str, ...]
    """Binaries to look for on PATH, in order of preference."""
    version_args: tuple[str, ...] = ("--version",)
    """Arguments after the binary that make it print its version."""
    version_pattern: re.Pattern[str] = _ANY_VERSION
    """Group 1 is the version string as the tool reports it."""
    install_hint: str = ""
    """What to install when no candidate is found."""
    local_dirs: tuple[str, ...] = ()
    """Project-local bin directories (relative to the root) searched before PATH."""
    module: str | None = None
    """The Python module name when the tool can also run as `python -m <module>`."""

    def extract_version(self, text: str) -> str | None:
        """The version in `text`, or None when the output does not contain one."""
        match = self.version_pattern.search(text)
        return match.group(1) if match else None


def _toolchain(spec: ToolSpec) -> Toolchain:
    return Toolchain(
        tool=spec.name,
        ecosystem=spec.ecosystem,
        candidates=spec.binaries,
        version_args=spec.version_args,
        version_pattern=spec.version_pattern,
        install_hint=spec.install_hint,
        local_dirs=spec.local_dirs,
        module=spec.module,
    )


_toolchains: dict[str, Toolchain | None] = {}


def toolchain_for(tool: str) -> Toolchain | None:
    """The registry entry for `tool`, or None when assay does not know it (then no
    declaration is loaded; else only its ecosystem's)."""
    if tool not in _toolchains:
        spec = tool_spec(tool)
        _toolchains[tool] = _toolchain(spec) if spec is not None and spec.is_toolchain else None
    return _toolchains[tool]


def __getattr__(name: str) -> Any:
    if name == "TOOLCHAINS":
        found = {tool: toolchain_for(tool) for tool in TOOL_ECOSYSTEMS}
        return {tool: toolchain for tool, toolchain in found.items() if toolchain is not None}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def generic_toolchain(tool: str, binary: str | None = None) -> Toolchain:
    """An entry for a tool assay does not know: look for `binary` (default: `tool`); it is
    identified by the digest of its file, never by running it (see `probe`)."""
    return Toolchain(
        tool=tool,
        ecosystem=Ecosystem.GENERIC,
        candidates=(binary or tool,),
        install_hint=f"install {binary or tool} or put it on PATH",
    )

"""The registry of tools assay knows: language, binaries to look for, how to ask their version.

Pure data plus tiny helpers; probing (which runs processes) lives in `assay.probe`.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass


class Language(enum.StrEnum):
    """The languages assay has adapters for."""

    PYTHON = "python"
    TYPESCRIPT = "typescript"
    GO = "go"
    RUST = "rust"
    UNKNOWN = "unknown"
    """A tool assay has no entry for, probed generically."""


#: The first dotted version number in a tool's version output ("mypy 1.10.0 (compiled: yes)").
_ANY_VERSION = re.compile(r"(\d+(?:\.\d+)+(?:[-+.]?[0-9A-Za-z]+)*)")


@dataclass(frozen=True, slots=True)
class Toolchain:
    """How to find and identify one logical tool."""

    tool: str
    """Logical name, as `Check.tool` spells it."""
    language: Language
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


_PY_LOCAL = (".venv/bin", "venv/bin")
_NODE_LOCAL = ("node_modules/.bin",)


def _python_itself(tool: str) -> Toolchain:
    """A logical tool that is the interpreter; its name selects the output parser."""
    return Toolchain(
        tool,
        Language.PYTHON,
        ("python3", "python"),
        install_hint="install Python 3 (Debian: `apt-get install python3`)",
        local_dirs=_PY_LOCAL,
    )


def _python(tool: str, hint: str, *, module: str | None = None) -> Toolchain:
    return Toolchain(
        tool=tool,
        language=Language.PYTHON,
        candidates=(tool,),
        install_hint=hint,
        local_dirs=_PY_LOCAL,
        module=module,
    )


def _node(tool: str, hint: str, candidates: tuple[str, ...] | None = None) -> Toolchain:
    return Toolchain(
        tool=tool,
        language=Language.TYPESCRIPT,
        candidates=candidates or (tool,),
        install_hint=hint,
        local_dirs=_NODE_LOCAL,
    )


#: Every tool assay knows, by logical name.
TOOLCHAINS: Mapping[str, Toolchain] = {
    tc.tool: tc
    for tc in (
        _python_itself("python"),
        _python_itself("compileall"),  # `python -m compileall`
        _python_itself("unittest"),  # `python -m unittest`
        _python("mypy", "install mypy (`pip install mypy`)", module="mypy"),
        _python("pytest", "install pytest (`pip install pytest`)", module="pytest"),
        _python("ruff", "install ruff (`pip install ruff`)", module="ruff"),
        _node("pyright", "install pyright (`npm i -g pyright` or `pip install pyright`)"),
        Toolchain(
            "node",
            Language.TYPESCRIPT,
            ("node", "nodejs"),
            install_hint="install Node.js (Debian: `apt-get install nodejs`)",
        ),
        # `node --test`: the same binary, parsed as TAP / spec reporter output.
        Toolchain(
            "node-test",
            Language.TYPESCRIPT,
            ("node", "nodejs"),
            install_hint="install Node.js >= 18 (Debian: `apt-get install nodejs`)",
        ),
        _node("npm", "install npm (Debian: `apt-get install npm`)"),
        # A package.json script run by whichever package manager the project uses.
        _node(
            "npm-test",
            "install the project's package manager (npm, pnpm, yarn or bun)",
            candidates=("npm", "pnpm", "yarn", "bun"),
        ),
        _node("tsc", "install TypeScript (`npm i -g typescript` or `npm i -D typescript`)"),
        _node("eslint", "install ESLint (`npm i -g eslint` or `npm i -D eslint`)"),
        _node("vitest", "install Vitest (`npm i -D vitest`)"),
        _node("jest", "install Jest (`npm i -D jest`)"),
        Toolchain(
            "go",
            Language.GO,
            ("go",),
            version_args=("version",),
            # "go version go1.19.8 linux/amd64"
            version_pattern=re.compile(r"go version go(\S+)"),
            install_hint="install Go (Debian: `apt-get install golang-go`)",
        ),
        Toolchain(
            "cargo",
            Language.RUST,
            ("cargo",),
            install_hint="install Rust (https://rustup.rs, or Debian: `apt-get install cargo`)",
        ),
        Toolchain(
            "rustc",
            Language.RUST,
            ("rustc",),
            install_hint="install Rust (https://rustup.rs, or Debian: `apt-get install rustc`)",
        ),
        # Task runners: the commands they run are the project's, the runner is identified.
        Toolchain(
            "make",
            Language.UNKNOWN,
            ("make", "gmake"),
            install_hint="install make (Debian: `apt-get install make`)",
        ),
    )
}


def toolchain_for(tool: str) -> Toolchain | None:
    """The registry entry for `tool`, or None when assay does not know it."""
    return TOOLCHAINS.get(tool)


def generic_toolchain(tool: str, binary: str | None = None) -> Toolchain:
    """An entry for a tool assay does not know: look for `binary` (default: `tool`); it is
    identified by the digest of its file, never by running it (see `probe`)."""
    return Toolchain(
        tool=tool,
        language=Language.UNKNOWN,
        candidates=(binary or tool,),
        install_hint=f"install {binary or tool} or put it on PATH",
    )

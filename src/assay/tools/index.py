"""What is declared where, readable without loading a single declaration.

Building the declarations (`assay.tools.python`, `.node`, ...) costs an import each, and
most runs need one ecosystem or none: `assay run -- CMD` of a command assay has no
declaration for identifies it by its digest and needs none. This index says which
module declares each tool, and carries the few facts every run reads (which environment
variables steer a toolchain, where toolchains live under a home). `assay.tools` checks
each module against it when the module loads, so the index cannot drift from them.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping


class Ecosystem(enum.StrEnum):
    """Which toolchain a tool belongs to; the plan keeps one check per kind per ecosystem."""

    PYTHON = "python"
    NODE = "node"
    GO = "go"
    RUST = "rust"
    JAVA = "java"
    CMAKE = "cmake"
    """C and C++ built with CMake and tested with CTest."""
    AUTOTOOLS = "autotools"
    """C and C++ configured by GNU autotools and tested by `make check`."""
    MESON = "meson"
    """C and C++ built with Meson and tested by `meson test`."""
    GENERIC = "generic"
    """A wrapper (a Makefile target, a shell line) that may cover any ecosystem."""


#: The first dotted version number in a tool's version output ("mypy 1.10.0 (compiled: yes)").
ANY_VERSION = re.compile(r"(\d+(?:\.\d+)+(?:[-+.]?[0-9A-Za-z]+)*)")

#: The logical tool of a command assay runs as written and reads generically.
SHELL = "shell"

#: Each ecosystem's module under `assay.tools`, in the order install steps run and tools are listed.
MODULES: Mapping[Ecosystem, str] = {
    Ecosystem.PYTHON: "python",
    Ecosystem.NODE: "node",
    Ecosystem.GO: "go",
    Ecosystem.RUST: "rust",
    Ecosystem.JAVA: "java",
    Ecosystem.CMAKE: "cmake",
    Ecosystem.AUTOTOOLS: "autotools",
    Ecosystem.MESON: "meson",
    Ecosystem.GENERIC: "generic",
}

#: The tools each ecosystem declares, in its declaration's order.
TOOL_NAMES: Mapping[Ecosystem, tuple[str, ...]] = {
    Ecosystem.PYTHON: (
        "python",
        "compileall",
        "unittest",
        "mypy",
        "pytest",
        "ruff",
        "pyright",
        "ty",
    ),
    Ecosystem.NODE: (
        "node",
        "node-test",
        "npm",
        "npm-test",
        "npm-jest",
        "npm-vitest",
        "tsc",
        "eslint",
        "prettier",
        "biome",
        "oxlint",
        "vitest",
        "jest",
    ),
    Ecosystem.GO: ("go",),
    Ecosystem.RUST: ("cargo", "rustc"),
    Ecosystem.JAVA: ("maven", "gradle", "java"),
    Ecosystem.CMAKE: ("cmake", "ctest"),
    Ecosystem.AUTOTOOLS: ("autoreconf", "configure", "make-check"),
    Ecosystem.MESON: ("meson", "meson-test"),
    Ecosystem.GENERIC: ("make", SHELL),
}

#: Each declared tool's ecosystem, by the name `Check.tool` spells.
TOOL_ECOSYSTEMS: Mapping[str, Ecosystem] = {
    name: ecosystem for ecosystem, names in TOOL_NAMES.items() for name in names
}

#: Environment variable prefixes that can change which version of a tool answers.
STEERING_ENV: Mapping[Ecosystem, tuple[str, ...]] = {
    Ecosystem.PYTHON: ("PYTHON", "VIRTUAL_ENV", "PYENV"),
    Ecosystem.NODE: ("NODE", "NPM_CONFIG", "VOLTA"),
    Ecosystem.GO: ("GO",),
    Ecosystem.RUST: ("RUSTUP", "CARGO", "RUSTC"),
    Ecosystem.JAVA: ("JAVA", "JDK_JAVA_OPTIONS", "MAVEN", "M2_HOME", "GRADLE"),
    Ecosystem.CMAKE: (),
    Ecosystem.AUTOTOOLS: (),
    Ecosystem.MESON: (),
    Ecosystem.GENERIC: ("ASDF", "MISE", "RTX", "LD_LIBRARY_PATH", "LD_PRELOAD"),
}

#: Package managers' own homes, by the variable that moves each, at their default place
#: under HOME: the pnpm and yarn versions corepack fetched (its shims run them from here),
#: yarn berry's global cache (a Plug'n'Play install reads its packages from it) and pnpm's
#: standalone install and store. Toolchain parts only: no configuration, no token. Here,
#: not in `assay.tools.node`: every bubblewrap run reads them, whatever its tools.
PACKAGE_MANAGER_HOMES: Mapping[str, str] = {
    "COREPACK_HOME": ".cache/node/corepack",
    "YARN_GLOBAL_FOLDER": ".yarn/berry",
    "PNPM_HOME": ".local/share/pnpm",
}

#: Toolchain directories under a home, relative to it (what a sandbox may show).
HOME_DIRS: Mapping[Ecosystem, tuple[str, ...]] = {
    Ecosystem.PYTHON: (
        ".pyenv",
        ".local/bin",
        ".local/lib",
        ".local/share/uv/python",
        ".local/share/uv/tools",
        ".local/share/pipx/venvs",
        ".local/pipx/venvs",
    ),
    Ecosystem.NODE: (
        ".nvm/versions",
        ".nvm/nvm.sh",
        ".volta/bin",
        ".volta/tools/image",
        ".bun/bin",
        *PACKAGE_MANAGER_HOMES.values(),
    ),
    Ecosystem.GO: ("go/bin", "go/pkg/mod"),
    Ecosystem.RUST: (".cargo/bin", ".rustup"),
    Ecosystem.JAVA: (".m2/repository", ".gradle/wrapper/dists"),
    Ecosystem.CMAKE: (),
    Ecosystem.AUTOTOOLS: (),
    Ecosystem.MESON: (),
    Ecosystem.GENERIC: (
        ".rbenv",
        ".sdkman/candidates",
        ".elan",
        ".ghcup/bin",
        ".ghcup/ghc",
        ".deno/bin",
    ),
}

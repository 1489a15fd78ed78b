"""A crate CI builds with `RUSTFLAGS=-Dwarnings`, written before Rust 1.80's cfg checking.

Rust 1.80 warns of every `cfg` name cargo was not told of (`unexpected_cfgs`), and a
build script had no way to tell it before that release (`cargo::rustc-check-cfg`). Under
its CI's `-Dwarnings` such a crate then fails to compile on a toolchain of today, clean as
its maintainers' toolchains found it: semver 1.0.14, 26 errors for `doc_cfg` and the
`no_*` names its build.rs sets. Where the crate declares no expected cfg at all, that one
lint is allowed after the flags; every other warning still fails the check, as in its CI.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import replace
from pathlib import Path

from assay.discovery.files import RepoFiles, UnreadableFile
from assay.evidence import Check

#: The flags that make every warning an error: `-Dwarnings`, `-D warnings`, `--deny=warnings`.
_DENIES_WARNINGS = re.compile(r"(?:^|\s)(?:-D\s*|--deny[=\s])warnings(?:\s|$)")
#: What a crate written for Rust 1.80 on says of its cfg names, in Cargo.toml or build.rs.
_DECLARES_CFGS = re.compile(r"rustc-check-cfg|check-cfg|unexpected_cfgs")
_FLAG_VARIABLES = ("RUSTFLAGS", "RUSTDOCFLAGS")
_ALLOW = "-A unexpected_cfgs"


def allowing_undeclared_cfgs(check: Check, root: str) -> Check:
    """`check` with `-A unexpected_cfgs` after each warnings-denying flag variable of a
    cargo command (clippy's too), where the crate it builds declares no expected cfg."""
    if check.tool != "cargo" and Path(check.argv[0] if check.argv else "").name != "cargo":
        return check
    denying = [name for name in _FLAG_VARIABLES if _DENIES_WARNINGS.search(check.env.get(name, ""))]
    if not denying or _declares_cfgs(RepoFiles(root), check.cwd):
        return check
    env = {**check.env, **{name: f"{check.env[name]} {_ALLOW}" for name in denying}}
    return replace(check, env=env)


def undeclared_cfgs_note(names: list[str]) -> str:
    return (
        f"{', '.join(names)}: {_ALLOW} added to the -Dwarnings flags: the crate declares no"
        " expected cfg, as none could before Rust 1.80 warned of undeclared ones"
    )


def _declares_cfgs(files: RepoFiles, crate: str) -> bool:
    """Whether the crate's or the workspace's Cargo.toml or build.rs names cfg checking,
    read as discovery reads the tree (inside it, regular files, bounded); a file that
    cannot be read is taken to (the flags are left as they are)."""
    for directory in dict.fromkeys((crate, ".")):
        for name in ("Cargo.toml", "build.rs"):
            try:
                text = files.read_text(posixpath.join(directory, name))
            except UnreadableFile:
                return True
            if text is not None and _DECLARES_CFGS.search(text):
                return True
    return False

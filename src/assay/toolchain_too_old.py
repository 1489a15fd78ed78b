"""A check that failed because the project needs a newer toolchain than the one here.

go-cmp's go.mod says `go 1.21`; with Go 1.19 its tests use `time.Time.Compare`, which
1.19 lacks, and `go test` fails with "note: module requires Go 1.21". That is not the
code failing: the check could not be made here (`toolchain_missing`, UNVERIFIED), and the
note says which release to install. Only a failed run is read: the toolchain's own
words, as it prints them after the errors they explain, or, for `go vet`, which prints
none, the `go` line of the module's go.mod against the release that ran.
"""

from __future__ import annotations

import re

from assay.untrusted_files import read_untrusted

__all__ = ["go_mod_too_new", "toolchain_too_old"]

#: What each toolchain prints when the project asks for a newer release than it is.
_TOO_OLD = (
    # go build/test, Go 1.19 and 1.20: after the compile errors.
    re.compile(r"^note: module requires (?P<wanted>Go \S+)$", re.MULTILINE),
    # Go 1.21 and later with GOTOOLCHAIN=local: "go: go.mod requires go >= 1.23 (running ...".
    re.compile(r"^go: \S+ requires (?P<wanted>go >= \S+) \(running go \S+", re.MULTILINE),
    # cargo, for a package's `rust-version`.
    re.compile(r"requires (?P<wanted>rustc \S+) or newer, while the currently active rustc"),
    # node, for an option a later release has (sindresorhus/is: Node 22's type stripping).
    re.compile(r"^\S*node: bad option: (?P<wanted>--[\w-]+)$", re.MULTILINE),
    # pnpm itself, too new for this node (pnpm 11 under Node 20): it warns, then crashes.
    re.compile(r"This version of pnpm requires at least (?P<wanted>Node\.js v[\d.]+)"),
    # yarn 2 and later, likewise.
    re.compile(r"This tool requires a Node version compatible with (?P<wanted>\S+)"),
)


def toolchain_too_old(output: str) -> str | None:
    """The release a failed check's output says the project needs ("Go 1.21"), or None."""
    for pattern in _TOO_OLD:
        match = pattern.search(output)
        if match is not None:
            wanted = match["wanted"]
            if wanted.startswith("--"):
                return f"a Node.js that knows {wanted}"
            return f"Node.js {wanted}" if wanted[:1] in "<>=^~" else wanted
    return None


#: go.mod's `go` directive: the least Go release the module is written for.
_GO_DIRECTIVE = re.compile(rb"^go\s+(\d[\w.]*)\s*$", re.MULTILINE)
MAX_GO_MOD_BYTES = 1024 * 1024


def go_mod_too_new(module_dir: str, running: str) -> str | None:
    """ "Go 1.21" when the go.mod in `module_dir` asks for a newer Go than `running`
    ("1.19.8"), else None."""
    data = read_untrusted(module_dir, "go.mod", limit=MAX_GO_MOD_BYTES)
    match = _GO_DIRECTIVE.search(data) if isinstance(data, bytes) else None
    if match is None:
        return None
    wanted = match[1].decode()
    return f"Go {wanted}" if _release(wanted) > _release(running) else None


def _release(version: str) -> tuple[int, ...]:
    """(1, 21) for "1.21"; a pre-release (`1.22rc1`) counts by its numbers."""
    return tuple(int(n) for n in re.findall(r"\d+", version)[:3])

"""A check that failed because the project needs a newer toolchain than the one here.

go-cmp's go.mod says `go 1.21`; with Go 1.19 its tests use `time.Time.Compare`, which
1.19 lacks, and `go test` fails with "note: module requires Go 1.21". That is not the
code failing: the check could not be made here (`toolchain_missing`, UNVERIFIED), and the
note says which release to install. Go 1.19 prints that note after any failed build of such
a module, though, a syntax error too (Masterminds/semver): it is believed only where every
compile error above it is one a newer Go would not make (a package, a builtin, a method or
a form of `range` it added, or a feature its words say needs a later release). Only a failed run is read: the toolchain's own
words, as it prints them after the errors they explain, or, for `go vet`, which prints
none, the `go` line of the module's go.mod against the release that ran. For Node.js, what
the package managers say of a package's `engines` (nanoevents 10 wants Node 22; under Node
20 its coverage step refused to run) and what tools say of the release they need.
"""

from __future__ import annotations

import re

from assay.untrusted_files import read_untrusted

__all__ = ["UNKNOWN_NODE_OPTION", "go_mod_too_new", "toolchain_too_old"]

#: How `toolchain_too_old` names a Node.js for an option this one does not know.
UNKNOWN_NODE_OPTION = "a Node.js that knows "

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
    # What tools run by a project's scripts say of the Node.js they need (`node` is a range).
    # nanoevents' `bnt --coverage`:
    re.compile(r"You need Node\.js (?P<node>>= ?v?\d+(?:\.\d+)*) to "),
    # Vite 7: "You are using Node.js 20.11.0. Vite requires Node.js version 20.19+ or 22.12+."
    re.compile(r"requires Node\.js version (?P<node>\d+(?:\.\d+)*\+?(?: or \d+(?:\.\d+)*\+?)*)"),
    # yarn 1, for the package's `engines` (only when they exclude this Node.js).
    re.compile(
        r'The engine "node" is incompatible with this module\. Expected version "(?P<node>[^"]+)"'
    ),
    # pnpm warns of the package's `engines` whichever of them excludes what ran: the range
    # is taken only where it excludes the Node.js pnpm names (`current`).
    re.compile(
        r'Unsupported engine: wanted: \{[^}]*"node":"(?P<node>[^"]+)"[^}]*\} '
        r'\(current: \{"node":"v(?P<current>[\d.]+)"'
    ),
)


def toolchain_too_old(output: str) -> str | None:
    """The release a failed check's output says the project needs ("Go 1.21"), or None."""
    for pattern in _TOO_OLD:
        if pattern is _TOO_OLD[0] and not newer_go_explains(output):
            continue
        for match in pattern.finditer(output):
            found = match.groupdict()
            if found.get("node") is not None:
                current = found.get("current")
                if current is None or _excludes(found["node"], current):
                    return f"Node.js {found['node']}"
                continue
            wanted = match["wanted"]
            if wanted.startswith("--"):
                return f"{UNKNOWN_NODE_OPTION}{wanted}"
            return f"Node.js {wanted}" if wanted[:1] in "<>=^~" else wanted
    return None


def _excludes(node_range: str, current: str) -> bool:
    """Whether `current` ("20.20.2") is older than every release an npm semver range
    ("^22.0.0 || >=26") admits: below the least lower bound of its alternatives. Only
    "too old" is judged; an upper bound never is."""
    floors = []
    for alternative in node_range.split("||"):
        # A comparator's own version ("^22", ">=22.8", "22.x", "22 - 24") bounds it from
        # below unless it is an upper bound ("<24"); none at all admits every release.
        bounds = [
            _release(version)
            for op, version in re.findall(r"(<=?|>=?|[~^=]|)\s*v?(\d+(?:\.\d+)*)", alternative)
            if not op.startswith("<")
        ]
        floors.append(max(bounds, default=()))
    return bool(floors) and _release(current) < min(floors)


#: A compile error as go build, go test and go vet print it: `./version.go:605:3: message`.
_GO_ERROR = re.compile(r"^(?:vet: )?\S+\.go:\d+(?::\d+)?: (?P<message>.+)$", re.MULTILINE)
#: Standard-library packages whose names qualify what a newer Go added to them.
_GO_STD = (
    r"(?:bufio|bytes|cmp|context|errors|fmt|io|iter|log|maps|math|os|reflect|regexp|runtime"
    r"|slices|sort|strconv|strings|sync|atomic|testing|time|unicode|utf8|http|json|filepath"
    r"|fs|slog|rand|big|bits|url|exec|signal|netip|net|path|hash|crypto|tls|x509|unsafe)"
)
#: A compile error a newer Go would not make: a package of its standard library, a builtin
#: (1.21's min, max, clear), a `range` over an integer or a function (1.22, 1.23), a
#: function, method or field it added to a standard package, or its own words for a
#: feature of a later release.
_NEWER_GO = re.compile(
    r"is not in (?:GOROOT|std)\b|^undefined: (?:min|max|clear)$|^cannot range over "
    r"|requires go1\.\d+ or later|^too many errors$"
    rf"|^undefined: {_GO_STD}\.\w+$"
    rf"|undefined \(type \*?{_GO_STD}\.\w+(?:\[[^\]]*\])? has no field or method"
)


def newer_go_explains(output: str) -> bool:
    """Whether every Go compile error in `output` is one a newer Go would not make (none
    at all: nothing says otherwise)."""
    return all(_NEWER_GO.search(m["message"]) for m in _GO_ERROR.finditer(output))


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

"""A Go package from before modules whose imports need a GOPATH the run does not have.

assay runs `go test ./...` in GOPATH mode (`GO111MODULE=off`) for Go tests with no go.mod
(`assay.discovery.fallback.go_defaults`), from a workspace that is no GOPATH. A package
that imports the tree's own packages by their full path (`github.com/x/imp/sub`), or
any package from elsewhere, is then not found ("cannot find package ... in any of:"), and
no test runs: that says nothing of the code, so the check is UNVERIFIED and says what
would let go find them (a go.mod). Only paths whose first element has a dot count (a host:
a path without one is the standard library's, and not finding it is the code's fault).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

#: go's words for an import it found neither in GOROOT nor in GOPATH.
_NOT_FOUND = re.compile(r'cannot find package "(?P<path>[^"\s]{1,300})" in any of:')
#: How many of the paths a note names.
NAMED_MAX = 3


def gopath_imports_not_found(output: str, env: Mapping[str, str]) -> tuple[str, ...]:
    """The import paths a GOPATH-mode run (`env` sets `GO111MODULE=off`) could not find,
    when every one it could not find is a remote path (its first element has a dot); ()
    otherwise."""
    if env.get("GO111MODULE") != "off":
        return ()
    paths = sorted({found["path"] for found in _NOT_FOUND.finditer(output)})
    if not paths or not all("." in path.split("/", 1)[0] for path in paths):
        return ()
    return tuple(paths)

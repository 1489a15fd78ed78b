"""Who may write the warm Go build cache, and how a Go check that runs the project's code
sees it without being able to.

Go takes a cached compilation on its action ID alone: an entry (`<id>-a`) names an output
file (`<output>-d`), and a build uses that file when its size is the one the entry records
and the build ID inside it claims that action. Code that can write the cache can therefore
put any compiled package there in place of the real one. A test that compiled a `testing`
whose `Fail` records nothing, gave it the real package's action ID and wrote it over the
real output made every later tree's failing tests pass: a wrong value VERIFIED.

So only commands that compile and run nothing of the repository's write the shared cache
(`writes_shared_cache`): `go build`, `go vet`, `go list` and the like, without a flag or a
variable that has go run a program the repository names, or `-trimpath` (which keys the
module's own packages by their files alone, and go reads a file twice: once to hash it,
once to compile it, so another check's test could swap it in between). Every other Go
check (`go test`, whose test binaries are the project's code; `go run`; a build with
`-toolexec`) reads it through a private view (`through_a_view`): as the check starts, a
directory of links to the shared cache's files is made in the check's own HOME and given
to go as its cache. The check's variables do not name the shared cache, so under
bubblewrap it is mounted read-only in the check's sandbox: the links can be read and not
written through, and what the check compiles anew lands in the view, which goes with the
check's HOME.

For `go test`, a warm-up runs first with the shared cache writable (`warming_up`): the
same command with `-exec /bin/true`, which compiles, vets and links everything the tests
need exactly as the test run will (the standard library under `-race`, the dependencies,
the test packages) and runs none of it. It is skipped while the module's requirements are
those it last warmed for, that day.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from collections.abc import Mapping, Sequence

from assay.evidence import Check
from assay.gopath_layout import IMPORT_PATH_ENV
from assay.tools.instrumented import Preparation

#: The variable go reads its build cache directory from.
GO_CACHE_ENV = "GOCACHE"

#: go's subcommands that compile or describe code and run none of the repository's.
_COMPILE_ONLY = frozenset(
    {"build", "vet", "list", "install", "mod", "env", "version", "doc", "fmt", "clean"}
)
#: Flags that have go run a program the command names (the test binary's runner, a wrapper
#: around each compiler, a vet tool, an external linker or gccgo's flags for one); and
#: `-trimpath`, which keys the module's own packages apart from the workspace's path: go
#: reads a file once to hash it and again to compile it, so a test of another check,
#: rewriting it in between, could leave a compilation under the key of other code, which
#: a later tree holding that code would take (without it, the key holds the workspace's
#: path, new on every run, and nothing compiled there is ever taken again).
_NOT_FOR_THE_SHARED_CACHE = frozenset(
    {"exec", "toolexec", "vettool", "ldflags", "gccgoflags", "trimpath"}
)
#: The only variables a check may set and still write the shared cache: none names a
#: program go or the C compiler cgo starts would run, a file go reads more settings from, or
#: a directory either looks programs up in (GOFLAGS is read for its flags). Every other name
#: keeps the check to a view: go's own (`GOENV`, whose file sets GOFLAGS=-toolexec and CC
#: where no variable shows them; `GOTOOLCHAIN`, which starts another go; `GOCACHEPROG`;
#: `GOROOT`), the C toolchain's (`CC`, `CGO_CFLAGS`, and gcc's `COMPILER_PATH` and
#: `GCC_EXEC_PREFIX`, where it finds the assembler and linker it runs), the system's (`PATH`,
#: `XDG_CONFIG_HOME`, under which go finds its settings file), and any a later release of
#: any of them learns to read.
_HARMLESS_VARIABLES = frozenset(
    {
        "CI",
        "CGO_ENABLED",
        "GO111MODULE",
        "GOOS",
        "GOARCH",
        "GOAMD64",
        "GOARM",
        "GOARM64",
        "GO386",
        "GOMIPS",
        "GOMIPS64",
        "GOPPC64",
        "GORISCV64",
        "GOWASM",
        "GOEXPERIMENT",
        "GODEBUG",
        "GOPROXY",
        "GOPRIVATE",
        "GONOPROXY",
        "GONOSUMDB",
        "GOSUMDB",
        "GOINSECURE",
        "GOVCS",
        "GOMAXPROCS",
        "GOGC",
        "GOMEMLIMIT",
        "GOTRACEBACK",
        "GORACE",
        "TZ",
        "LANG",
        "TERM",
        "NO_COLOR",
        "FORCE_COLOR",
    }
)

#: Where the system keeps a program that runs nothing, for the warm-up's `go test -exec`
#: (never one found on a PATH the project may have a hand in).
_TRUE = ("/bin/true", "/usr/bin/true")

#: Runs the warm-up (the probed go as `$0`) unless one that succeeded in the last day
#: found the module's requirements as they are now: its mark says so. Skipped, the test
#: run compiles only the module's own packages afresh, as it would anyway (their directory
#: is part of their action IDs, and is new on every run); go trims only entries unused for
#: five days, so what the mark vouches for is still there.
_WARM_UP = (
    "sums=$(cat go.mod go.sum go.work go.work.sum vendor/modules.txt 2>/dev/null | sha256sum); "
    'if [ -z "$(find "$ASSAY_GO_WARMED" -mmin -1440 2>/dev/null)" ] '
    '|| [ "$(cat "$ASSAY_GO_WARMED")" != "$sums" ]; then '
    '"$0" "$@" >/dev/null 2>&1 && printf "%s\\n" "$sums" > "$ASSAY_GO_WARMED"; fi'
)
#: The variable the warm-up script reads its mark's path from.
WARMED_ENV = "ASSAY_GO_WARMED"
#: Makes the view in the check's own HOME (in the sandbox's private tmpfs under bubblewrap,
#: where a link costs little; a scratch directory removed after the run otherwise), then
#: runs the check's go (`$0`) with it; {shared} is the shared cache.
_THROUGH_A_VIEW = (
    'view=$(mktemp -d "$HOME/.gocache-view.XXXXXX") && cp -rs {shared}/. "$view/"; '
    'GOCACHE="$view" exec "$0" "$@"'
)


def writes_shared_cache(check: Check) -> bool:
    """Whether `check` may write the shared cache itself: a go command that compiles and
    runs nothing the repository names (`_may_write`)."""
    argv = list(check.argv)
    return argv[:1] == ["go"] and _subcommand(argv) in _COMPILE_ONLY and _may_write(argv, check.env)


def warm_up(check: Check, argv: Sequence[str]) -> tuple[str, ...] | None:
    """The warm-up for the `go test` of `check` as it runs as `argv`: the same command, its
    test binaries run by a program that runs nothing (`-exec true`), so that it compiles,
    vets and links exactly what the tests need and writes it to the shared cache. None: not
    a `go test`, or one that may not write the shared cache (`_may_write`)."""
    runs_nothing = next((p for p in _TRUE if os.path.exists(p)), None)
    if (
        runs_nothing is None
        or list(argv[:1]) != ["go"]
        or _subcommand(argv) != "test"
        or not _may_write(argv, check.env)
    ):
        return None
    return (*argv[:2], f"-exec={runs_nothing}", *argv[2:])


def through_a_view(shared: str) -> tuple[str, ...]:
    """The wrapper that runs a check's go with a private view of the shared cache at
    `shared` as its GOCACHE; the check's variables must not name `shared` (under
    bubblewrap, that keeps it read-only)."""
    return ("sh", "-c", _THROUGH_A_VIEW.format(shared=shlex.quote(shared)))


def warming_up(
    check: Check, argv: Sequence[str], env: Mapping[str, str], shared: str
) -> Preparation | None:
    """The warm-up that fills the shared cache at `shared` for the `go test` of `check`
    (run as `argv` with `env`), or None where it would not be safe (`warm_up`)."""
    warming = warm_up(check, argv)
    if warming is None:
        return None
    which = json.dumps([list(argv), check.cwd, sorted(env.items())])
    mark = os.path.join(shared, "assay-warmed-" + hashlib.sha256(which.encode()).hexdigest()[:16])
    return Preparation(
        ("sh", "-c", _WARM_UP), warming, {**env, GO_CACHE_ENV: shared, WARMED_ENV: mark}
    )


def _subcommand(argv: Sequence[str]) -> str | None:
    return argv[1] if len(argv) > 1 else None


def _flags(words: Sequence[str]) -> set[str]:
    """The names of the flags among `words` (`-tags x`, `--race`, `-gcflags=all=-N`)."""
    return {w.lstrip("-").partition("=")[0] for w in words if w.startswith("-") and w != "-"}


def _may_write(argv: Sequence[str], env: Mapping[str, str]) -> bool:
    """Whether go, run as `argv` with the check's `env`, may write the shared cache: no
    flag of it, in its command or GOFLAGS, and no variable, names a program go would run
    or keeps its compilations apart from the workspace's path, and every variable it sets
    is one known to do neither (`_HARMLESS_VARIABLES`)."""
    # GOFLAGS reaches the sandbox from the caller's environment too.
    goflags = env.get("GOFLAGS", os.environ.get("GOFLAGS", "")).split()
    if (_flags(argv[2:]) | _flags(goflags)) & _NOT_FOR_THE_SHARED_CACHE:
        return False
    # The import path a package from before modules is linked at names no program: its
    # link is made in a new directory each run, so its compilations' keys are new too.
    own = (GO_CACHE_ENV, "GOFLAGS", IMPORT_PATH_ENV)
    return all(name in _HARMLESS_VARIABLES or name in own or name.startswith("LC_") for name in env)

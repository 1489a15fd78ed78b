"""Go: one tool, `go`, answering build, vet and test by subcommand."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from assay.evidence import Check
from assay.go_cache_view import GO_CACHE_ENV, through_a_view, warming_up, writes_shared_cache
from assay.gopath_layout import IMPORT_PATH_ENV, gopath_wrapper
from assay.tools.instrumented import Instrumented, Request
from assay.tools.spec import (
    Command,
    Ecosystem,
    EcosystemSpec,
    Manifest,
    Match,
    Native,
    TamperMarkers,
    ToolSpec,
    after_subcommand,
    install_step,
)
from assay.verdict import Kind

#: `go <subcommand>` -> the kind it answers and the check's name.
SUBCOMMANDS: Mapping[str, tuple[Kind, str]] = {
    "test": (Kind.TEST, "go-test"),
    "vet": (Kind.LINT, "go-vet"),
    "build": (Kind.BUILD, "go-build"),
}


#: Runs a gofmt listing (`gofmt -l`, `gofmt -d`) as the gate CI makes of it: gofmt exits 0
#: whatever it lists, and a shell test fails the step when it lists anything. The listing
#: is printed whatever gofmt's status, and a failed gofmt (a syntax error) fails the check.
_FAILS_ON_A_LISTING = (
    'listed=$("$0" "$@"); status=$?; [ -n "$listed" ] && printf "%s\\n" "$listed"; '
    '[ "$status" -ne 0 ] && exit "$status"; [ -z "$listed" ] && exit 0; '
    'echo "gofmt: these files are not formatted as gofmt would" >&2; exit 1'
)


def _go(request: Request) -> Instrumented:
    argv = request.argv
    if argv[:1] == ("gofmt",):
        return request.wrapped(("sh", "-c", _FAILS_ON_A_LISTING))
    if argv[1:2] == ("test",):
        added: tuple[str, ...] = () if request.has("-json") else ("-json",)
        if not request.has("-count", "--count"):
            # Go replays a cached test result ("(cached)") without running the test; any
            # -count turns that off, and -count=1 is go's documented way to ask for it.
            added += ("-count=1",)
        argv = after_subcommand(argv, "test", *added)
    planned = request.runs(argv)
    shared = request.check.env.get(GO_CACHE_ENV)
    if shared is not None and not writes_shared_cache(request.check):
        planned = _through_a_view(request, planned, shared)
    if IMPORT_PATH_ENV not in planned.env:
        return planned
    # A package from before modules: run from its import path in a GOPATH of its own.
    then = planned.wrapper[2] if planned.wrapper else 'exec "$0" "$@"'
    prepare = planned.prepare
    if prepare is not None:
        # The warm-up fills the shared cache only where it can build what the tests build.
        prepare = replace(prepare, wrapper=("sh", "-c", gopath_wrapper(prepare.wrapper[2])))
    return replace(planned, wrapper=("sh", "-c", gopath_wrapper(then)), prepare=prepare)


def _through_a_view(request: Request, planned: Instrumented, shared: str) -> Instrumented:
    """`planned` reading the warm cache at `shared` through a private view of it, which a
    warm-up fills first where it can (`assay.go_cache_view`)."""
    env = {name: value for name, value in planned.env.items() if name != GO_CACHE_ENV}
    return replace(
        planned,
        env=env,
        wrapper=through_a_view(shared),
        prepare=warming_up(request.check, planned.argv, env, shared),
    )


def _subcommand(rest: list[str]) -> Match | None:
    sub = SUBCOMMANDS.get(rest[0]) if rest else None
    return Match(sub[0], tuple(rest[1:]), name=sub[1]) if sub else None


def _gofmt_lists(rest: list[str]) -> Match | None:
    """`gofmt -l`/`-d` a CI step gates on; `-w` rewrites the files, no check."""
    listing = any(w in ("-l", "-d") for w in rest) and "-w" not in rest
    return Match(Kind.LINT, tuple(rest), name="gofmt") if listing else None


def module_natives(
    path: str, text: str, root_names: frozenset[str]
) -> tuple[list[Native], list[str]]:
    """`go build` and `go test` over every package of a module.

    `go vet` is planned only where the project states it: `go test` already runs vet's
    high-confidence checks, and the rest of vet flags what maintainers may do on purpose
    (go-cmp's tests keep unkeyed literals and odd struct tags, and its gate passes)."""
    if not any(line.strip().startswith("module") for line in text.splitlines()):
        return [], [f"{path}: no `module` directive"]
    why = "Go module (go.mod)"
    return [
        # go test compiles every package, those without tests too, so it answers the build
        # question; the build stays for a plan that asks for builds alone.
        Native(
            Kind.BUILD,
            ("go", "build", "./..."),
            "go",
            why,
            name="go-build",
            redundant_with=frozenset({"go-vet", "go-test"}),
        ),
        Native(Kind.TEST, ("go", "test", "./..."), "go", why, name="go-test"),
    ], []


def _module_cache(deps: Path) -> Mapping[str, str]:
    return {"GOMODCACHE": str(deps / "go-mod"), "GOFLAGS": "-modcacherw"}


def install_steps(root: Path) -> list[Check]:
    if not (root / "go.mod").is_file() or builds_from_vendor(root, "."):
        return []
    return [module_download(".")]


#: The first go directive under which go builds from vendor/ by default (`-mod=vendor`).
_VENDOR_BY_DEFAULT = (1, 14)
_GO_DIRECTIVE = re.compile(rb"^go\s+(\d+)\.(\d+)", re.MULTILINE)


def builds_from_vendor(root: Path, module: str) -> bool:
    """Whether go builds the module at `module` (relative to `root`) from its vendor/
    directory, needing no download: it holds vendor/modules.txt, and its go.mod says go
    1.14 or later. `go mod download` ignores vendor/ and asks the proxy all the same, which
    offline fails a project that vendored its dependencies to build without one."""
    from assay.untrusted_files import read_untrusted

    listed = read_untrusted(
        root, posixpath.normpath(posixpath.join(module, "vendor", "modules.txt"))
    )
    go_mod = read_untrusted(root, posixpath.normpath(posixpath.join(module, "go.mod")))
    if not isinstance(listed, bytes) or not isinstance(go_mod, bytes):
        return False
    stated = _GO_DIRECTIVE.search(go_mod)
    return stated is not None and (int(stated[1]), int(stated[2])) >= _VENDOR_BY_DEFAULT


def module_download(cwd: str) -> Check:
    """The install step that downloads the requirements of the module at `cwd` (a
    normalised path relative to the tree's root)."""
    if cwd == ".":
        return install_step("go", ("go", "mod", "download"), "go.mod", "module dependencies", "go")
    name = "go-" + cwd.replace("/", "-")
    step = install_step(
        name, ("go", "mod", "download"), f"{cwd}/go.mod", "module dependencies", "go"
    )
    return replace(step, cwd=cwd)


GO = ToolSpec(
    name="go",
    ecosystem=Ecosystem.GO,
    binaries=("go",),
    version_args=("version",),
    # "go version go1.19.8 linux/amd64"
    version_pattern=re.compile(r"go version go(\S+)"),
    install_hint="install Go (Debian: `apt-get install golang-go`)",
    commands=(Command(("go",), match=_subcommand), Command(("gofmt",), match=_gofmt_lists)),
    instrument=_go,
    parser=("go", "parse"),
    canary=("go", "plant_go_test"),
    dependency_env=_module_cache,
    # A workspace file decides which modules `go test` builds, and from where.
    config_files=("**/go.work",),
)

ECOSYSTEM = EcosystemSpec(
    ecosystem=Ecosystem.GO,
    label="go",
    tools=(GO,),
    manifests=(Manifest(("go.mod",), module_natives),),
    test_files=("**/*_test.go", "**/testdata/**"),
    markers=TamperMarkers(
        test_names=(re.compile(r"^func\s+(Test\w+)\s*\(", re.MULTILINE),),
        skip=r"\bt\.Skip(?:f|Now)?\s*\(",
        assertions=r"\bt\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\s*\(",
    ),
    install=install_steps,
    steering_env=("GO",),
    home_dirs=("go/bin", "go/pkg/mod"),
)

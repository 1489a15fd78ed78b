"""Which Go checks may write the shared build cache, and the warm-up that fills it for a
`go test` (`assay.go_cache_view`): pure decisions, on plain values."""

from __future__ import annotations

import pytest

from assay.evidence import Check
from assay.go_cache_view import GO_CACHE_ENV, warm_up, warming_up, writes_shared_cache
from assay.verdict import Kind


@pytest.fixture(autouse=True)
def no_goflags_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOFLAGS", raising=False)


def go(*argv: str, **env: str) -> Check:
    return Check(name="go", kind=Kind.BUILD, argv=("go", *argv), tool="go", env=env)


@pytest.mark.parametrize(
    ("check", "writes"),
    [
        (go("build", "./..."), True),
        (go("vet", "./..."), True),
        (go("build", "-race", "-tags", "integration", "./..."), True),
        (go("build", GOFLAGS="-modcacherw", CGO_ENABLED="0"), True),
        # The test binaries, and what `go run` and `go generate` run, are the project's.
        (go("test", "./..."), False),
        (go("run", "./cmd/gen"), False),
        (go("generate", "./..."), False),
        # A program the command or its variables name runs inside go.
        (go("build", "-toolexec", "./wrap", "./..."), False),
        (go("build", "--toolexec=./wrap"), False),
        (go("vet", "-vettool=./bin/vet"), False),
        (go("build", "-ldflags=-extld=./ld"), False),
        (go("build", GOFLAGS="-toolexec=./wrap"), False),
        (go("build", CC="./cc"), False),
        (go("build", CGO_CFLAGS="-fplugin=./x.so"), False),
        (go("build", PATH="/work/.venv/bin:/usr/bin"), False),
        # The module's own packages keyed apart from the workspace's path.
        (go("build", "-trimpath", "./..."), False),
        (go("vet", GOFLAGS="-mod=mod -trimpath"), False),
        # A red team's: a settings file go reads GOFLAGS=-toolexec from (named, or found
        # under XDG_CONFIG_HOME), a toolchain switch or cache program, and gcc's own lookup
        # of the assembler and linker cgo has it run.
        (go("build", "./...", GOENV="goenv"), False),
        (go("build", "./...", XDG_CONFIG_HOME="conf"), False),
        (go("build", "./...", GOTOOLCHAIN="go1.99.0+path"), False),
        (go("build", "./...", GOCACHEPROG="./cacheprog"), False),
        (go("build", "./...", COMPILER_PATH="bin"), False),
        (go("build", "./...", GCC_EXEC_PREFIX="bin/"), False),
        (go("build", "./...", CI="true", GOOS="linux", GOPROXY="off", LC_ALL="C"), True),
        (Check(name="gofmt", kind=Kind.LINT, argv=("gofmt", "-l", "."), tool="go"), False),
    ],
)
def test_only_what_runs_nothing_of_the_projects_writes_the_shared_cache(
    check: Check, writes: bool
) -> None:
    assert writes_shared_cache(check) is writes


def test_the_warm_up_is_the_test_command_running_nothing() -> None:
    argv = ("go", "test", "-json", "-count=1", "-race", "./...")
    assert warm_up(go(*argv[1:]), argv) == (
        "go",
        "test",
        "-exec=/bin/true",
        "-json",
        "-count=1",
        "-race",
        "./...",
    )


@pytest.mark.parametrize(
    "check",
    [
        go("test", "-exec", "./runner", "./..."),
        go("test", "-toolexec=./wrap", "./..."),
        go("test", "./...", CC="./cc"),
        go("test", "./...", GOFLAGS="-exec=./runner"),
        go("test", "-trimpath", "./..."),
        go("test", "./...", GOENV="goenv"),
        go("build", "./..."),
    ],
)
def test_no_warm_up_where_go_would_run_a_program_the_project_names(check: Check) -> None:
    assert warm_up(check, check.argv) is None
    assert warming_up(check, check.argv, check.env, "/state/go/x") is None


def test_goflags_from_the_callers_environment_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOFLAGS", "-trimpath")
    assert not writes_shared_cache(go("build", "./..."))
    assert writes_shared_cache(go("build", "./...", GOFLAGS="-mod=mod"))


def test_the_warm_up_writes_the_shared_cache_and_its_mark_there() -> None:
    check = go("test", "./...")
    prepared = warming_up(check, check.argv, {"CI": "true"}, "/state/go/x")
    assert prepared is not None
    assert prepared.env[GO_CACHE_ENV] == "/state/go/x"
    assert prepared.env["ASSAY_GO_WARMED"].startswith("/state/go/x/assay-warmed-")
    other = warming_up(check, ("go", "test", "-race", "./..."), {"CI": "true"}, "/state/go/x")
    assert other is not None
    assert other.env["ASSAY_GO_WARMED"] != prepared.env["ASSAY_GO_WARMED"]

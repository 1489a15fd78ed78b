"""Go code with tests and no go.mod: a package from before modules.

go-shellquote has no go.mod; module mode refuses it ("go.mod file not found"), and assay
found nothing to run (UNVERIFIED, "no command was found"). Its maintainers' `go test`
ran in GOPATH mode; so does assay's, with `GO111MODULE=off`. go-difflib keeps its tests in
difflib/, below a root with no Go file: it too was UNVERIFIED, its tests never named."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.plan import plan_repository
from tests.repos import write
from tests.test_go_cache import verify

QUOTE = "package quote\n\nfunc Quote(s string) string {{ return {body} }}\n"
TEST = (
    'package quote\n\nimport "testing"\n\nfunc TestQuote(t *testing.T) {\n'
    '\tif Quote("a") != "\'a\'" {\n\t\tt.Fatal(Quote("a"))\n\t}\n}\n'
)


def test_go_tests_without_a_go_mod_are_run_in_gopath_mode(tmp_path: Path) -> None:
    write(tmp_path, {"quote.go": QUOTE.format(body='"\'" + s + "\'"'), "quote_test.go": TEST})
    checks = {c.name: c for c in plan_repository(tmp_path).checks}
    assert set(checks) == {"go-test"}
    assert checks["go-test"].env == {"GO111MODULE": "off"}
    # A go.mod is a module: its own rules apply, not these.
    write(tmp_path, {"go.mod": "module example.com/quote\n\ngo 1.19\n"})
    assert "GO111MODULE" not in plan_repository(tmp_path).checks[-1].env


@pytest.mark.parametrize(("body", "status"), [('"\'" + s + "\'"', "VERIFIED"), ("s", "FAILED")])
def test_a_package_from_before_modules_is_verified_for_real(
    tmp_path: Path, body: str, status: str
) -> None:
    repo = write(tmp_path / "repo", {"quote.go": QUOTE.format(body=body), "quote_test.go": TEST})
    report = verify(repo, tmp_path / "state")
    assert report["status"] == status, report["note"]
    tests = [c for c in report["checks"] if c["name"] == "go-test"]
    assert tests and tests[0]["tests"]["executed"] == 1, tests


def test_go_tests_below_the_root_without_a_go_mod_are_found(tmp_path: Path) -> None:
    # go-difflib keeps its one package in difflib/: nothing at the root but a README.
    write(tmp_path, {"README.md": "x\n", "vendor/v/v_test.go": TEST, "testdata/t_test.go": TEST})
    assert plan_repository(tmp_path).checks == ()
    write(tmp_path, {"quote/quote.go": QUOTE.format(body="s"), "quote/quote_test.go": TEST})
    (check,) = plan_repository(tmp_path).checks
    assert check.name == "go-test" and check.env == {"GO111MODULE": "off"}
    assert "quote/quote_test.go" in check.reason
    # A directory with its own go.mod is another module, not this fallback's.
    (tmp_path / "quote" / "go.mod").write_text("module example.com/quote\n\ngo 1.19\n")
    assert plan_repository(tmp_path).checks == ()


@pytest.mark.parametrize(("body", "status"), [('"\'" + s + "\'"', "VERIFIED"), ("s", "FAILED")])
def test_a_package_from_before_modules_below_the_root_is_verified_for_real(
    tmp_path: Path, body: str, status: str
) -> None:
    files = {"quote/quote.go": QUOTE.format(body=body), "quote/quote_test.go": TEST}
    report = verify(write(tmp_path / "repo", {"README.md": "x\n", **files}), tmp_path / "state")
    assert report["status"] == status, report["note"]
    tests = [c for c in report["checks"] if c["name"] == "go-test"]
    assert tests and tests[0]["tests"]["executed"] == 1, tests


ROOT_USES_SUB = 'package quote\n\nimport "{path}"\n\nfunc Quote(s string) string {{ return sub.Q + s + sub.Q }}\n'


@pytest.mark.parametrize(
    ("path", "status"), [("github.com/x/quote/sub", "UNVERIFIED"), ("subb", "FAILED")]
)
def test_an_import_a_gopath_would_hold_is_unverified_not_failed(
    tmp_path: Path, path: str, status: str
) -> None:
    # The tree's own package imported by its full path: go, in GOPATH mode from a workspace
    # that is no GOPATH, cannot find it, and no test runs. A path without a host (the
    # standard library's form) not found is the code's own fault.
    files = {
        "quote.go": ROOT_USES_SUB.format(path=path),
        "quote_test.go": TEST,
        "sub/sub.go": 'package sub\n\nconst Q = "\'"\n',
    }
    report = verify(write(tmp_path / "repo", files), tmp_path / "state")
    assert report["status"] == status, report["note"]
    if status == "UNVERIFIED":
        assert "could not find github.com/x/quote/sub" in report["note"], report["note"]
        assert "go mod init" in report["note"], report["note"]


#: go-spew's shape: a package below the root whose external tests (`package quote_test`)
#: import it by its full path, and CI's own `go test` of it, from before modules.
EXTERNAL_TEST = (
    'package quote_test\n\nimport (\n\t"testing"\n\n\t"github.com/x/quote/quote"\n)\n\n'
    'func TestQuote(t *testing.T) {\n\tif quote.Quote("a") != "\'a\'" {\n'
    '\t\tt.Fatal(quote.Quote("a"))\n\t}\n}\n'
)
TRAVIS = "language: go\nscript:\n  - go test -v ./quote\n"


def _external_tests(root: Path, body: str, **more: str) -> Path:
    files = {
        "quote/quote.go": QUOTE.format(body=body),
        "quote/quote_test.go": EXTERNAL_TEST,
        ".travis.yml": TRAVIS,
        **more,
    }
    return write(root, files)


def test_a_ci_go_command_without_a_go_mod_runs_at_the_trees_import_path(tmp_path: Path) -> None:
    (check,) = plan_repository(_external_tests(tmp_path / "own", "s")).checks
    assert check.argv == ("go", "test", "-v", "./quote"), check
    assert check.env == {"GO111MODULE": "off", "ASSAY_GO_IMPORT_PATH": "github.com/x/quote"}
    # Travis's go_import_path is the maintainers' own word.
    stated = _external_tests(
        tmp_path / "stated", "s", **{".travis.yml": "go_import_path: example.org/q\n" + TRAVIS}
    )
    assert plan_repository(stated).checks[0].env["ASSAY_GO_IMPORT_PATH"] == "example.org/q"
    # Another directory's import says nothing of where the tree lives: a library's
    # `assert` imported beside a tree's own assert/ is not the tree.
    other = write(
        tmp_path / "other",
        {
            "quote/quote.go": ROOT_USES_SUB.format(path="github.com/y/lib/assert"),
            "quote/quote_test.go": TEST,
            "assert/assert.go": "package assert\n",
            ".travis.yml": TRAVIS,
        },
    )
    assert plan_repository(other).checks[0].env == {"GO111MODULE": "off"}


@pytest.mark.parametrize(("body", "status"), [('"\'" + s + "\'"', "VERIFIED"), ("s", "FAILED")])
def test_a_package_its_tests_import_by_its_full_path_is_verified_for_real(
    tmp_path: Path, body: str, status: str
) -> None:
    """go-spew: module mode refused CI's `go test ./spew` ("cannot find main module") and a
    change that broke it was INDETERMINATE, as was its clean tree."""
    report = verify(_external_tests(tmp_path / "repo", body), tmp_path / "state")
    assert report["status"] == status, report["note"]
    tests = [c for c in report["checks"] if c["name"] == "go-test"]
    assert tests and tests[0]["tests"]["executed"] == 1, tests


def test_a_file_named_from_the_link_at_the_import_path_is_named_from_the_tree() -> None:
    from assay.parsers.go import go_diagnostics

    text = (
        "2026/12/07 01:45:40 cover: /tmp/tmp.Bg/src/github.com/x/quote/quote/quote.go: "
        "/tmp/tmp.Bg/src/github.com/x/quote/quote/quote.go:3:6: expected '(', found Quote\n"
        "quote/quote.go:3:6: syntax error: unexpected Quote, expecting (\n"
    )
    files = [d.file for d in go_diagnostics(text, "/w", "github.com/x/quote")]
    assert files == ["quote/quote.go", "quote/quote.go"]
    assert go_diagnostics(text, "/w")[0].file == "/tmp/tmp.Bg/src/github.com/x/quote/quote/quote.go"


@pytest.mark.parametrize("ci", [True, False], ids=["ci-names-the-package", "fallback"])
@pytest.mark.parametrize(("body", "status"), [('"\'" + s + "\'"', "VERIFIED"), ("s", "FAILED")])
def test_a_package_from_before_modules_carries_its_canaries_under_protect(
    tmp_path: Path, ci: bool, body: str, status: str
) -> None:
    """The must-fail canary's package, below the tested one, is built in GOPATH mode too:
    named beside CI's `./quote` from the link at the import path, found by the fallback's
    `./...`."""
    from assay.verdict import Status
    from tests.attacks import change_on_base, explain, verify_change

    base = _external_tests(tmp_path / "w", '"\'" + s + "\'"')
    files = {
        str(p.relative_to(base)): p.read_text()
        for p in base.rglob("*")
        if p.is_file() and (ci or p.name != ".travis.yml")
    }
    change = {"README.md": "quote\n", "quote/quote.go": QUOTE.format(body=body)}
    report = verify_change(change_on_base(tmp_path / "repo", files, change))
    assert report.status is Status(status), explain(report)
    (test,) = [e for e in report.checks if e.check.name == "go-test"]
    canaries = test.extra["canaries"]
    assert canaries["finding"].startswith("as planted"), canaries
    assert sorted(c["must"] for c in canaries["tests"]) == ["fail", "pass"], canaries


#: pkg/errors' Makefile: its test target names the package by its import path.
MAKEFILE = "PKGS := github.com/x/quote/quote\n\ntest:\n\tgo test $(PKGS)\n"


@pytest.mark.parametrize(("body", "status"), [('"\'" + s + "\'"', "VERIFIED"), ("s", "FAILED")])
def test_a_make_target_running_go_without_a_go_mod_runs_at_the_trees_import_path(
    tmp_path: Path, body: str, status: str
) -> None:
    """pkg/errors: `make test` ran `go test github.com/pkg/errors` in module mode, which
    refused it ("go.mod file not found"), and its clean tree was INDETERMINATE."""
    repo = _external_tests(tmp_path / "repo", body, **{"Makefile": MAKEFILE, ".travis.yml": ""})
    (check,) = plan_repository(repo).checks
    assert check.argv == ("make", "test"), check
    assert check.env["GO111MODULE"] == "off", check
    assert check.env["ASSAY_GO_IMPORT_PATH"] == "github.com/x/quote", check
    report = verify(repo, tmp_path / "state")
    assert report["status"] == status, report["note"]


def test_a_make_target_of_a_tree_without_go_is_left_as_it_is(tmp_path: Path) -> None:
    repo = write(tmp_path, {"Makefile": "test:\n\t./run-tests\n", "run-tests": "#!/bin/sh\n"})
    (check,) = plan_repository(repo).checks
    assert check.argv == ("make", "test") and check.env == {}, check

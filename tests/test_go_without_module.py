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

"""`go test`'s arguments read as go reads them, for the packages the canaries go into.

go 1.19 takes the first run of words that are not flags for its package list, which ends
at the next flag; after it, a word that is not a flag (`go test ./a -v ./b`'s `./b`) and
every word after it go to the test binaries. The canaries were planted in `b` as well,
which go never tested, and an honest tree was INDETERMINATE ("never reported"). So were
the binaries' own `-test.run` after `-args`, which select tests the canaries are not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.verdict import Status
from tests.attacks import change_on_base, explain, verify_change

TEST = (
    'package {pkg}\n\nimport "testing"\n\nfunc TestDouble(t *testing.T) {{\n'
    "\tif Double(2) != 4 {{\n\t\tt.Fatal(Double(2))\n\t}}\n}}\n"
)
CI = """\
name: ci
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: {command}
"""


def _base(command: str) -> dict[str, str]:
    base = {
        ".github/workflows/ci.yml": CI.format(command=command),
        "go.mod": "module example.com/m\n\ngo 1.19\n",
    }
    for name in ("a", "b"):
        base[f"{name}/{name}.go"] = f"package {name}\n\nfunc Double(n int) int {{ return 2 * n }}\n"
        base[f"{name}/{name}_test.go"] = TEST.format(pkg=name)
    return base


#: (the command CI runs, the tests go runs of it)
COMMANDS = {
    "flag-between-packages": ("go test ./a -v ./b", 1),
    "valued-flag-between-packages": ("go test ./a -timeout 5m ./b", 1),
    "binary-selects": ("go test ./... -args -test.run TestDouble", 2),
    "flags-before": ("go test -count=1 -tags integration ./...", 2),
}


@pytest.mark.parametrize("how", sorted(COMMANDS))
def test_an_honest_tree_is_verified_whatever_order_its_arguments_take(
    tmp_path: Path, how: str
) -> None:
    command, ran = COMMANDS[how]
    repo = change_on_base(tmp_path / "repo", _base(command), {"README.md": "m\n"}, dedent=False)
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)
    (test,) = [e for e in report.checks if e.check.name == "go-test"]
    assert test.tests is not None and (test.tests.passed, test.tests.failed) == (ran, 0)


def test_a_wrong_value_in_the_package_go_tests_fails(tmp_path: Path) -> None:
    base = _base("go test ./a -v ./b")
    broken = {"a/a.go": base["a/a.go"].replace("2 * n", "n + 1")}
    report = verify_change(change_on_base(tmp_path / "repo", base, broken, dedent=False))
    assert report.status is Status.FAILED, explain(report)

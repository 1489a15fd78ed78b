"""Attacks through what the tests depend on, and through tests that live in source files.

A change can leave the code wrong and the tests untouched, and still make them pass: by
swapping the library the tests assert with (a Go `replace`, a vendored copy turned into
no-ops, a Cargo `[patch]`, an npm `overrides`), or, where tests live inside the source
files (Rust's `#[cfg(test)]` modules), by weakening them there, where no protected file
is touched. Each attack is a real repository, verified end to end with `--base --protect`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from assay.protect import protected_set
from assay.tamper import TamperKind, detect_tampering
from assay.verdict import Status
from tests.attacks import change_on_base, tamper_signals, verify_change
from tests.repos import write_dedented


@dataclass(frozen=True, slots=True)
class Attack:
    """A base with a bug its tests catch, and a change that keeps the bug and cheats."""

    base: dict[str, str]
    change: dict[str, str]
    kind: TamperKind
    """The signal the attack must raise."""
    path: str
    """The path the signal is about."""
    quoted: str
    """Text its detail must hold."""


GO_CODE = {
    "calc.go": """
        package calc

        func Add(a, b int) int { return a - b }
    """,
    "calc_test.go": """
        package calc

        import (
        \t"testing"

        \t"github.com/x/assertlib"
        )

        func TestAdd(t *testing.T) { assertlib.Equal(t, Add(2, 2), 4) }
    """,
}

ASSERTLIB = """
    package assertlib

    import "testing"

    func Equal(t *testing.T, got, want int) {
    \tt.Helper()
    \tif got != want {
    \t\tt.Fatalf("got %d, want %d", got, want)
    \t}
    }
"""

#: The same API, asserting nothing.
FAKE_ASSERTLIB = """
    package assertlib

    import "testing"

    func Equal(t *testing.T, got, want int) {}
"""

GO_MOD = """
    module example.com/calc

    go 1.19

    require github.com/x/assertlib v0.1.0
"""

ATTACKS: dict[str, Attack] = {
    # go.mod points the assertion library at a copy in the tree that asserts nothing.
    "go-replace": Attack(
        base={
            **GO_CODE,
            "go.mod": GO_MOD + "\n    replace github.com/x/assertlib => ./assertlib\n",
            "assertlib/go.mod": "module github.com/x/assertlib\n\ngo 1.19\n",
            "assertlib/assert.go": ASSERTLIB,
        },
        change={
            "go.mod": GO_MOD + "\n    replace github.com/x/assertlib => ./fakeassert\n",
            "fakeassert/go.mod": "module github.com/x/assertlib\n\ngo 1.19\n",
            "fakeassert/assert.go": FAKE_ASSERTLIB,
        },
        kind=TamperKind.DEPENDENCY_SWAPPED,
        path="go.mod",
        quoted="=> ./fakeassert",
    ),
    # With vendor/modules.txt, go builds the vendored copy: turned into no-ops.
    "go-vendor": Attack(
        base={
            **GO_CODE,
            "go.mod": GO_MOD,
            "vendor/modules.txt": (
                "# github.com/x/assertlib v0.1.0\n## explicit\ngithub.com/x/assertlib\n"
            ),
            "vendor/github.com/x/assertlib/assert.go": ASSERTLIB,
        },
        change={"vendor/github.com/x/assertlib/assert.go": FAKE_ASSERTLIB},
        kind=TamperKind.DEPENDENCY_SWAPPED,
        path="vendor/github.com/x/assertlib/assert.go",
        quoted="vendored dependency",
    ),
    # A unit test inside the source file, weakened where it stands.
    "rust-in-file-test": Attack(
        base={
            "Cargo.toml": """
                [package]
                name = "calc"
                version = "0.1.0"
                edition = "2021"
            """,
            "src/lib.rs": """
                pub fn add(a: i64, b: i64) -> i64 {
                    a - b
                }

                #[cfg(test)]
                mod tests {
                    use super::*;

                    #[test]
                    fn adds() {
                        assert_eq!(add(2, 2), 4);
                    }
                }
            """,
        },
        change={
            "src/lib.rs": """
                pub fn add(a: i64, b: i64) -> i64 {
                    a - b
                }

                #[cfg(test)]
                mod tests {
                    use super::*;

                    #[test]
                    fn adds() {
                        let _ = add(2, 2);
                        assert!(true);
                    }
                }
            """
        },
        kind=TamperKind.ASSERTION_WEAKENED,
        path="src/lib.rs",
        quoted="assert!(true)",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_a_swapped_dependency_or_weakened_in_file_test_is_never_verified(
    tmp_path: Path, name: str
) -> None:
    attack = ATTACKS[name]
    repo = change_on_base(tmp_path / "repo", attack.base, attack.change)
    report = verify_change(repo)
    assert report.status is not Status.VERIFIED, (report.note, report.output())
    found = tamper_signals(report, attack.kind.value)
    assert any(s["path"] == attack.path and attack.quoted in s["detail"] for s in found), found


# ------------------------------------------------------------------ what is protected, what signalled


def _tampering(tmp_path: Path, base: dict[str, str], change: dict[str, str]) -> list[Any]:
    before = write_dedented(tmp_path / "base", base)
    after = write_dedented(tmp_path / "change", {**base, **change})
    return list(detect_tampering(before, after, protected_set()).signals)


CARGO = """
    [package]
    name = "calc"
    version = "0.1.0"

    [dev-dependencies]
    assertlib = "0.1"
"""


@pytest.mark.parametrize(
    "added",
    [
        '[patch.crates-io]\nassertlib = { path = "fakeassert" }\n',
        '[replace]\n"assertlib:0.1.0" = { path = "fakeassert" }\n',
    ],
)
def test_a_cargo_patch_or_replace_is_a_protected_section(tmp_path: Path, added: str) -> None:
    """Restored from the base under --protect (the whole Cargo.toml), reported without."""
    found = _tampering(tmp_path, {"Cargo.toml": CARGO}, {"Cargo.toml": CARGO + "\n" + added})
    assert [(s.kind, s.path) for s in found] == [(TamperKind.SECTION_CHANGED, "Cargo.toml")]


PACKAGE_JSON = '{"name": "calc", "devDependencies": {"assertlib": "^1.0.0"}}'


@pytest.mark.parametrize(
    ("change", "quoted"),
    [
        ('{"name": "calc", "devDependencies": {"assertlib": "file:./fake"}}', "file:./fake"),
        ('{"name": "calc", "devDependencies": {"assertlib": "link:../fake"}}', "link:../fake"),
        (
            (
                '{"name": "calc", "devDependencies": {"assertlib": "^1.0.0"},'
                ' "overrides": {"assertlib": "file:./fake"}}'
            ),
            "overrides",
        ),
        (
            (
                '{"name": "calc", "devDependencies": {"assertlib": "^1.0.0"},'
                ' "resolutions": {"assertlib": "npm:fake@1"}}'
            ),
            "resolutions",
        ),
    ],
)
def test_a_node_dependency_swap_is_a_signal(tmp_path: Path, change: str, quoted: str) -> None:
    found = _tampering(tmp_path, {"package.json": PACKAGE_JSON}, {"package.json": change})
    swaps = [s for s in found if s.kind is TamperKind.DEPENDENCY_SWAPPED]
    assert [s.path for s in swaps] == ["package.json"]
    assert quoted in swaps[0].detail


def test_an_ordinary_dependency_bump_is_no_signal(tmp_path: Path) -> None:
    found = _tampering(
        tmp_path,
        {"package.json": PACKAGE_JSON, "go.mod": "module m\n\nrequire a.b/c v1.0.0\n"},
        {
            "package.json": PACKAGE_JSON.replace("^1.0.0", "^1.1.0"),
            "go.mod": "module m\n\nrequire a.b/c v1.1.0\n",
        },
    )
    assert found == []


def test_a_rust_in_file_test_gets_the_test_markers(tmp_path: Path) -> None:
    base = "pub fn f() {}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn a() { assert_eq!(1, 1); }\n"
    base += "    #[test]\n    fn b() { assert_eq!(2, 2); }\n}\n"
    change = base.replace("#[test]\n    fn a()", "#[test]\n    #[ignore]\n    fn a()")
    change = change.replace("    #[test]\n    fn b() { assert_eq!(2, 2); }\n", "")
    found = _tampering(tmp_path, {"src/lib.rs": base}, {"src/lib.rs": change})
    kinds = {s.kind for s in found if s.path == "src/lib.rs"}
    assert {TamperKind.SKIP_ADDED, TamperKind.TEST_REMOVED} <= kinds, found


def test_a_rust_file_without_tests_is_not_judged_as_one(tmp_path: Path) -> None:
    found = _tampering(
        tmp_path,
        {"src/lib.rs": "pub fn f() { assert_eq!(1, 1); }\n"},
        {"src/lib.rs": "pub fn f() {}\n"},
    )
    assert found == []

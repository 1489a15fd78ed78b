"""An install from a lockfile whose `prepare` stops at a type error in the project's own
TypeScript failed on the code: FAILED, with the file and line.

Measured on real projects: jshttp/content-type with a type error in src/index.ts. `npm ci`
runs its `prepare` (`ts-scripts install && npm run build`), tsc stops at
`src/index.ts(105,9): error TS2322`; assay said INDETERMINATE, "install step install-node
did not succeed (exited 1: fatal: not a git repository ...)". The maintainers' CI (`npm
install`, then `npm test`) is red on it. Without a lockfile a type error stays INDETERMINATE
(today's types of a dependency may be what broke it). Both end to end:
`tests/test_install.py`.
"""

from __future__ import annotations

from pathlib import Path

from assay.parsers.node import ts_syntax_error_in

TSC_SAID = "src/index.ts(2,7): error TS2322: Type 'string' is not assignable to type 'number'.\n"


def test_a_type_error_counts_only_when_asked(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "index.ts").write_text("x\nconst n: number = 'a';\n")
    assert ts_syntax_error_in(TSC_SAID, str(tmp_path)) is None
    found = ts_syntax_error_in(TSC_SAID, str(tmp_path), type_errors=True)
    assert found is not None and (found.file, found.line, found.code) == (
        "src/index.ts",
        2,
        "TS2322",
    )


def test_a_configurations_error_is_not_the_codes(tmp_path: Path) -> None:
    said = "tsconfig.json(1,1): error TS5011: The common source directory is './src'.\n"
    (tmp_path / "tsconfig.json").write_text("{}\n")
    assert ts_syntax_error_in(said, str(tmp_path), type_errors=True) is None


def test_a_type_error_in_a_dependency_is_never_the_codes(tmp_path: Path) -> None:
    said = "node_modules/x/index.d.ts(1,1): error TS2322: Type 'string' is not assignable.\n"
    (tmp_path / "node_modules" / "x").mkdir(parents=True)
    (tmp_path / "node_modules" / "x" / "index.d.ts").write_text("x\n")
    assert ts_syntax_error_in(said, str(tmp_path), ("node_modules",), type_errors=True) is None

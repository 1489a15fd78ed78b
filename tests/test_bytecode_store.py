"""Byte-code compiled by assay itself, kept across runs and placed in each workspace
(`assay.bytecode_store`): what is placed is exactly what the interpreter would compile,
only for the source it was compiled from, and only where nothing can be led astray."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assay.bytecode_store import BytecodeStore, Source, compiled, prune, store_for
from assay.evidence import Check, CheckerId
from assay.verdict import Kind

TAG = sys.implementation.cache_tag


def store(tmp_path: Path) -> BytecodeStore:
    """A store of modules pytest imports as they are."""
    (plain,) = store_for(
        [check("pytest")],
        [ours("pytest", "0")],
        sandbox="bwrap",
        judged_against_base=False,
        state_dir=tmp_path / "state",
    )
    return plain


def ours(tool: str, version: str) -> CheckerId:
    """A checker run by the interpreter running these tests (assay's own)."""
    binary = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    return CheckerId(tool=tool, version=version, path=binary)


def workspace(tmp_path: Path) -> Path:
    tree = tmp_path / "ws"
    (tree / "pkg").mkdir(parents=True)
    (tree / "tests").mkdir()
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "mod.py").write_text("def f():\n    return 41 + 1\n")
    (tree / "tests" / "test_mod.py").write_text("def test_f():\n    assert True\n")
    (tree / "tests" / "conftest.py").write_text("")
    return tree


FILES = ("pkg/__init__.py", "pkg/mod.py", "tests/test_mod.py", "tests/conftest.py")


def test_compiled_is_a_checked_hash_pyc_the_interpreter_loads(tmp_path: Path) -> None:
    data = b"VALUE = 6 * 7\n"
    pyc = compiled(data, "pkg/mod.py")
    assert pyc is not None
    assert pyc[:4] == importlib.util.MAGIC_NUMBER and pyc[4:8] == b"\x03\x00\x00\x00"
    assert pyc[8:16] == importlib.util.source_hash(data)
    (tmp_path / "mod.py").write_bytes(data)
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / f"mod.{TAG}.pyc").write_bytes(pyc)
    done = subprocess.run(
        [sys.executable, "-B", "-v", "-c", "import mod; print(mod.VALUE, mod.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split() == ["42", str(tmp_path / "mod.py")]
    assert f"matches {tmp_path / 'mod.py'}" in done.stderr  # read, not compiled


def test_what_does_not_compile_or_warns_is_not_kept() -> None:
    assert compiled(b"x = (\n", "bad.py") is None
    assert compiled(b"x = '\\d'\n", "escape.py") is None  # a SyntaxWarning: -W error fails it
    assert compiled(b"assert (1, 'always true')\n", "tuple.py") is None
    assert compiled(b"\x00", "nul.py") is None


def test_kept_byte_code_is_placed_for_its_source_only(tmp_path: Path) -> None:
    kept, tree = store(tmp_path), workspace(tmp_path)
    missing = kept.place(tree, FILES, None)
    # Test modules and conftest files are pytest's to rewrite: never placed, never kept.
    assert sorted(s.rel for s in missing) == ["pkg/__init__.py", "pkg/mod.py"]
    assert not list(tree.rglob("__pycache__"))
    assert kept.keep(missing) == 2
    assert kept.place(tree, FILES, None) == []
    placed = tree / "pkg" / "__pycache__" / f"mod.{TAG}.pyc"
    assert placed.read_bytes() == compiled((tree / "pkg" / "mod.py").read_bytes(), "pkg/mod.py")
    # Another source at the same path is a miss, and what is already there stays.
    (tree / "pkg" / "mod.py").write_text("def f():\n    return 41\n")
    assert [s.rel for s in kept.place(tree, FILES, None)] == ["pkg/mod.py"]
    assert placed.read_bytes()[8:16] != importlib.util.source_hash(b"def f():\n    return 41\n")


def test_an_entry_that_does_not_hash_to_its_source_is_not_believed(tmp_path: Path) -> None:
    """An entry stored under a source's key but compiled from another text (a store made
    some other way, a write gone wrong) is never placed."""
    kept, tree = store(tmp_path), workspace(tmp_path)
    (missing_mod,) = [s for s in kept.place(tree, FILES, None) if s.rel == "pkg/mod.py"]
    other = compiled(b"def f():\n    return 0\n", "pkg/mod.py")
    assert other is not None
    entry = kept.directory / missing_mod.key[:2] / f"{missing_mod.key}.pyc"
    entry.parent.mkdir(parents=True)
    entry.write_bytes(other)
    assert "pkg/mod.py" in [s.rel for s in kept.place(tree, FILES, None)]
    assert not (tree / "pkg" / "__pycache__" / f"mod.{TAG}.pyc").exists()


def test_nothing_is_written_through_a_link_in_the_workspace(tmp_path: Path) -> None:
    """What ran in the workspace may have turned a directory into a link elsewhere: the
    host writes nothing there."""
    kept, tree = store(tmp_path), workspace(tmp_path)
    kept.keep(kept.place(tree, FILES, None))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "mod.py").write_text("def f():\n    return 41 + 1\n")
    (tree / "pkg" / "mod.py").unlink()
    (tree / "pkg" / "mod.py").symlink_to(outside / "mod.py")
    (tree / "lib").symlink_to(outside)
    (outside / "__pycache__").mkdir()
    (tree / "pkg2").mkdir()
    (tree / "pkg2" / "mod.py").write_text("def f():\n    return 41 + 1\n")
    (tree / "pkg2" / "__pycache__").symlink_to(outside / "__pycache__")
    kept.place(tree, ("pkg/mod.py", "lib/mod.py", "pkg2/mod.py"), None)
    assert list(outside.rglob("*.pyc")) == []
    assert not (tree / "pkg" / "__pycache__" / f"mod.{TAG}.pyc").exists()


def test_the_least_recently_used_entries_go_past_the_bound(tmp_path: Path) -> None:
    kept = store(tmp_path)
    sources = [Source(f"m{i}.py", f"{i:02d}" + "0" * 62, b"x = %d\n" % i) for i in range(8)]
    assert kept.keep(sources) == 8
    entries = sorted(kept.directory.rglob("*.pyc"))
    for age, entry in enumerate(entries):
        os.utime(entry, (1_000_000 + age, 1_000_000 + age))
    size = entries[0].stat().st_size
    assert prune(kept.directory, size * 8) == 0
    assert prune(kept.directory, size * 4) == 5  # down to three quarters of the bound
    assert sorted(kept.directory.rglob("*.pyc")) == entries[5:]


def check(tool: str) -> Check:
    return Check(name=tool, kind=Kind.TEST, argv=("python3", "-m", tool), cwd=".", tool=tool)


def test_only_runs_in_a_copy_whose_test_checks_run_this_very_interpreter(
    tmp_path: Path,
) -> None:
    linked = tmp_path / "python3"
    linked.symlink_to(ours("pytest", "0").path)
    other = tmp_path / "other"
    other.write_bytes(b"#!/bin/sh\n")
    tests = [check("pytest")]

    def made(binary: str | None, sandbox: str = "bwrap", base: bool = False) -> int:
        checker = CheckerId(tool="pytest", version="0", path=binary) if binary else None
        options = {"sandbox": sandbox, "judged_against_base": base}
        return len(store_for(tests, [checker], state_dir=tmp_path / "state", **options))  # type: ignore[arg-type]

    assert made(str(linked)) == 1
    assert made(str(linked), sandbox="local") == 1
    assert made(str(linked), sandbox="none") == 0
    assert made(str(linked), base=True) == 0
    assert made(str(other)) == 0
    assert made(None) == 0
    ruff = [check("ruff")]
    assert store_for(ruff, [ours("ruff", "1")], sandbox="bwrap", judged_against_base=False) == []


def test_a_unittest_run_has_its_test_modules_placed_too(tmp_path: Path) -> None:
    """unittest imports test modules as any other (pytest rewrites them)."""
    (found,) = store_for(
        [check("unittest")],
        [ours("unittest", "3.11")],
        sandbox="bwrap",
        judged_against_base=False,
        state_dir=tmp_path / "state",
    )
    tree = workspace(tmp_path)
    missing = found.place(tree, FILES, None)
    assert sorted(s.rel for s in missing) == ["pkg/__init__.py", "pkg/mod.py", "tests/test_mod.py"]
    found.keep(missing)
    found.place(tree, FILES, None)
    assert (tree / "tests" / "__pycache__" / f"test_mod.{TAG}.pyc").is_file()
    assert not (tree / "tests" / "__pycache__" / f"conftest.{TAG}.pyc").exists()


RIGHT_ADD = "def add(a, b):\n    return a + b\n"


def _calc_package(tree: Path) -> Path:
    """A project whose package `pkg` has a right `calc.add`, with an empty `tests/`."""
    (tree / "pkg").mkdir(parents=True)
    (tree / "tests").mkdir()
    (tree / "pyproject.toml").write_text("[project]\nname = 'pkg'\nversion = '1'\n")
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "calc.py").write_text(RIGHT_ADD)
    return tree


@pytest.mark.slow
def test_a_verify_reads_kept_byte_code_and_never_a_stale_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end, under bubblewrap: the second run's test modules import the package from
    byte-code assay kept (a checked-hash `.pyc`, which Python never writes by itself); an
    edit is compiled afresh, its wrong value FAILED; put back, VERIFIED again."""
    from assay.pipeline import VerifyOptions, verify
    from assay.verdict import Status
    from tests.cli import path_with_venv

    monkeypatch.setenv("PATH", path_with_venv())
    tree = _calc_package(tmp_path / "tree")
    right = RIGHT_ADD
    (tree / "tests" / "test_calc.py").write_text(
        "import pathlib\nfrom pkg import calc\n\n"
        "def test_add():\n    assert calc.add(2, 3) == 5\n\n"
        "def test_read_from_kept_byte_code():\n"
        "    assert pathlib.Path(calc.__cached__).read_bytes()[4] == 3\n"
    )
    options = VerifyOptions(
        sandbox="bwrap", use_cache=False, kinds=frozenset({"test"}), cache_dir=str(tmp_path / "st")
    )
    first = verify(tree, options)
    assert first.status is Status.FAILED, first.note  # compiled by Python: a timestamp .pyc
    assert "test_read_from_kept_byte_code" in first.note
    assert verify(tree, options).status is Status.VERIFIED
    (tree / "pkg" / "calc.py").write_text(right.replace("a + b", "a - b"))
    wrong = verify(tree, options)
    assert wrong.status is Status.FAILED
    assert "test_add" in wrong.note
    (tree / "pkg" / "calc.py").write_text(right)
    assert verify(tree, options).status is Status.VERIFIED


def test_at_most_max_modules_are_read_before_the_checks(tmp_path: Path) -> None:
    from assay.bytecode_store import MAX_MODULES

    kept, tree = store(tmp_path), tmp_path / "many"
    tree.mkdir()
    names = [f"m{i}.py" for i in range(MAX_MODULES + 10)]
    for name in names:
        (tree / name).write_text("x = 1\n")
    assert len(kept.place(tree, names, None)) == MAX_MODULES


def nested_finally(depth: int, width: int) -> bytes:
    """A module whose every `finally` body holds `width` more: each is compiled once per
    way out of its `try`, so its code doubles at each level (depth 10, width 2: 190 KB of
    source that took 10 s to compile and made a 40 MB `.pyc`)."""
    lines = ["def never_called():"]

    def nest(indent: str, level: int) -> None:
        if level == 0:
            lines.append(f"{indent}x = 1")
            return
        lines.extend([f"{indent}try:", f"{indent}    x = 0", f"{indent}finally:"])
        for _ in range(width):
            nest(indent + "    ", level - 1)

    nest("    ", depth)
    return "\n".join(lines).encode() + b"\n"


def test_a_module_slow_to_compile_never_holds_the_verify_past_the_budget(
    tmp_path: Path,
) -> None:
    import hashlib
    import time

    from assay.bytecode_store import COMPILE_BUDGET_S, compile_until

    kept = store(tmp_path)
    honest = b"VALUE = 42\n"
    slow = nested_finally(10, 2)
    sources = [
        Source(rel, hashlib.sha256(data).hexdigest(), data)
        for rel, data in (("pkg/honest.py", honest), ("pkg/slow.py", slow))
    ]
    started = time.monotonic()
    compile_until([(kept, sources)])
    assert time.monotonic() - started < COMPILE_BUDGET_S + 1.0
    (entry,) = kept.directory.rglob("*.pyc")  # the honest module's, and nothing of the slow one
    assert entry.name == f"{sources[0].key}.pyc"


def test_a_pycache_link_of_the_tree_never_reaches_the_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end, under bubblewrap: `pkg/__pycache__` is a link to a directory of the tree
    holding an unchecked-hash `.pyc` of the right `add`, beside a wrong `calc.py`. Copied as
    a link, the interpreter believed that `.pyc` over the source, and the wrong sum was
    VERIFIED; left out, the source is what runs."""
    import py_compile

    from assay.pipeline import VerifyOptions, verify
    from assay.verdict import Status
    from tests.cli import path_with_venv

    monkeypatch.setenv("PATH", path_with_venv())
    tree = _calc_package(tmp_path / "tree")
    (tree / "pkg" / "stash").mkdir()
    py_compile.compile(
        str(tree / "pkg" / "calc.py"),
        cfile=str(tree / "pkg" / "stash" / f"calc.{TAG}.pyc"),
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
    )
    (tree / "pkg" / "__pycache__").symlink_to("stash")
    (tree / "pkg" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (tree / "tests" / "test_calc.py").write_text(
        "from pkg import calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n"
    )
    options = VerifyOptions(
        sandbox="bwrap", use_cache=False, kinds=frozenset({"test"}), cache_dir=str(tmp_path / "st")
    )
    report = verify(tree, options)
    assert report.status is Status.FAILED, report.note
    assert "test_add" in report.note

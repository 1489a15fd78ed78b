"""Test modules rewritten by assay as pytest rewrites them (`assay.pytest_bytecode`): the
very code pytest would make, read by pytest under its own name, never where the project
changes how pytest rewrites."""

from __future__ import annotations

import marshal
import os
import sys
import types
from pathlib import Path

import pytest
from _pytest.assertion.rewrite import _rewrite_test

from assay.bytecode_store import store_for
from assay.evidence import Check, CheckerId
from assay.pytest_bytecode import (
    MAX_ASSERTS,
    own_version,
    pass_hook_configured,
    rewritten,
    rewritten_module,
    tag,
)
from assay.verdict import Kind

SOURCE = b'''"""A module of tests."""
from __future__ import annotations

import pytest


def add(a, b):
    return a + b


def test_add():
    assert add(2, 3) == 5, "sums"
    assert [add(i, i) for i in range(3)] == [0, 2, 4]


class TestThings:
    def test_nested(self):
        def inner(x):
            assert x not in {1, 2}
            return x
        assert inner(3) == 3 and not inner(4) == 5
'''


def shape(code: types.CodeType) -> tuple[object, ...]:
    """All of `code` but its file name (and how marshal happens to share its strings)."""
    consts = tuple(shape(k) if isinstance(k, types.CodeType) else k for k in code.co_consts)
    fields = (
        "co_code", "co_names", "co_varnames", "co_freevars", "co_cellvars", "co_flags",
        "co_argcount", "co_kwonlyargcount", "co_posonlyargcount", "co_stacksize",
        "co_firstlineno", "co_name", "co_qualname", "co_linetable", "co_exceptiontable",
    )  # fmt: skip
    return (consts, *(getattr(code, f, None) for f in fields))


def test_the_rewrite_is_the_one_pytest_makes(tmp_path: Path) -> None:
    (tmp_path / "test_things.py").write_bytes(SOURCE)
    source_hash, expected = _rewrite_test(tmp_path / "test_things.py", None)  # type: ignore[arg-type]
    pyc = rewritten(SOURCE, "tests/test_things.py")
    assert pyc is not None
    assert pyc[4:8] == b"\x03\x00\x00\x00" and pyc[8:16] == source_hash[:8]
    assert shape(marshal.loads(pyc[16:])) == shape(expected)


def test_a_rewrite_that_warns_or_could_take_long_is_left_to_pytest() -> None:
    assert rewritten(b"def test_x():\n    assert (1 == 2, 'always true')\n", "t.py") is None
    assert rewritten(b"def test_x(:\n", "t.py") is None
    many = b"def test_x():\n" + b"    assert x\n" * (MAX_ASSERTS + 1)
    assert rewritten(many, "t.py") is None  # 20,000 of them took 100 s to rewrite
    assert rewritten(b"def test_x():\n" + b"    assert x\n" * MAX_ASSERTS, "t.py") is not None


def test_which_modules_pytest_rewrites() -> None:
    assert all(map(rewritten_module, ["test_a.py", "a_test.py", "conftest.py"]))
    assert not any(map(rewritten_module, ["a.py", "testing.py", "test_a.txt", "__init__.py"]))


def check(tool: str, *argv: str) -> Check:
    return Check(name=tool, kind=Kind.TEST, argv=("python3", "-m", tool, *argv), cwd=".", tool=tool)


def test_only_for_the_version_assay_holds_and_without_the_pass_hook(tmp_path: Path) -> None:
    own = own_version()
    assert own is not None  # assay's test environment holds pytest 9.2 or later
    binary = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)

    def stores(version: str, pass_hook: bool = False) -> list[str]:
        checker = CheckerId(tool="pytest", version=version, path=binary)
        found = store_for(
            [check("pytest")],
            [checker],
            sandbox="bwrap",
            judged_against_base=False,
            state_dir=tmp_path,
            pass_hook=lambda: pass_hook,
        )
        return [store.suffix for store in found]

    assert stores(own) == [f".{sys.implementation.cache_tag}.pyc", f".{tag(own)}.pyc"]
    assert stores("9.1.0") == [f".{sys.implementation.cache_tag}.pyc"]
    assert stores(own, pass_hook=True) == [f".{sys.implementation.cache_tag}.pyc"]


def test_a_pass_hook_the_project_configures_is_seen(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\naddopts = '-q'\n")
    files = ["pyproject.toml", "src/pkg.py"]
    assert not pass_hook_configured(tmp_path, files, [check("pytest")])
    assert pass_hook_configured(
        tmp_path, files, [check("pytest", "-o", "enable_assertion_pass_hook=true")]
    )
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pytest.ini").write_text("[pytest]\nenable_assertion_pass_hook = true\n")
    assert pass_hook_configured(tmp_path, [*files, "sub/pytest.ini"], [check("pytest")])
    (tmp_path / "setup.cfg").symlink_to(tmp_path / "sub" / "pytest.ini")
    assert pass_hook_configured(tmp_path, [*files, "setup.cfg"], [check("pytest")])


@pytest.mark.slow
def test_a_verify_reads_rewritten_test_modules_it_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end, under bubblewrap: on the second run the test module's rewritten
    byte-code is older than the session (placed before pytest started, not written by
    it); its assertions still explain a failure; an edited test is rewritten afresh."""
    from assay.pipeline import VerifyOptions, verify
    from assay.verdict import Status
    from tests.cli import path_with_venv

    monkeypatch.setenv("PATH", path_with_venv())
    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "pyproject.toml").write_text("[project]\nname = 'calc'\nversion = '1'\n")
    (tree / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (tree / "tests" / "conftest.py").write_text("import time\n\nSTARTED = time.time()\n")
    test = (
        "import pathlib, sys, time\nimport calc\nfrom conftest import STARTED\n\n"
        "def test_add():\n    assert calc.add(2, 3) == 5\n\n"
        "def test_read_from_kept_byte_code():\n"
        "    here = pathlib.Path(__file__)\n"
        "    (pyc,) = here.parent.glob('__pycache__/test_calc.*-pytest-*.pyc')\n"
        "    assert pyc.stat().st_mtime < STARTED\n"
    )
    (tree / "tests" / "test_calc.py").write_text(test)
    options = VerifyOptions(
        sandbox="bwrap", use_cache=False, kinds=frozenset({"test"}), cache_dir=str(tmp_path / "st")
    )
    first = verify(tree, options)
    assert first.status is Status.FAILED, first.note  # rewritten by pytest as it ran
    assert "test_read_from_kept_byte_code" in first.note
    assert verify(tree, options).status is Status.VERIFIED
    # The kept rewrite explains a failure as pytest's own does.
    (tree / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    wrong = verify(tree, options)
    assert wrong.status is Status.FAILED
    (pytest_check,) = wrong.checks
    assert pytest_check.result is not None
    out = pytest_check.result.stdout.text
    assert "where -1 = <function add" in out, out
    (tree / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (tree / "tests" / "test_calc.py").write_text(test.replace("== 5", "== 6"))
    edited = verify(tree, options)
    assert edited.status is Status.FAILED
    assert "test_add" in edited.note

"""The canaries' guards tell installed code from code that only says it is.

A code object names its file, and code made on the spot can name any file. The helpers both
guards are written with (`_FUNCTION_STATE`) believe a function is an installed file's only
if that file compiles to its code, it runs in that module's own names, and what it closes
over is genuine too. Here they run for real: on modules written under a temporary root, in
a real pytest run with a real plugin patching pytest, and in a real unittest guard.
"""

from __future__ import annotations

import gc
import hashlib
import importlib.util
import os
import subprocess
import sys
import textwrap
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.canaries.python import _FUNCTION_STATE, _PYTEST_PLUGIN, _UNITTEST_GUARD, GUARD_EXIT

MODULE = """\
import functools


def plain(x):
    return x + 1


def wrapping(inner):
    @functools.wraps(inner)
    def wrapper(*args):
        return inner(*args)

    return wrapper


wrapped = wrapping(plain)
"""

Genuine = Callable[..., bool]


@pytest.fixture
def installed(tmp_path: Path) -> Iterator[tuple[types.ModuleType, Genuine]]:
    """A module under a root taken for installed, and the helpers' `_genuine` for it."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "installed_here.py").write_text(MODULE)
    spec = importlib.util.spec_from_file_location("installed_here", root / "installed_here.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["installed_here"] = module
    spec.loader.exec_module(module)
    helpers: dict[str, object] = {"_os": os, "_sys": sys}
    exec(_FUNCTION_STATE, helpers)  # noqa: S102 - the helpers as the guards hold them
    genuine = helpers["_genuine"]
    assert callable(genuine)
    try:
        yield module, lambda value: bool(genuine(value, (str(root),)))
    finally:
        del sys.modules["installed_here"]


def test_an_installed_function_and_what_it_makes_are_genuine(
    installed: tuple[types.ModuleType, Genuine],
) -> None:
    module, genuine = installed
    assert genuine(module.plain)
    assert genuine(module.wrapped)  # a closure over a genuine function
    assert genuine(module.wrapping(module.plain))


def test_code_made_on_the_spot_under_the_files_name_is_not(
    installed: tuple[types.ModuleType, Genuine],
) -> None:
    module, genuine = installed
    where = str(module.__file__)
    # The same name, file and first line, other code, run in the module's own names.
    made: dict[str, object] = {}
    other = "\n\n\ndef plain(x):\n    return x + 2\n"
    exec(compile(other, where, "exec"), vars(module), made)  # noqa: S102 - the attack
    assert not genuine(made["plain"])
    # The file's own text, compiled afresh into names of its own.
    fresh: dict[str, object] = {}
    exec(compile(Path(where).read_text(), where, "exec"), fresh)  # noqa: S102 - the attack
    assert not genuine(fresh["plain"])


def test_installed_code_given_other_names_or_cells_is_not(
    installed: tuple[types.ModuleType, Genuine],
) -> None:
    module, genuine = installed
    code = module.plain.__code__
    assert not genuine(types.FunctionType(code, dict(vars(module))))

    def stand_in(x: int) -> int:
        return x

    wrapper = module.wrapping(module.plain)
    assert wrapper.__closure__ is not None
    wrapper.__closure__[0].cell_contents = stand_in
    assert not genuine(wrapper)
    assert not genuine(stand_in)  # not under the root at all


@pytest.mark.parametrize("case", ["as pinned", "pinned to other bytes", "rewritten since"])
def test_a_pinned_files_code_is_genuine_only_while_its_bytes_are_those_pinned(
    tmp_path: Path, case: str
) -> None:
    # The project's own plugin module, in the workspace: under no installed root.
    where = tmp_path / "pinned_here.py"
    where.write_text(MODULE)
    spec = importlib.util.spec_from_file_location("pinned_here", where)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["pinned_here"] = module
    try:
        spec.loader.exec_module(module)
        helpers: dict[str, Any] = {"_os": os, "_sys": sys, "_hashlib": hashlib}
        exec(_FUNCTION_STATE, helpers)  # noqa: S102 - the helpers as the guards hold them
        pinned = MODULE if case != "pinned to other bytes" else MODULE + "# other\n"
        helpers["_PINNED"][str(where)] = hashlib.sha256(pinned.encode()).hexdigest()
        if case == "rewritten since":  # the same code, other bytes: a file changed under it
            where.write_text(MODULE + "\n# rewritten\n")
        genuine = helpers["_genuine"](module.wrapped, (str(tmp_path / "elsewhere"),))
    finally:
        del sys.modules["pinned_here"]
    assert genuine is (case == "as pinned")


def _venv(where: Path) -> Path:
    """A virtual environment that sees this one's packages (pytest): its own site-packages
    is where a plugin is installed."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(where)],
        check=True,
    )
    done = subprocess.run(
        [str(where / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return Path(done.stdout.strip())


#: A plugin that patches pytest as plugins do, in a function with an `assert` (pytest
#: rewrites the asserts of the modules it loads as plugins).
PATCHING_PLUGIN = """\
import _pytest.python

_run = _pytest.python.Function.runtest


def runtest(self):
    assert self is not None, "no item"
    return _run(self)


_pytest.python.Function.runtest = runtest
"""


def _guarded_tree(tree: Path, tests: str = "") -> Path:
    """A project with one passing test, and the pytest guard's plugin (`-p the_guard`) with
    `tests` of its own, marked `abcd`."""
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    guard = _PYTEST_PLUGIN.substitute(
        state=textwrap.indent(_FUNCTION_STATE, "    "), pinned="{}", tests=tests, seed="s",
        mark="'ab' 'cd'", code=GUARD_EXIT,
    )  # fmt: skip
    (tree / "the_guard.py").write_text(guard)
    return tree


def _guarded_run(python: str, tree: Path, plugin: str, *path: Path) -> tuple[int, str]:
    """pytest run by `python` in `tree` with the guard, then `plugin`, loaded: its exit
    code and all it said."""
    done = subprocess.run(
        [python, "-m", "pytest", "-p", "the_guard", "-p", plugin, "-p", "no:cacheprovider",
         "tests"],
        cwd=tree, env={**os.environ, "PYTHONPATH": os.pathsep.join(map(str, (tree, *path)))},
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr


@pytest.mark.parametrize("where", ["installed", "in the tree"])
def test_a_plugins_patch_passes_only_where_installed(tmp_path: Path, where: str) -> None:
    site = _venv(tmp_path / "venv")
    tree = _guarded_tree(tmp_path / "tree")
    (site if where == "installed" else tree / "tests").joinpath("patching.py").write_text(
        PATCHING_PLUGIN
    )
    python = str(tmp_path / "venv" / "bin" / "python")
    returncode, said = _guarded_run(python, tree, "patching", tree / "tests")
    if where == "installed":
        assert returncode == 0, said
        assert "1 passed" in said, said
    else:
        assert returncode == GUARD_EXIT, said
        # Found as soon as the run's tests are collected, the guard's first look at them.
        assert "abcd (after collection): _pytest.python.Function.runtest" in said, said


REPLACED_BEFORE_THE_GUARD = """\
import sys
import unittest.case

case = unittest.case.TestCase
real = case._callTestMethod.__code__
# Made on the spot as unittest's own code, at its own line, before the guard is imported.
source = "\\n" * (real.co_firstlineno - 1) + "def _callTestMethod(self, method):\\n    pass\\n"
made = {}
exec(compile(source, real.co_filename, "exec"), vars(unittest.case), made)
if sys.argv[1] == "replaced":
    case._callTestMethod = made["_callTestMethod"]
import the_guard

the_guard._guard(None, "at once")
print("the guard let it by")
"""


@pytest.mark.parametrize("replaced", [True, False])
def test_unittest_code_replaced_before_the_guard_looks_is_found(
    tmp_path: Path, replaced: bool
) -> None:
    guard = _UNITTEST_GUARD.substitute(
        state=textwrap.indent(_FUNCTION_STATE, "    "), mark="'ab' 'cd'", code=GUARD_EXIT
    )
    (tmp_path / "the_guard.py").write_text(guard)
    (tmp_path / "run.py").write_text(REPLACED_BEFORE_THE_GUARD)
    done = subprocess.run(
        [sys.executable, "run.py", "replaced" if replaced else "kept"],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    said = done.stdout + done.stderr
    if replaced:
        assert done.returncode == GUARD_EXIT, said
        assert "abcd (at once): unittest.case.TestCase._callTestMethod" in said, said
    else:
        assert (done.returncode, done.stdout) == (0, "the guard let it by\n"), said


#: A plugin loaded after the guard that makes the guard's own end-of-session check do
#: nothing, in place.
DISARMS_THE_GUARDS_LAST_LOOK = """\
import sys

for module in list(sys.modules.values()):
    if hasattr(module, "_guarding") and hasattr(module, "pytest_sessionfinish"):
        module.pytest_sessionfinish.__code__ = (lambda session, guard=None: None).__code__
"""


@pytest.mark.parametrize("disarmed", [True, False])
def test_the_guards_own_functions_are_guarded_too(tmp_path: Path, disarmed: bool) -> None:
    looks = 'def test_zz(guard=_guard):\n    guard("while test_zz ran")\n'
    tree = _guarded_tree(tmp_path / "tree", looks)
    (tree / "disarming.py").write_text(DISARMS_THE_GUARDS_LAST_LOOK if disarmed else "")
    returncode, said = _guarded_run(sys.executable, tree, "disarming")
    if disarmed:
        assert returncode == GUARD_EXIT, said
        assert "abcd (after collection): the_guard.pytest_sessionfinish" in said, said
    else:
        assert returncode == 0 and "2 passed" in said, said


def _equality_helpers() -> dict[str, Any]:
    helpers: dict[str, Any] = {"_os": os, "_sys": sys}
    exec(_FUNCTION_STATE, helpers)  # noqa: S102 - the helpers as the guards hold them
    return helpers


def _installed_roots() -> tuple[str, ...]:
    """Where installed code lives, as the guards take it."""
    import sysconfig

    paths = sysconfig.get_paths()
    return tuple({paths[k] for k in ("purelib", "platlib", "stdlib", "platstdlib")})


def _made_in(where: str, source: str) -> type:
    """The class `source` makes, its code compiled as if it were the file `where`."""
    names: dict[str, Any] = {"__name__": "made_here"}
    exec(compile(source, where, "exec"), names)  # noqa: S102 - a test's own class
    made = names["made"]
    assert isinstance(made, type)
    return made


ALWAYS_EQUAL = (
    "made = type('Total', (int,), {'__eq__': lambda s, o: True, '__hash__': int.__hash__})"
)


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_a_class_of_the_code_under_test_equal_to_anything_is_named(tmp_path: Path) -> None:
    """Every class of this process outside the installed roots is asked (assay's own
    among them): none but the one made here says it equals anything, and values made
    without `__init__` go quietly (`SandboxIdentity.__del__` reads what `__init__` sets).
    Installed code's match-anything values (`unittest.mock.ANY`) are not asked."""
    from unittest import mock

    from assay.sandbox.identity import SandboxIdentity

    assert "__eq__" in vars(SandboxIdentity)  # asked, then
    assert mock.ANY == object()
    helpers = _equality_helpers()
    roots = (*_installed_roots(), str(tmp_path / "installed"))
    made = _made_in(str(tmp_path / "calc.py"), ALWAYS_EQUAL)
    assert helpers["_equal_to_anything"](roots) == ["made_here.Total"]
    # The same class in installed code, or in test code --protect restores: not asked.
    for where in (tmp_path / "installed" / "calc.py", tmp_path / "tests" / "helpers.py"):
        _made_in(str(where), ALWAYS_EQUAL)
    assert helpers["_equal_to_anything"](roots) == ["made_here.Total"]
    del made


def test_a_class_dropped_before_the_end_is_kept_for_the_guard(tmp_path: Path) -> None:
    """Only the cyclic collector frees a class: one made for a test and collected before
    the guard's last look is gone, unless kept: when its test ends (it is young then), or
    when a full collection (`gc.collect()`) is about to sweep it."""
    helpers = _equality_helpers()
    roots = (*_installed_roots(), str(tmp_path / "installed"))
    _made_in(str(tmp_path / "calc.py"), ALWAYS_EQUAL)  # dropped at once
    gc.collect()
    assert helpers["_equal_to_anything"](roots) == []
    kept: dict[int, type] = {}
    helpers["_keeping"](roots, kept)
    keep = gc.callbacks[-1]
    try:
        _made_in(str(tmp_path / "calc.py"), ALWAYS_EQUAL)
        helpers["_keep_young"](roots, kept)  # as the test that made it ends
        gc.collect(0)
        _made_in(str(tmp_path / "other.py"), ALWAYS_EQUAL.replace("Total", "Sum"))
        gc.collect()
    finally:
        gc.callbacks.remove(keep)
    found = helpers["_equal_to_anything"](roots, kept.values())
    assert sorted(found) == ["made_here.Sum", "made_here.Total"]


def test_only_classes_written_in_python_on_whole_bases_are_asked(tmp_path: Path) -> None:
    """A value made without `__init__` of a type written in C may not be safe to touch
    (upb's map container, asked so, crashed the process): such a type, or a class of the
    code under test built on one, is never asked."""
    import decimal
    import io

    helpers = _equality_helpers()
    written_in_python = helpers["_written_in_python"]
    made = _made_in(str(tmp_path / "calc.py"), ALWAYS_EQUAL)
    assert written_in_python(made) and written_in_python(Path)
    assert not any(written_in_python(c) for c in (int, decimal.Decimal, io.StringIO, type))
    on_c = _made_in(
        str(tmp_path / "calc.py"),
        "import io\nmade = type('Buffer', (io.BytesIO,), {'__eq__': lambda s, o: True})",
    )
    roots = (str(tmp_path / "installed"),)
    assert helpers["_compares_as_the_project"](made, roots)
    assert not helpers["_compares_as_the_project"](on_c, roots)


def test_a_class_whose_comparison_ends_the_process_is_taken_for_equal(tmp_path: Path) -> None:
    """`__eq__` raising SystemExit when the guard asks would end the run before the report:
    it is named, never let through."""
    helpers = _equality_helpers()
    exits = _made_in(
        str(tmp_path / "calc.py"),
        "def _eq(self, other):\n    raise SystemExit(0)\n\n"
        "made = type('Exits', (int,), {'__eq__': _eq, '__hash__': int.__hash__})",
    )
    assert helpers["_holds_equal"](exits) is True


def test_a_type_an_extension_made_and_does_not_bind_is_never_asked() -> None:
    """upb's map container is a heap type of `google._upb._message`, which does not bind
    it at its name: asked (a value made without `__init__`), it crashed the process, which
    was every honest project's test run that imported protobuf under `--protect`."""
    script = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "import google.protobuf.descriptor_pb2\n"
        "from tests.test_canary_guards import _equality_helpers, _installed_roots\n"
        "print(_equality_helpers()['_equal_to_anything'](_installed_roots()))\n"
    )
    root = str(Path(__file__).resolve().parent.parent)
    done = subprocess.run(
        [sys.executable, "-c", script, root],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"

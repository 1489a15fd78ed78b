"""Canaries for Python's test runners: pytest and unittest.

pytest: a module of assay's, in a directory of its own that collection is told to ignore,
loaded as a plugin (`-p`) that appends its two tests to whatever the run collected, after
every other plugin has selected and ordered (so `-k`, `-m`, `testpaths` and friends need
not be understood here), and that therefore run last. Fail-fast flags are dropped: the
must-fail canary must not stop the run, and the real tests must all run.

unittest: a test package of assay's where discovery starts (its module named so that
pytest's default patterns do not take it), or named on the command line when the run names
its tests; the run lists each test (`-v`), which is where the canaries are found.

Both directories carry a `.gitignore`, and the modules comments, that keep the linters and
type checkers running beside the tests off them. No name, path or failure message says what
they are: code under test that spares whatever looks planted must tell them apart some
other way, and a guard beside them ends the run when what the runner reports through was
replaced (`_PYTEST_PLUGIN`, `_UNITTEST_GUARD`).
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import re
import string
import textwrap
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from assay.canaries import (
    Canary,
    CanaryFile,
    Checks,
    NoCanary,
    Planting,
    PlantRequest,
    any_name,
    camel,
    failed_unless,
    ignored_by_git,
    inside,
    unequal,
    within,
)
from assay.parsed_output import ParsedOutput
from assay.process import ProcessResult

#: Comments that keep linters and type checkers running beside the tests off the file.
_QUIET = (
    "# type: ignore\n"
    # mypy reports a whole-file ignore with nothing to ignore as unused; not then.
    "# mypy: ignore-errors\n"
    "# ruff: noqa\n"
    "# flake8: noqa\n"
    "# pylint: skip-file\n"
)

#: pytest flags that stop a run at a failure (the must-fail canary would stop it).
PYTEST_FAIL_FAST = frozenset({"-x", "--exitfirst", "--sw", "--stepwise", "--sw-skip"})
#: pytest flags that take the next argument as their value, among those dropped.
_PYTEST_VALUED = frozenset({"--maxfail"})


# --------------------------------------------------------------------------- pytest

#: What both guards compare a function by, written into each: the object, and the code,
#: defaults and closure it runs (a property's getter, a classmethod's function); and how
#: they tell installed code from code that only says it is.
#:
#: A code object names its file, and code made on the spot can name any file
#: (`compile(source, ".../os.py", "exec")`). So code is taken for an installed file's only
#: if that file compiles to it (every nested function too, by name and first line; as
#: pytest rewrites a plugin's asserts, where the guard says so), it runs in that module's
#: own names, and every function it closes over or defaults to is genuine in turn: an
#: installed function rebuilt with other globals or cells is not.
_FUNCTION_STATE = """\
def _unwrapped(value):
    return getattr(value, "fget", None) or getattr(value, "__func__", None) or value


def _state(value):
    found = _unwrapped(value)
    return (value, *(getattr(found, a, None) for a in ("__code__", "__defaults__", "__kwdefaults__", "__closure__")))


_COMPILED = {}
#: Files of the workspace's believed as installed ones are, each with the SHA-256 its
#: bytes must have (the project's own pytest plugins, as its base has them).
_PINNED = {}


def _byte_code(where, source):
    # The file's byte-code beside it, if the import system would take it for the file's (a
    # toolchain's files are read-only in the sandbox); compiled afresh if not.
    import importlib.util
    import marshal

    head, name = _os.path.split(where)
    cached = _os.path.join(head, "__pycache__", f"{name[:-3]}.{_sys.implementation.cache_tag}.pyc")
    try:
        with open(cached, "rb") as file:
            data = file.read()
        stat = _os.stat(where)
        stamp = (0, int(stat.st_mtime) & 0xFFFFFFFF, stat.st_size & 0xFFFFFFFF)
        read = tuple(int.from_bytes(data[at:at + 4], "little") for at in (4, 8, 12))
        if data[:4] == importlib.util.MAGIC_NUMBER and read == stamp:
            return marshal.loads(data[16:])
    except (OSError, ValueError, EOFError, TypeError):
        pass
    return compile(source, where, "exec", dont_inherit=True)


def _compiled(where, rewrite, fresh=False):
    # `fresh`: a file of the workspace, whose byte-code beside it the code under test can write.
    if where not in _COMPILED:
        try:
            with open(where, "rb") as file:
                source = file.read()
            pinned = _PINNED.get(where)
            if pinned is None and fresh:
                pending = [compile(source, where, "exec", dont_inherit=True)]
            elif pinned is None:
                pending = [_byte_code(where, source)]
            elif _hashlib.sha256(source).hexdigest() == pinned:
                pending = [compile(source, where, "exec", dont_inherit=True)]  # never its pyc
            else:
                raise ValueError("not the bytes believed")
            if rewrite is not None:
                pending.append(rewrite(source, where))
        except Exception:
            pending = []
        _COMPILED[where] = _by_place(pending)
    return _COMPILED[where]


def _by_place(pending):
    # Each code object under `pending`, nested ones too, by its name and first line.
    found = {}
    while pending:
        code = pending.pop()
        found.setdefault((code.co_name, code.co_firstlineno), []).append(code)
        pending.extend(c for c in code.co_consts if isinstance(c, type(code)))
    return found


def _closed_over(found):
    cells = []
    for cell in getattr(found, "__closure__", None) or ():
        try:
            cells.append(cell.cell_contents)
        except ValueError:
            pass
    defaults = getattr(found, "__defaults__", None) or ()
    return [*cells, *defaults, *(getattr(found, "__kwdefaults__", None) or {}).values()]


def _genuine(value, roots, rewrite=None, depth=0, shallow=False):
    # `shallow`: the function's own code only, not what it closes over (a wrapper's).
    found = _unwrapped(value)
    code = getattr(found, "__code__", None)
    where = getattr(code, "co_filename", None)
    if not isinstance(where, str) or not (where.startswith(roots) or where in _PINNED) or depth > 4:
        return False
    names = getattr(found, "__globals__", None)
    module = _sys.modules.get(names.get("__name__")) if isinstance(names, dict) else None
    home = getattr(module, "__file__", None)
    if getattr(module, "__dict__", None) is not names or not isinstance(home, str):
        return False
    if home != where and _os.path.realpath(home) != _os.path.realpath(where):
        return False
    if code not in _compiled(where, rewrite(where) if rewrite else None).get((code.co_name, code.co_firstlineno), ()):
        return False
    if shallow:
        return True
    inner = [v for v in _closed_over(found) if getattr(_unwrapped(v), "__code__", None) is not None]
    return all(_genuine(v, roots, rewrite, depth + 1) for v in inner)


#: Directories and module names of test code and test helpers that --protect restores.
_TEST_PLACES = {"tests", "test", "_testing", "testutil", "testutils", "test_utils", "test_helpers"}


def _test_file(where):
    # Test code by the names --protect restores from the base.
    parts = where.split(_os.sep)
    name = parts[-1]
    return (name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py")
            or name[:-3] in _TEST_PLACES or not _TEST_PLACES.isdisjoint(parts[:-1]))


class _Unlike:
    # A value no code under test can have been made to equal: a class of the guard's own,
    # whose every attribute is a new object, so that an `__eq__` comparing attributes the
    # probed value lacks (`getattr(other, "x", None)`) does not find them equal.
    __slots__ = ()

    def __getattr__(self, name):
        return object()


#: Types written in C whose values `__new__` makes whole: a class of the code under test
#: built on any other C type is never asked (a value of it made without `__init__` may
#: not be safe to touch at all).
_WHOLE_WHEN_NEW = (
    object, int, float, complex, bool, str, bytes, tuple, frozenset, list, dict, set, bytearray,
)


#: What an equality assertion asks a value: `==`, and the difference that `pytest.approx`
#: and `assertAlmostEqual` take (`abs(expected - actual)`), or the order a bound takes
#: (`0.19 < mean < 0.21`), which a float subclass answers before float does.
_DIFFERENCE = ("__sub__", "__rsub__")
_ORDER = ("__lt__", "__gt__", "__le__", "__ge__")
#: And what `in` asks a container (`assert 7 in primes_below(10)`).
#: `!=` too, which `assertDictEqual` and `assertMultiLineEqual` ask.
_COMPARING = ("__eq__", "__ne__", *_DIFFERENCE, *_ORDER, "__contains__")
#: Two answers of the order no value gives for one number: below it and above it (or not).
_CONTRADICTING = (("__lt__", "__gt__"), ("__lt__", "__ge__"), ("__gt__", "__le__"))


def _compares_as_the_project(cls, roots):
    # Whether `cls` has a comparing method of its own, written in Python, that is the code
    # under test's: its module or that function in a file neither installed nor test code
    # --protect restores; and whether a value of it can be made safely to ask.
    return any(_own_method(cls, name, roots) for name in _COMPARING) and all(
        _written_in_python(base, roots) or base in _WHOLE_WHEN_NEW for base in cls.__mro__)


def _own_method(cls, name, roots):
    # Set in the class's own namespace by the code under test unless proven otherwise: the
    # class is the one its module (installed, or test code --protect restores) binds at its
    # name, and the function's code is what an installed file compiles to. A class names its
    # own module (`__module__ = "numbers"`) and code names any file (`compile(src, path)`),
    # so neither claim alone is believed.
    if name not in vars(cls) or not _written_in_python(cls, roots):
        return False
    code = getattr(_unwrapped(vars(cls)[name]), "__code__", None)
    module = _sys.modules.get(vars(cls).get("__module__") or "")
    if not (_elsewhere(getattr(module, "__file__", None), roots) and _made_there(cls, module, code, name)):
        return True
    where = getattr(code, "co_filename", None)
    if code is not None and not (_elsewhere(where, roots) and _compiled_from(code, where, roots)):
        return True
    # A method with no code (`partialmethod(operator.is_not)`), or code of another class's
    # (`vars(mock._ANY)["__eq__"]`), says nothing of where its class was made: believed
    # only of a class its installed module's file states. (modal's `live_method` makes
    # every such method one code.) Code of the test files --protect restores is the tests'
    # own, whatever its name.
    own = code is not None and (
        getattr(code, "co_qualname", None) in (None, f"{cls.__qualname__}.{name}")
        or not (where.startswith(roots) or _frozen_name(where) is not None))
    return not (own or _stated_in_its_file(cls, module, name))


def _stated_in_its_file(cls, module, method):
    # Whether the file of `cls`'s module, as it compiles, holds a class statement of its
    # qualified name that binds `method`: modal's `_Dict` is `class _Dict` of
    # modal/dict.py, whose body defines `__contains__`; a class the project bound into
    # `numbers` is no statement of numbers.py's, nor one bound over `numbers.Integral`,
    # whose body defines no `__eq__`. Read from the file, not from watching classes made:
    # a wrapped `__build_class__` puts a frame between a class statement and its metaclass,
    # where pydantic looks for the names a model made in a function uses. (A class bound
    # over one whose statement binds that method is not told apart: `mock._ANY` rebound.)
    where = getattr(module, "__file__", None)
    if not (isinstance(where, str) and where.endswith(".py")):
        return False
    return any(
        getattr(code, "co_qualname", None) == cls.__qualname__ and method in code.co_names
        for (name, _), codes in _compiled(where, None).items()
        if name == cls.__name__
        for code in codes
    )


def _elsewhere(where, roots):
    # A file of an installed package's, a module frozen into the interpreter, or test code
    # --protect restores: not the project's.
    return isinstance(where, str) and (_frozen_name(where) is not None or _os.path.isabs(where) and (
        where.startswith(roots) or _test_file(where)))


def _frozen_name(where):
    # The module a code's file names as frozen into the interpreter (`<frozen os>`).
    return where[8:-1] if where.startswith("<frozen ") and where.endswith(">") else None


def _made_there(cls, module, code, name):
    # Whether `module` binds `cls` at its qualified name, read from the namespaces themselves
    # (no `__getattr__` runs); a class made in a function is its file's only when the method
    # is that function's own, by its code's qualified name.
    if "<locals>" in cls.__qualname__:
        return getattr(code, "co_qualname", None) == f"{cls.__qualname__}.{name}" and _os.path.realpath(
            code.co_filename) == _os.path.realpath(module.__file__)
    held = module
    for part in cls.__qualname__.split("."):
        held = vars(held).get(part) if hasattr(held, "__dict__") else None
    return held is cls


def _compiled_from(code, where, roots):
    # An installed file's code only as that file compiles (test code is rewritten as pytest
    # imports it, and --protect restores its files from the base).
    frozen = _frozen_name(where)
    if frozen is None and not where.startswith(roots):
        return True
    found = _compiled(where, None) if frozen is None else _frozen_code(frozen)
    return code in found.get((code.co_name, code.co_firstlineno), ())


def _frozen_code(name):
    # A frozen module's code, as the interpreter holds it, by name and first line.
    key = f"<frozen {name}>"
    if key not in _COMPILED:
        import _imp

        pending = []
        try:
            pending.append(_imp.get_frozen_object(name))
        except Exception:
            pass
        _COMPILED[key] = _by_place(pending)
    return _COMPILED[key]


#: What an extension module's file ends with.
_EXTENSIONS = (".so", ".pyd")


def _written_in_python(cls, roots=None):
    # A class statement's (or `type()`'s) class: a heap type, never an immutable one, as
    # the types C code makes statically or from a spec mostly are, and not of an extension
    # module (upb's map container is a mutable heap type with Mapping's `__eq__`, and a
    # value of it made without `__init__` crashes the process when asked).
    flags = getattr(cls, "__flags__", 0)
    if not flags & (1 << 9) or flags & (1 << 8):
        return False
    module = _sys.modules.get(vars(cls).get("__module__") or "")
    where = getattr(module, "__file__", None)
    if not (isinstance(where, str) and where.endswith(_EXTENSIONS)):
        return True
    # Naming an extension module: its own type (bound there or not: upb's map container is
    # not), unless a comparing method of its own is code of the project's files, which a
    # class statement naming that module (`__module__ = "math"`) holds and no C type does.
    files = [_code_file(vars(cls)[name]) for name in _COMPARING if name in vars(cls)]
    return roots is not None and not _made_there(cls, module, None, "") and any(
        isinstance(file, str) and not _elsewhere(file, roots) for file in files)


def _code_file(method):
    # The file a method's code says it was compiled from; None for one with no code (C's).
    code = getattr(_unwrapped(method), "__code__", None)
    return getattr(code, "co_filename", None)


def _asked(cls, roots):
    # A class the guard asks: it compares, or judges which classes are its, as the project.
    return _compares_as_the_project(cls, roots) or _judges_kinds(cls, roots)


def _the_projects_classes(roots):
    # Every class alive that compares as the project's.
    return (cls for cls in _every_class() if _asked(cls, roots))


def _every_class():
    # Every class alive: each is its bases' subclass.
    seen, stack = set(), [object]
    while stack:
        for cls in type.__subclasses__(stack.pop()):
            if id(cls) not in seen:
                seen.add(id(cls))
                stack.append(cls)
                yield cls


def _equal_to_anything(roots, kept=()):
    # Each class of the code under test alive now, or `kept` (`_keeping`), whose values are
    # equal to a value they never saw: an assertion comparing one with what a test expects
    # cannot fail (`assert add(2, 3) == 5` of an int subclass whose `__eq__` returns True).
    asked = {id(cls): cls for cls in (*kept, *_the_projects_classes(roots))}  # each once
    named = {f"{c.__module__}.{c.__qualname__}": None for c in asked.values()
             if _compares_as_the_project(c, roots) and _holds_equal(c)}
    return list(named)


class _StrangerError(Exception):
    # An error class of the guard's own that no code under test has seen: a class that
    # takes it, or a value of it, for its own takes any class so.
    pass


#: What `issubclass` and `isinstance` ask a class's metaclass (and ABCMeta an ABC's hook):
#: `pytest.raises` and `assertRaises` match an error by `issubclass`. And the `mro` that
#: gives a class its kinds: `except KeyError` and both match by `__mro__` alone.
_KIND_CHECKS = ("__subclasscheck__", "__instancecheck__", "mro")


def _judges_kinds(cls, roots):
    # Whether the code under test decides which classes are `cls`'s: its metaclass's check,
    # or its ABC hook, is the project's.
    meta = type(cls)
    return any(_own_method(meta, name, roots) for name in _KIND_CHECKS) or _own_method(
        cls, "__subclasshook__", roots)


def _takes_strangers(cls):
    # Or is of kinds its bases do not make it (an `mro` listing ValueError and TypeError for
    # a class on Exception). Ending the process instead of answering is taken for yes, as
    # `_says_equal` takes it.
    try:
        if tuple(type.mro(cls)) != cls.__mro__:
            return True
        return bool(issubclass(_StrangerError, cls)) or bool(isinstance(_StrangerError(), cls))
    except Exception:
        return False
    except BaseException:
        return True


def _of_any_kind(roots, kept=()):
    # Each class of the code under test alive now, or `kept`, that takes a class it never
    # saw for its own: `pytest.raises(ParseError)` of one passes whatever error was raised.
    asked = {id(cls): cls for cls in (*kept, *_the_projects_classes(roots))}
    named = {f"{c.__module__}.{c.__qualname__}": None for c in asked.values()
             if _judges_kinds(c, roots) and _takes_strangers(c)}
    return list(named)


def _keep_young(roots, kept):
    # Only the cyclic collector frees a class (its `__mro__` holds it): one the code under
    # test made for a test that just ended is still among the young objects, and is kept
    # (in `kept`, by id) for `_equal_to_anything` to ask, whether or not it was dropped.
    import gc

    for generation in (0, 1):
        for value in gc.get_objects(generation):
            if isinstance(value, type) and _asked(value, roots):
                kept[id(value)] = value


def _keeping(roots, kept):
    # What a full collection (`gc.collect()`) is about to sweep: the classes alive, kept.
    # (Every collection of the young generations would cost a run a third of its time.)
    import gc

    def keep(phase, info):
        if phase == "start" and info.get("generation", 2) >= 2:
            for cls in _the_projects_classes(roots):
                kept[id(cls)] = cls

    gc.callbacks.append(keep)


def _holds_equal(cls):
    # Whether a value of `cls` (made without its `__init__`) says it equals an `_Unlike`.
    # What it warns of, asked so, and what its `__del__` raises when it goes (it never had
    # the attributes `__init__` sets), are not the run's to print.
    import warnings

    hook = _sys.unraisablehook
    _sys.unraisablehook = lambda unraisable: None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _says_equal(cls)
    finally:
        _sys.unraisablehook = hook


def _says_equal(cls):
    # Making or asking a value that ends the process instead (`SystemExit` from `__eq__`)
    # is no honest comparison: taken as "equal", so the run is never believed.
    # The built-in type's own `__new__` too: a class whose own wants arguments (its total)
    # is still made, as that type's zero or empty value.
    whole = next((b.__new__ for b in cls.__mro__ if b in _WHOLE_WHEN_NEW), object.__new__)
    for make in (cls.__new__, whole, object.__new__):
        try:
            value = make(cls)
        except Exception:
            continue
        except BaseException:
            return True
        try:
            return _equal_to_unlike(cls, value)
        except BaseException:
            return True
        finally:
            value = None  # gone (and finalized) while the hook is quiet
    return False


#: A number no code under test can have been made to be, nor to be near.
_UNLIKE_NUMBER = 7.0e300 / 3
#: Of each built-in type a value made with `__new__` alone is whole of, one unlike that.
_UNLIKE_OF = {
    int: 7**99, float: _UNLIKE_NUMBER, complex: complex(1, _UNLIKE_NUMBER),
    str: "never 7e300 seen", bytes: b"never 7e300 seen", tuple: (object(),),
    frozenset: frozenset({object()}), list: [object()], dict: {object(): object()},
    set: {object()}, bytearray: bytearray(b"never 7e300 seen"),
}
#: And one of an ordinary size, as tests name: a made value (its type's zero, or empty) is
#: not it, nor within 1 of it. A value equal to anything a test could name is asked too.
_ORDINARY_OF = {
    int: 100, float: 100.5, complex: complex(0, 100), str: "a", bytes: b"a", tuple: (1,),
    frozenset: frozenset({1}), list: [1], dict: {1: 1}, set: {1}, bytearray: bytearray(b"a"),
}


def _equal_to_unlike(cls, value):
    # Whether `value` says it equals an `_Unlike`, that it differs by nothing from a number
    # it never saw, either way round, that it holds one, or that it is both below and
    # above one (a made value is its type's zero, or empty).
    # Beside the guard's own, a value of each built-in type it is made on (`int.__ne__`
    # borrowed answers only an int).
    whole = [base for base in cls.__mro__ if base in _UNLIKE_OF]
    unlike = [_Unlike(), *(of[base] for of in (_UNLIKE_OF, _ORDINARY_OF) for base in whole)]
    unlike += [_SMALL] if any(base in (int, float, complex) for base in whole) else []
    asks = [(cls.__eq__, probe, bool) for probe in unlike]
    if "__ne__" in vars(cls):
        asks += [(cls.__ne__, probe, _not) for probe in unlike]
    asks += [(getattr(cls, name), number, _no_difference) for name in _DIFFERENCE
             if name in vars(cls) for number in _NUMBERS]
    for method, probe, judged in asks:
        if _says(method, value, probe, judged):
            return True
    # A container made empty holds nothing: one that says it holds what it never saw.
    if "__contains__" in vars(cls):
        for probe in (*unlike, 7**99, _UNLIKE_NUMBER, _UNLIKE_OF[str], 100, "a"):
            if _says(cls.__contains__, value, probe, bool) and not _a_prefix_of_it(cls, probe):
                return True
    if _orders_itself(cls):
        for number in (*_NUMBERS, *(-n for n in _NUMBERS)):
            for one, other in _CONTRADICTING:
                if (_says(getattr(cls, one), value, number, bool)
                        and _says(getattr(cls, other), value, number, bool)):
                    return True
    return False


#: A small number drawn for the run: no value can be made equal to every ordinary number
#: but the few a guard would name (`0 < abs(other) < 100`).
_SMALL = 2 + int.from_bytes(_os.urandom(1), "big") % 98
#: The numbers a difference or an order is asked about: one never seen, ordinary ones.
_NUMBERS = (_UNLIKE_NUMBER, _ORDINARY_OF[float], _SMALL + 0.5)


#: Made holding one of these, a value of a prefix-holding class holds no probe.
_HOLDING_A_STRANGER = {
    tuple: lambda: (object(),), str: lambda: "held, never 7e300 seen", bytes: lambda: b"held, 7e300",
}


def _a_prefix_of_it(cls, probe):
    # Whether `in` of `cls` asks for a prefix, as a token type's does (pygments', sqlparse's
    # `_TokenType`: `Keyword in Token`): made empty it holds every probe of its own built-in
    # type, honestly, and made holding a stranger it holds none. (sqlparse's own tuple
    # probe made its pristine run `report_tampered`.) A probe of another type is no prefix.
    for base, stranger in _HOLDING_A_STRANGER.items():
        if base in cls.__mro__ and type(probe) is base:
            try:
                holding = base.__new__(cls, stranger())
            except Exception:
                return False
            return not _says(cls.__contains__, holding, probe, bool)
    return False


def _orders_itself(cls):
    return any(name in vars(cls) for name in _ORDER)


def _says(method, value, unlike, judged):
    # Whether `method` answers `unlike` so that `judged` takes it as true; an error or
    # NotImplemented is no answer.
    try:
        said = method(value, unlike)
        return said is not NotImplemented and bool(judged(said))
    except Exception:
        return False
    finally:
        said = None


def _not(said):
    return not said


def _no_difference(difference):
    # As `pytest.approx` reads one: within any tolerance of zero.
    return bool(abs(difference) <= 1.0)


def _made_of(code, where, rewrite):
    # Never the byte-code beside a file of the workspace: the code under test can write it.
    found = _compiled(where, rewrite(where) if rewrite else None, fresh=True)
    return code in found.get((code.co_name, code.co_firstlineno), ())


def _runs_test_code(value, where, installed, rewrite, depth=0):
    # What the runner calls for a test: code of its test file (`where`, when the runner
    # says which) as that file compiles, or a wrapper of installed or test code around it
    # (followed through `__wrapped__`); `installed(value)` says whether a function's own
    # code is installed code. A test module swapped in `sys.modules` as it loads, or a test
    # the code under test wrapped, runs something else.
    found = _unwrapped(value)
    code = getattr(found, "__code__", None)
    if code is None or depth > 8:
        return code is None  # not a Python function: a doctest, another plugin's item
    home = code.co_filename
    if where is None:
        mine = _test_file(home)
    else:
        mine = home == where or _os.path.realpath(home) == _os.path.realpath(where)
    if mine and _made_of(code, home, rewrite):
        return True
    if installed(found) or (_test_file(home) and _made_of(code, home, rewrite)):
        inner = getattr(found, "__wrapped__", None)
        return inner is None or _runs_test_code(inner, where, installed, rewrite, depth + 1)
    # Made on the spot, whatever file it names (hypothesis keeps a test's signature so, in
    # the test's name): believed only as a shell around installed code, all it can reach.
    names = getattr(found, "__globals__", None)
    shell, reached, stack = {id(found)}, [], [*_closed_over(found), *(names or {}).values()]
    while stack:
        value = stack.pop()
        function = _unwrapped(value)
        if getattr(function, "__code__", None) is None or id(function) in shell:
            continue
        if getattr(function, "__globals__", None) is names:  # made in the same namespace
            shell.add(id(function))
            stack.extend(_closed_over(function))
        else:
            reached.append(value)
    return bool(reached) and all(installed(v) for v in reached)


def _rebound(module, where):
    # Each name the file binds once, by an import at its top, still bound to what that
    # import gave (`from calc import *` rebinding `unittest` gives the tests another).
    import ast

    try:
        with open(where, "rb") as file:
            tree = ast.parse(file.read(), filename=where)
    except Exception:
        return
    missing = object()
    expected, seen = {}, []
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.partition(".")[0]
                seen.append(alias.asname or top)
                expected[seen[-1]] = _sys.modules.get(alias.name if alias.asname else top, missing)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            source = _sys.modules.get(node.module)
            for alias in node.names:
                seen.append(alias.asname or alias.name)
                if source is not None:  # its module's own names, not a `__getattr__`'s
                    expected[seen[-1]] = vars(source).get(alias.name, missing)
        else:
            # Any other binding of a name, anywhere in the file: `try: import simplejson as
            # json` after `import json` is the file's own choice.
            for child in ast.walk(node):
                if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                    seen.append(child.id)
                elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    seen.append(child.name)
                elif isinstance(child, ast.ExceptHandler) and child.name:
                    seen.append(child.name)
                elif isinstance(child, (ast.Import, ast.ImportFrom)):
                    seen.extend(a.asname or a.name.partition(".")[0] for a in child.names)
    for name, value in expected.items():
        if value is not missing and seen.count(name) == 1 and vars(module).get(name) is not value:
            yield name


def _forged_test(name, value, where, module, file, installed, rewrite, checked):
    # `where`: the file the runner took the test from, if it says; `file`: the one to read
    # `module`'s imports from.
    if not _runs_test_code(value, where, installed, rewrite):
        yield f"{name} (runs code its file does not hold)"
    if module is not None and id(module) not in checked and isinstance(file, str):
        checked.add(id(module))
        for bound in _rebound(module, file):
            yield f"{bound} in {module.__name__} (bound to something its import did not give)"
"""

#: The plugin module: the two tests, where they go among the run's, and the guard.
#:
#: Nothing in it says what it is. Its tests' names read like the project's, the must-fail
#: one fails as an ordinary assertion does, and they run at a file boundary drawn from the
#: run's seed (the same in every xdist worker, which must collect alike), not last.
#:
#: The guard: every function and class of pytest's, pluggy's and its own modules (the
#: object, its code, defaults and closure) is taken when the plugin loads, before any of
#: the project's code, and every hook's implementations when the session starts; whenever
#: a canary runs, when the session finishes and when pytest unconfigures, all of it is
#: compared. Anything replaced, swapped in place or newly set on one of their classes, or
#: a hook implementation registered since by anything but the project's conftest.py files
#: and the plugins they ask for, is tampering unless its code is installed (a plugin's),
#: which is believed only of code its file compiles to (`_FUNCTION_STATE`): the guard
#: writes what it found to the stderr it kept and ends the process (`GUARD_EXIT`) before a
#: report can be written. Once pytest has written its JUnit report, the guard writes its
#: SHA-256 there too ("sealed"), and the report assay reads must be that one: a rewrite at
#: exit, after the guard's last look, is found. It catches rewrites aimed at the project's
#: own tests, which leave the canaries alone. What it uses it holds in closures, not in its
#: module's names; but it runs in the process it guards, so code that finds those closures
#: and disarms it first is beyond it (a report then goes unsealed, which is found too).
_PYTEST_PLUGIN = string.Template(
    """\
# ruff: noqa
# flake8: noqa
# mypy: ignore-errors
# type: ignore
# pylint: skip-file
import builtins as _builtins
import hashlib as _hashlib
import importlib as _importlib
import io as _io
import os as _os
import pathlib as _pathlib
import random as _random
import sys as _sys
import sysconfig as _sysconfig

import _pytest
import pluggy as _pluggy
import pytest

# What reports run through, loaded now (most of it is already) so that all of it is taken
# before any of the project's code can run.
for _name in ("_pytest.junitxml", "_pytest.terminal", "_pytest.runner", "_pytest.reports",
              "_pytest.python", "_pytest.main", "_pytest.unittest", "pluggy._callers",
              "unittest.case"):
    try:
        _importlib.import_module(_name)
    except ImportError:
        pass


def _guarding(exit=_os._exit, write=_os.write, err=_os.dup(2), _os=_os, _sys=_sys, own=__name__,
              _open=open, _builtins=_builtins, _io=_io):
    # Everything the guard uses is its own, held in closures: the module's names are code
    # under test's to rebind.
    # The pipe its words leave the process by: code under test that swaps it for a pipe of
    # its own (dup2 over every descriptor) could rewrite the seal on its way out.
    stream = (_os.fstat(err).st_dev, _os.fstat(err).st_ino)
    # What pytest's reports are written through, as they were before any of the project's
    # code ran: an `open` replaced rewrote the JUnit report as pytest wrote it.
    through = {"builtins.open": (_builtins, "open"), "builtins.print": (_builtins, "print"),
               "io.open": (_io, "open"), "os.open": (_os, "open"), "os.write": (_os, "write"),
               "os.fdopen": (_os, "fdopen")}
    through = {name: (where, attr, getattr(where, attr)) for name, (where, attr) in through.items()}
    owned = ("pytest", "_pytest", "pluggy")
    # Beside them, the module of unittest's assertions (tests pytest runs call them).
    modules = ("unittest.case",)
    roots = tuple({_sysconfig.get_paths()[k] for k in ("purelib", "platlib", "stdlib", "platstdlib")})
    own_dirs = tuple(_os.path.dirname(m.__file__) + _os.sep for m in (pytest, _pytest, _pluggy))
    try:
        import ast
        from _pytest.assertion.rewrite import rewrite_asserts
    except ImportError:
        rewrite_asserts = None

    configs = []

    def rewritten(source, where):
        tree = ast.parse(source, filename=where)
        rewrite_asserts(tree, source, where, *configs[:1])  # as pytest does, with its config
        return compile(tree, where, "exec", dont_inherit=True)

    def rewrite(where):
        # pytest rewrites the asserts of a plugin's modules as it imports them, not its own.
        return None if rewrite_asserts is None or where.startswith(own_dirs) else rewritten

$state
    _PINNED.update($pinned)

    def runs(value):
        return isinstance(value, type) or getattr(_unwrapped(value), "__code__", None) is not None

    def places(owned=owned, modules=modules):
        # Every function and class of pytest's and pluggy's modules (and unittest.case),
        # and every function of their classes, by where it lives.
        for name, module in list(_sys.modules.items()):
            if (name.partition(".")[0] not in owned and name not in modules) or module is None:
                continue
            for attr, value in list(vars(module).items()):
                if runs(value):
                    yield (name, attr, None), value
                if isinstance(value, type) and value.__module__ == name:
                    for key, member in list(vars(value).items()):
                        if runs(member):
                            yield (name, attr, key), member

    def look(place):
        module = _sys.modules.get(place[0])
        value = vars(module).get(place[1]) if module is not None else None
        if place[2] is None:
            return value
        return vars(value).get(place[2]) if isinstance(value, type) else None

    def code_file(value):
        return getattr(getattr(_unwrapped(value), "__code__", None), "co_filename", "") or ""

    def installed(value):
        # Code of an installed plugin's may patch pytest; the workspace's, or code made on
        # the spot, may not.
        return _genuine(value, roots, rewrite)

    def shell(value):
        # An installed wrapper around a test (mock.patch's): its own code, not the test's.
        return _genuine(value, roots, rewrite, shallow=True)

    taken = [(place, _state(value)) for place, value in places()]
    classes = {id(value): (place, value, {k for k, v in vars(value).items() if runs(v)})
               for place, value in places() if isinstance(value, type) and place[2] is None}
    impls, hook, manager = [], [], []
    # The run's tests, as collected; modules whose imports were looked at.
    collected, checked = [], set()
    own_file = _sys.modules[own].__file__

    def callers():
        # Every hook and its implementations, as the plugin manager's hook relay holds them
        # (`config.hook` may be a proxy that holds only those asked for so far).
        for name, caller in list(vars(hook[0]).items()) if hook else ():
            found = getattr(caller, "get_hookimpls", None)
            if callable(found):
                yield name, found()

    def new_members():
        # A function or property set on a class since (`Function.obj = property(...)`):
        # it overrides what the class had from its bases.
        for place, cls, had in classes.values():
            for key, value in list(vars(cls).items()):
                if key not in had and runs(value) and not installed(value):
                    yield f"{place[0]}.{place[1]}.{key}"

    def changed(was, now):
        return any(a is not b for a, b in zip(was, _state(now))) and not installed(now)

    # The builtins' names each of pytest's and pluggy's modules held at the start (`exit`):
    # one set since, to something none of them defines, shadows the builtin in that module
    # (an `open` of the code's own in `_pytest.junitxml`).
    builtin_names = frozenset(n for n in vars(_builtins) if not n.startswith("__"))
    held = {name: builtin_names & set(vars(module)) for name, module in list(_sys.modules.items())
            if module is not None and name.partition(".")[0] in owned}

    def swapped():
        for name, (where, attr, was) in through.items():
            now = getattr(where, attr, None)
            if now is not was and not installed(now):  # eventlet's green `os` is installed
                yield name
        for name, module in list(_sys.modules.items()):
            if module is None or name.partition(".")[0] not in owned:
                continue
            for attr in (builtin_names & set(vars(module))) - held.get(name, frozenset()):
                home = str(getattr(vars(module).get(attr), "__module__", None))
                if home.partition(".")[0] not in owned:
                    yield f"{name}.{attr}"

    def the_projects(impl, where):
        # A hook of a conftest.py pytest loaded, or of a plugin module one asks for
        # (`pytest_plugins`), or of an object one registers with functions of its own: the
        # project's test code, which --protect restores from the base; believed only of
        # code running in the module pytest imported, as its file compiles it.
        function = _unwrapped(impl.function)
        plugins = list(manager[0].get_plugins()) if manager else []
        loaded = getattr(manager[0], "_conftest_plugins", None) if manager else None
        conftests = list(loaded) if loaded is not None else [
            p for p in plugins if _os.path.basename(getattr(p, "__file__", None) or "") == "conftest.py"]
        wanted = set()
        for conftest in conftests:
            listed = getattr(conftest, "pytest_plugins", ()) or ()
            wanted.update([listed] if isinstance(listed, str) else listed)
        asked = [p for p in plugins if isinstance(p, type(_os)) and p.__name__ in wanted]
        names = getattr(function, "__globals__", None)
        home = [m for m in (*conftests, *asked) if getattr(m, "__dict__", None) is names]
        if not home or getattr(home[0], "__file__", None) != where:
            return False
        code = getattr(function, "__code__", None)
        made = _compiled(where, rewrite(where)).get((code.co_name, code.co_firstlineno), ()) if code else ()
        return code in made

    def added():
        # Any hook implementation registered since the session started, but an installed
        # plugin's or the project's test code's (a report rewritten at its end is as false
        # as one rewritten as each test ends).
        started = {id(impl) for _, impl, _ in impls}
        for name, found in callers():
            for impl in found:
                if id(impl) in started or installed(impl.function):
                    continue
                where = code_file(impl.function)
                if not the_projects(impl, where):
                    yield f"{name} of {impl.plugin_name} (added by {where or 'code made on the spot'})"

    def coverage_tracer(value):
        # coverage's C tracer: a type defined in C (not a heap type, as every class made in
        # Python is), and the very one its installed module holds.
        module = _sys.modules.get("coverage.tracer")
        home = getattr(module, "__file__", None)
        return (type(value) is getattr(module, "CTracer", None) and not type(value).__flags__ & 512
                and isinstance(home, str) and home.startswith(roots))

    def watchers():
        # A trace or profile function sees every call return and can rewrite what it
        # returns (a report), replacing nothing of pytest's: one set by code that is not
        # installed (coverage's is) is tampering.
        threads = _sys.modules.get("threading")
        for name, get in (("sys.settrace", _sys.gettrace), ("sys.setprofile", _sys.getprofile),
                          ("threading.settrace", getattr(threads, "gettrace", None)),
                          ("threading.setprofile", getattr(threads, "getprofile", None))):
            value = get() if get is not None else None
            if value is not None and not installed(value) and not coverage_tracer(value):
                yield f"{name} ({getattr(value, '__qualname__', type(value).__name__)})"

    def forged(when):
        for item in collected:
            where = str(getattr(item, "path", None) or getattr(item, "fspath", ""))
            if where == own_file or not where.endswith(".py"):
                continue
            module = getattr(item, "module", None)
            if when != "after collection":
                module = None  # a fixture may patch names once tests run
            yield from _forged_test(item.nodeid, getattr(item, "obj", None), where, module, where,
                                    shell, rewrite, checked)

    # The classes of the code under test each test made, kept for the guard's last look.
    kept = {}
    _keeping(roots, kept)

    def tested():
        _keep_young(roots, kept)

    def guard(when):
        found = [".".join(p for p in place if p) for place, was in taken if changed(was, look(place))]
        found += [f"{h} of {impl.plugin_name}" for h, impl, was in impls if changed(was, impl.function)]
        found += list(added())
        found += list(new_members())
        found += list(swapped())
        found += list(watchers())
        found += list(forged(when))
        found += list(overridden())
        found += list(rerouted())
        if found:
            write(err, f"\\n{$mark} ({when}): {', '.join(found[:20])}\\n".encode())
            exit($code)
        # Once the tests ran, the classes of the code under test they were handed exist.
        lenient = _equal_to_anything(roots, kept.values()) if when == "at the end of the session" else []
        if lenient:
            write(err, f"\\n{$mark} equal ({when}): {', '.join(lenient[:20])}\\n".encode())
            exit($code)
        kinds = _of_any_kind(roots, kept.values()) if when == "at the end of the session" else []
        if kinds:
            write(err, f"\\n{$mark} kinds ({when}): {', '.join(kinds[:20])}\\n".encode())
            exit($code)

    def overridden():
        # An object's own attribute over a function of its class: the test an item runs
        # (`item.runtest = ...`), a session's hook proxy, a plugin's reporting, replaced on
        # that one object while its class and pytest's modules stay as they were.
        objects = [*collected, *manager]
        objects += [p for p in (manager[0].get_plugins() if manager else ()) if not isinstance(p, type(_os))]
        for value in objects:
            own = getattr(value, "__dict__", None)
            if not isinstance(own, dict):
                continue
            for key, now in list(own.items()):
                was = next((vars(c)[key] for c in type(value).__mro__ if key in vars(c)), None)
                if callable(_unwrapped(was)) and not isinstance(was, type) and callable(now) and not installed(now):
                    yield f"{key} of a {type(value).__name__}"

    relay = []

    def rerouted():
        # The hook relay's callers, as they were when the session started: one swapped for
        # something else calls what the guard never looked at.
        if not hook:
            return
        now = vars(hook[0])
        for name, was in relay:
            if now.get(name) is not was:
                yield f"the hook relay's {name}"
        if manager and getattr(manager[0], "hook", None) is not hook[0]:
            yield "the plugin manager's hook relay"

    def start(session):
        configs.append(session.config)
        manager.append(session.config.pluginmanager)
        hook.append(session.config.pluginmanager.hook)
        relay.extend(vars(hook[0]).items())
        for name, found in callers():
            for impl in found:
                impls.append((name, impl, _state(impl.function)))

    def seal():
        # This module's own functions, once it has defined them all.
        taken.extend((place, _state(value)) for place, value in places((own,), ()))

    def logfile(config):
        # Where pytest keeps its LogXML: `config.stash` (7+), `config._store` (6), `_xml`.
        try:
            from _pytest.junitxml import xml_key
        except ImportError:
            xml_key = None
        store = getattr(config, "stash", None)
        store = getattr(config, "_store", None) if store is None else store
        xml = store.get(xml_key, None) if xml_key is not None and store is not None else None
        xml = xml or getattr(config, "_xml", None)
        return getattr(xml, "logfile", None)

    # The report as pytest writes it, hashed on its way to the file: the seal is of what
    # pytest wrote, not of what the file holds when the guard looks (a thread, a process the
    # code under test started or another check of the run rewrote it in between).
    teed = {}
    unset = object()

    class Tee:
        def __init__(self, file, digest, encoding):
            self.file, self.digest, self.encoding = file, digest, encoding

        def write(self, data):
            self.digest.update(data.encode(self.encoding) if isinstance(data, str) else data)
            return self.file.write(data)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.file.close()

        def close(self):
            self.file.close()

        def __getattr__(self, name):
            return getattr(self.file, name)

    def tee(config, sha256=_hashlib.sha256):
        # For the session's end only (pytest's junitxml writes then), taken back before the
        # guard's last look.
        path = logfile(config)
        module = _sys.modules.get("_pytest.junitxml")
        if path is None or module is None or "module" in teed:
            return

        def opener(file, mode="r", *args, **kwargs):
            handle = _open(file, mode, *args, **kwargs)
            if file != path or "w" not in mode or args or "digest" in teed:
                return handle
            teed["digest"] = sha256()
            return Tee(handle, teed["digest"], kwargs.get("encoding") or "utf-8")

        teed.update(module=module, had=vars(module).get("open", unset), opener=opener)
        vars(module)["open"] = opener

    def untee():
        module = teed.get("module")
        if module is None:
            return
        now = vars(module).get("open", unset)
        if teed["had"] is unset:
            vars(module).pop("open", None)
        else:
            vars(module)["open"] = teed["had"]
        if now is not teed["opener"]:
            write(err, f"\\n{$mark} (at the end of the run): _pytest.junitxml.open\\n".encode())
            exit($code)

    def sealed(config, sha256=_hashlib.sha256):
        # The report as pytest wrote it (`tee`; else as the file holds it now): what is read
        # of it later must be this. With it, how many tests the guard saw fail.
        path = logfile(config)
        if path is None:
            return  # no report: the parser says so
        if any(swapped()):
            exit($code)  # the report went through what the code under test put in its place
        try:
            if "digest" in teed:
                digest = teed["digest"].hexdigest()
            else:
                with _open(path, "rb") as file:
                    digest = sha256(file.read()).hexdigest()
            if (_os.fstat(err).st_dev, _os.fstat(err).st_ino) != stream:
                exit($code)  # its words would leave through the code under test
            write(err, f"\\n{$mark} sealed {digest} failing {len(failing)}\\n".encode())
        except (OSError, TypeError):
            # A report pytest wrote and the guard cannot read (made unreadable for the
            # moment), or its own stream closed: the seal could be forged after it.
            exit($code)

    def collect(items):
        collected.extend(items)
        guard("after collection")

    # What the guard saw fail, by test id, as each report was logged (before any other
    # hook saw it): the report read later must list at least as many failing tests.
    failing = set()

    def tally(report):
        # As pytest's JUnit report counts: an xfail-marked failure is written as skipped.
        if getattr(report, "failed", False) and not hasattr(report, "wasxfail"):
            failing.add(str(getattr(report, "nodeid", "")))

    return guard, start, seal, sealed, collect, tested, tally, tee, untee


_guard, _start, _seal, _sealed, _collect, _tested, _tally, _tee, _untee = _guarding()
$tests

@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session, start=_start):
    start(session)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items, collect=_collect):
    # After every other plugin has selected and ordered the run's tests.
    here = _pathlib.Path(__file__)
    if any(str(getattr(item, "path", None) or item.fspath) == str(here) for item in items):
        return
    collect(items)
    try:
        ours = pytest.Module.from_parent(session, path=here).collect()
    except TypeError:  # pytest 6 and older: a py.path, as `fspath`
        import py

        ours = pytest.Module.from_parent(session, fspath=py.path.local(str(here))).collect()
    # Between two files, where no module's fixtures are torn down early.
    File = getattr(pytest, "File", None) or _importlib.import_module("_pytest.nodes").File
    files = [item.getparent(File) for item in items]
    bounds = [0, *(at for at in range(1, len(items)) if files[at] is not files[at - 1]), len(items)]
    chosen = _random.Random("$seed")
    for item in reversed(ours):
        items.insert(chosen.choice(bounds), item)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report, tally=_tally):
    tally(report)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item, tested=_tested):
    yield
    tested()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, guard=_guard, tee=_tee):
    guard("at the end of the session")
    tee(session.config)


@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config, guard=_guard, sealed=_sealed, untee=_untee):
    # After the report is written, before pytest lets go of it.
    untee()
    guard("at the end of the run")
    sealed(config)


_seal()
"""
)

#: The exit code of a guard that found the runner's reporting replaced; what it writes
#: then starts with a random mark of the run's, which its file does not spell out.
GUARD_EXIT = 86


def _spelt_apart(mark: str) -> str:
    """`mark` as a Python expression in two halves: the file holds no line the guard's
    report starts with."""
    return f"'{mark[:8]}' '{mark[8:]}'"


def plant_pytest(request: PlantRequest) -> Planting | NoCanary:
    directory = request.cwd / f".{request.name()}"
    module = request.name()
    canaries = request.pair("test_{}".format)
    left, right = unequal()
    tests = "".join(
        f"\n\ndef {c.name}(guard=_guard):\n"  # a default: not a fixture, and not looked up
        f'    guard("while {c.name} ran")\n'
        + ("    pass\n" if c.must_pass else f"    assert {left} == {right}\n")
        for c in canaries
    )
    mark = request.token()
    text = _PYTEST_PLUGIN.substitute(
        state=textwrap.indent(_FUNCTION_STATE, "    "),
        pinned=repr(dict(request.own_plugins)),
        tests=tests,
        seed=request.token(),
        mark=_spelt_apart(mark),
        code=GUARD_EXIT,
    )
    path = request.relative(directory / f"{module}.py")

    def edit(argv: tuple[str, ...]) -> tuple[str, ...]:
        # --maxfail=0 also undoes a -x the project's configuration adds. A `norecursedirs`
        # of the project's own drops pytest's `.*`, and plugins that collect every .py
        # file (pytest-ruff, pytest-mypy) would judge the plugin as the project's code.
        extra = ("--maxfail=0", "-p", module, f"--ignore={directory}")
        return _before_report(_without_fail_fast(argv), extra)

    return Planting(
        files=(CanaryFile(path, text), ignored_by_git(request.relative(directory))),
        canaries=canaries,
        edit_argv=edit,
        # The plugin is imported by name, from where no collection looks.
        env={"PYTHONPATH": str(directory)},
        failed_groups=failed_unless(_COVERAGE_FAILED),
        checks=_guard_tripped("pytest", mark, sealed=True),
        what=f"a pytest plugin module {path} (loaded with -p {module})",
        mark=mark,
        printed=functools.partial(_pytest_printed_without, canaries),
    )


def _pytest_printed_without(canaries: Sequence[Canary], text: str, ran: Counter[str]) -> str:
    """pytest's printed `text` without the canaries' parts: the must-fail canary's failure
    section, their lines in the short summary, and their share (`ran`) of the final
    counts (the run's own counts are what is left)."""
    names = any_name(canaries)
    section = re.compile(
        rf"^_{{3,}} (?:{names}) _{{3,}}\n(?:(?!_{{3,}} \S.* _{{3,}}$|={{3,}}).*(?:\n|$))*",
        re.MULTILINE,
    )
    summary = re.compile(rf"^(?:FAILED|PASSED|ERROR) \S*::(?:{names})\b.*(?:\n|$)", re.MULTILINE)
    text = summary.sub("", section.sub("", text))
    lines = text.split("\n")
    for at in reversed(range(len(lines))):
        if _PYTEST_COUNTS.match(lines[at]):
            lines[at] = _discounted(lines[at], ran)
            break
    return "\n".join(lines)


#: pytest's closing line: `2 failed, 48 passed in 0.77s`, between `=` rules without -q.
_PYTEST_COUNTS = re.compile(
    r"^(?P<rule>=*\s*)(?P<counts>\d+ \w+(?:, \d+ \w+)*)(?P<rest> in [\d.]+s\b.*)$"
)


def _discounted(line: str, ran: Counter[str]) -> str:
    """pytest's counts `line` less the canaries' outcomes `ran`; a count left at 0 is
    dropped."""
    match = _PYTEST_COUNTS.match(line)
    if match is None:
        return line
    kept = []
    for item in match["counts"].split(", "):
        number, word = item.split(" ", 1)
        left = int(number) - ran[word]
        if left > 0:
            kept.append(f"{left} {word}")
    return match["rule"] + (", ".join(kept) or "no tests ran") + match["rest"]


#: What the pytest guard writes after its mark once the report is written: the SHA-256 of
#: what pytest wrote, and how many tests the guard saw fail.
_SEALED = re.compile(r" sealed (?P<digest>[0-9a-f]{64})(?: failing (?P<failing>\d+))?\s*$")
#: What a guard writes after its mark when the code under test made its values equal to
#: anything: when it looked, and the classes.
_EQUAL = re.compile(r" equal \((?P<when>[^)]*)\): (?P<classes>.+?)\s*$")
#: And when the code under test made its classes take any class for their own.
_KINDS = re.compile(r" kinds \((?P<when>[^)]*)\): (?P<classes>.+?)\s*$")
#: What the unittest guard writes after its mark at exit: ran; then failed, errors and
#: skipped as unittest's summary counts them (each subtest), then as they are counted per
#: test (what a listing and the failures' headers show).
_TALLY = re.compile(r" tally (?P<counts>\d+(?: \d+){6})\s*$")


def _guard_tripped(runner: str, mark: str, *, sealed: bool = False) -> Checks:
    """The check that reads what the guard planted beside the tests found replaced (a
    sentence; nothing when it found none); and that the report read is the one the guard
    sealed once the runner had written it (`sealed`: pytest's JUnit XML), or that the
    counts read are the ones the guard tallied at exit (unittest's, read from its words)."""

    def tripped(result: ProcessResult, parsed: ParsedOutput) -> list[str]:
        seals, tallies, failing = [], [], []
        for line in result.stderr.text.splitlines():
            if not line.startswith(mark):
                continue
            said = line[len(mark) :]
            if (seal := _SEALED.match(said)) is not None:
                seals.append(seal["digest"])
                failing.append(int(seal["failing"] or 0))
            elif (tally := _TALLY.match(said)) is not None:
                tallies.append(tuple(int(n) for n in tally["counts"].split()))
            elif (equal := _EQUAL.match(said)) is not None:
                why = (
                    f"the code under test makes its values equal to anything, so {runner}'s "
                    f"equality assertions could not fail (found {equal['when']}: "
                    f"{equal['classes']} says it equals a value it never saw, differs "
                    "from it by nothing, lies on both sides of it, or holds it)"
                )
                return [why]
            elif (kinds := _KINDS.match(said)) is not None:
                why = (
                    f"the code under test makes its classes take any class for their own, so "
                    f"{runner}'s assertions of an error's kind could not fail (found "
                    f"{kinds['when']}: {kinds['classes']} takes a class it never saw for its own, "
                    "or is of kinds its bases do not make it)"
                )
                return [why]
            else:
                return [f"{runner}'s reporting was replaced {said.strip()}"]
        if result.exit_code == GUARD_EXIT:
            why = (
                f"it ended with the exit code of the guard planted beside the tests ({GUARD_EXIT})"
            )
            return [f"{why}, which it gives when it finds {runner}'s reporting replaced"]
        if sealed:
            return _unsealed(runner, result, seals, failing)
        return _untallied(runner, result, parsed, tallies)

    return tripped


def _untallied(
    runner: str, result: ProcessResult, parsed: ParsedOutput, tallies: list[tuple[int, ...]]
) -> list[str]:
    """Why the counts read from the run's words are not the ones its result held at exit;
    nothing when they are, or when there were none to read or the run was stopped."""
    if result.exit_code is None or result.timed_out or parsed.tests is None:
        return []
    if not tallies:
        return [f"{runner}'s outcomes were not tallied at exit by the guard planted beside them"]
    # Not what ran: errors outside a test (a class's set-up) are counted in no test run.
    # Each count as the summary or as the listing has it: which one the parser took
    # depends on what was printed, and either says whether anything failed.
    said = (parsed.tests.failed, parsed.tests.errors, parsed.tests.skipped)
    if any(
        n not in (tally[1 + at], tally[4 + at]) for tally in tallies for at, n in enumerate(said)
    ):
        return [f"{runner}'s printed outcomes are not those its result held at exit"]
    return []


def _unsealed(
    runner: str, result: ProcessResult, seals: list[str], failing: Sequence[int] = ()
) -> list[str]:
    """Why the report is not the one the guard sealed, or lists fewer failing tests than
    the guard saw fail (`failing`: its count beside each seal); nothing when it is the one,
    or when the run was stopped before it could be sealed (no verdict is drawn from that
    run anyway)."""
    report = next((a.split("=", 1)[1] for a in result.argv if a.startswith("--junitxml=")), None)
    if report is None or result.exit_code is None or result.timed_out:
        return []
    from assay.parsers.report_file import read_report

    data = read_report(Path(report))
    if not isinstance(data, bytes):
        return []  # no report to believe: the parser says so
    if not seals:
        return [f"{runner}'s report was not sealed by the guard planted beside the tests"]
    if any(seal != hashlib.sha256(data).hexdigest() for seal in seals):
        return [f"{runner}'s report was rewritten after {runner} wrote it"]
    if len(seals) > 1:  # the guard seals once: another was written by the code under test
        return [f"{runner}'s report was sealed {len(seals)} times; the guard seals it once"]
    from assay.parsers.pytest import read_junit

    junit = read_junit(data)
    listed = junit[0].failed + junit[0].errors if junit is not None else 0
    if failing and listed < max(failing):
        seen = max(failing)
        why = f"{runner}'s report lists {listed} failing test(s) where the guard planted"
        return [f"{why} beside the tests saw {seen} fail"]
    return []


#: What pytest-cov prints when the run's coverage is under its threshold (it then fails
#: the run with the exit code of failed tests, which the must-fail canary also gives).
_COVERAGE_FAILED = re.compile(r"Required test coverage of [\d.]+% not reached")


def _without_fail_fast(argv: tuple[str, ...]) -> tuple[str, ...]:
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in PYTEST_FAIL_FAST or arg.startswith("--maxfail="):
            continue
        elif arg in _PYTEST_VALUED:
            skip = True
        else:
            kept.append(arg)
    return tuple(kept)


def _before_report(argv: tuple[str, ...], extra: Sequence[str]) -> tuple[str, ...]:
    """`extra` before the report path assay asks for (it stays the last word) and before
    a `--`; else at the end."""
    reports = [at for at, arg in enumerate(argv) if arg.startswith("--junitxml")]
    if reports:
        at = reports[-1]
    elif "--" in argv:
        at = argv.index("--")
    else:
        at = len(argv)
    return (*argv[:at], *extra, *argv[at:])


# --------------------------------------------------------------------------- unittest

#: unittest's default discovery pattern.
UNITTEST_PATTERN = "test*.py"
#: Options of `python -m unittest` (and of `discover`) that take a value.
_UNITTEST_VALUED = frozenset(
    {"-k", "-s", "--start-directory", "-p", "--pattern", "-t", "--top-level-directory"}
)
_UNITTEST_FAIL_FAST = frozenset({"-f", "--failfast"})

#: The unittest canaries' guard: every function of unittest's classes, taken when the
#: canaries' module is imported, must be as it was then and be the standard library's code
#: (what was replaced before the import is not), and the result the canary runs under must
#: be one of unittest's classes. Code under test that replaced any of it is named on the
#: stderr the guard kept before the process ends (`GUARD_EXIT`), before a summary is printed.
_UNITTEST_GUARD = string.Template(
    """\
import atexit as _atexit
import hashlib as _hashlib
import os as _os
import sys as _sys
import sysconfig as _sysconfig
import unittest
import unittest.result
import unittest.runner


def _guarding(exit=_os._exit, write=_os.write, err=_os.dup(2), _os=_os, _sys=_sys):
    # The pipe its words leave the process by (see the pytest guard's `stream`).
    stream = (_os.fstat(err).st_dev, _os.fstat(err).st_ino)
    # Everything the guard uses is its own, held in closures: the module's names are code
    # under test's to rebind.
    stdlib = (_sysconfig.get_paths()["stdlib"] + _os.sep,)
    results = []

$state

    def members():
        # Every function of a class of unittest's, by where it lives.
        for name, module in list(_sys.modules.items()):
            if module is None or not (name == "unittest" or name.startswith("unittest.")):
                continue
            for attr, cls in list(vars(module).items()):
                if isinstance(cls, type) and cls.__module__ == name:
                    for key, member in list(vars(cls).items()):
                        if getattr(_unwrapped(member), "__code__", None) is not None:
                            yield (name, attr, key), member

    def standard(place, member):
        # namedtuple's __new__ is made from a string, in the standard library.
        where = getattr(getattr(_unwrapped(member), "__code__", None), "co_filename", "")
        return _genuine(member, stdlib) or (place[2] == "__new__" and where == "<string>")

    taken = {place: (_state(member), standard(place, member)) for place, member in members()}
    roots = tuple({_sysconfig.get_paths()[k] for k in ("purelib", "platlib", "stdlib", "platstdlib")})

    def shell(value):
        return _genuine(value, roots, shallow=True)

    def unittests(cls):
        module = _sys.modules.get(cls.__module__)
        return cls.__module__.startswith("unittest.") and getattr(module, cls.__name__, None) is cls

    def standard_stream(cls):
        # The interpreter's own streams, or a class of installed code (colorama's wrapper).
        file = getattr(_sys.modules.get(cls.__module__), "__file__", None)
        return cls.__module__ in ("_io", "io") or (isinstance(file, str) and file.startswith(roots))

    checked = set()
    prefix = unittest.defaultTestLoader.testMethodPrefix

    def forged():
        # The tests of every test module loaded from outside the installed code (a suite lets
        # go of each test once it ran: they are found where they were defined).
        for module in list(_sys.modules.values()):
            file = getattr(module, "__file__", None)
            if not isinstance(file, str) or file.startswith(roots) or not _test_file(file):
                continue
            for cls in list(vars(module).values()):
                if not (isinstance(cls, type) and issubclass(cls, unittest.TestCase)
                        and cls.__module__ == module.__name__):
                    continue
                for name in dir(cls):
                    if name.startswith(prefix) and callable(getattr(cls, name, None)):
                        yield from _forged_test(f"{cls.__qualname__}.{name}", getattr(cls, name),
                                                None, module, file, shell, None, checked)

    def guard(test, when):
        found = list(forged())
        for place, member in members():
            was, genuine = taken.get(place) or (None, None)
            moved = was is not None and any(a is not b for a, b in zip(was, _state(member)))
            if moved or not (genuine if was is not None else standard(place, member)):
                found.append(".".join(place))
        result = getattr(getattr(test, "_outcome", None), "result", None)
        if result is not None and not unittests(type(result)):
            found.append(f"the result ({type(result).__module__}.{type(result).__qualname__})")
        elif result is not None and not results:
            results.append(result)
        # What the runner prints to: a stream of the code's own (`sys.stderr` replaced before
        # the runner was made) holds the summary back, to be rewritten at exit.
        stream = getattr(getattr(result, "stream", None), "stream", None)
        if stream is not None and not standard_stream(type(stream)):
            found.append(f"the runner's stream ({type(stream).__module__}.{type(stream).__qualname__})")
        if found:
            write(err, f"\\n{$mark} ({when}): {', '.join(found[:20])}\\n".encode())
            exit($code)

    subtest = getattr(unittest.case, "_SubTest", ())

    def tests(outcomes):
        # Each test once: a subtest's outcome is its test's.
        return {id(t.test_case if isinstance(t, subtest) else t) for t, *_ in outcomes}

    kept = {}
    _keeping(roots, kept)

    def lenient():
        # Once the tests ran, the classes of the code under test they were handed exist.
        found = _equal_to_anything(roots, kept.values())
        if found:
            write(err, f"\\n{$mark} equal (at exit): {', '.join(found[:20])}\\n".encode())
        kinds = _of_any_kind(roots, kept.values())
        if kinds:
            write(err, f"\\n{$mark} kinds (at exit): {', '.join(kinds[:20])}\\n".encode())

    def tally():
        # What the run's result holds at exit, said where its printed words cannot reach:
        # failed (unexpected successes too), errors and skipped as its summary counts them
        # (each subtest), then as its listing does (each test, an expected failure skipped).
        for result in results[:1]:
            unexpected = len(getattr(result, "unexpectedSuccesses", ()))
            skipped = len(result.skipped)
            whole = sum(not isinstance(t, subtest) for t, *_ in result.skipped)
            expected = len(getattr(result, "expectedFailures", ()))
            failing = tests(result.failures)
            counts = (
                result.testsRun, len(result.failures) + unexpected, len(result.errors), skipped,
                len(failing) + unexpected, len(tests(result.errors) - failing),
                min(skipped, whole + expected),
            )
            if (_os.fstat(err).st_dev, _os.fstat(err).st_ino) != stream:
                exit($code)  # the tally would leave through the code under test
            write(err, f"\\n{$mark} tally {' '.join(map(str, counts))}\\n".encode())

    _atexit.register(tally)
    _atexit.register(lenient)
    return guard


_guard = _guarding()
"""
)


def plant_unittest(request: PlantRequest) -> Planting | NoCanary:
    argv = request.check.argv
    if "unittest" not in argv:
        return NoCanary("the command does not run `python -m unittest`")
    args = list(argv[argv.index("unittest") + 1 :])
    if "-k" in args or any(a.startswith("-k") and len(a) > 2 for a in args):
        return NoCanary("the run selects tests by name (-k): a canary would not be selected")
    discover = bool(args) and args[0] == "discover"
    options, positional = _unittest_options(args[1:] if discover else args)
    stem = request.name()
    if discover or not positional:
        start = options.get("start") or (positional[0] if discover and positional else ".")
        pattern = options.get("pattern") or (
            positional[1] if discover and len(positional) > 1 else UNITTEST_PATTERN
        )
        name = _module_name(stem, pattern)
        if name is None:
            return NoCanary(f"no module name matches the discovery pattern {pattern!r}")
        directory = inside(request.cwd, start)
        if not directory.is_dir():
            return NoCanary(f"the tests' directory {start} does not exist")
        named: tuple[str, ...] = ()
    else:
        # The run names its tests: the canary module is named with them, from the cwd.
        name = f"test{stem}"
        directory, named = request.cwd, (f"{stem}.{name}",)
    if not within(request.root, directory):
        return NoCanary(f"the tests' directory {directory} is outside the workspace")
    canaries = request.pair("test_{}".format)
    left, right = unequal()
    methods = "".join(
        f"\n    def {c.name}(self, guard=_guard):\n"
        f'        guard(self, "while {c.name} ran")\n'
        + ("        pass\n" if c.must_pass else f"        self.assertEqual({left}, {right})\n")
        for c in canaries
    )
    mark = request.token()
    guard = _UNITTEST_GUARD.substitute(
        state=textwrap.indent(_FUNCTION_STATE, "    "), mark=_spelt_apart(mark), code=GUARD_EXIT
    )
    text = f"{_QUIET}{guard}\n\nclass {camel(request.name())}(unittest.TestCase):{methods}"
    # A package of its own (discovery enters packages): its .gitignore then hides it all.
    package = request.relative(directory / stem)
    path = f"{package}/{name}.py"

    def edit(argv: tuple[str, ...]) -> tuple[str, ...]:
        kept = tuple(a for a in argv if a not in _UNITTEST_FAIL_FAST)
        listed = (*kept, *named)
        # A line per test is where the canaries are found; the last verbosity flag wins.
        return listed if listed[-1] in ("-v", "--verbose") else (*listed, "-v")

    return Planting(
        files=(
            CanaryFile(f"{package}/__init__.py", _QUIET),
            CanaryFile(path, text),
            ignored_by_git(package),
        ),
        canaries=canaries,
        edit_argv=edit,
        checks=_guard_tripped("unittest", mark),
        what=f"a unittest module {path}",
        mark=mark,
        printed=functools.partial(_unittest_printed_without, canaries),
    )


def _unittest_printed_without(canaries: Sequence[Canary], text: str, ran: Counter[str]) -> str:
    """unittest's printed `text` (its stderr) without the canaries' parts: their lines in
    the verbose listing, the must-fail canary's failure section, and their share (`ran`)
    of `Ran N tests` and of `FAILED (failures=N)`."""
    names = any_name(canaries)
    listed = re.compile(rf"^(?:{names}) \(.*\) \.\.\. .*(?:\n|$)", re.MULTILINE)
    section = re.compile(
        rf"^={{70}}\n(?:FAIL|ERROR): (?:{names}) \(.*\n(?:(?!={{70}}$|-{{70}}\nRan ).*\n)*",
        re.MULTILINE,
    )
    text = section.sub("", listed.sub("", text))
    failing = ran["failed"]

    def tests(match: re.Match[str]) -> str:
        left = int(match[1]) - ran.total()
        return f"Ran {left} test{'' if left == 1 else 's'}"

    def outcome(match: re.Match[str]) -> str:
        parts = []
        for part in match[1].split(", "):
            key, _, number = part.partition("=")
            if key == "failures" and number.isdigit():
                if int(number) <= failing:
                    continue
                part = f"failures={int(number) - failing}"
            parts.append(part)
        return f"FAILED ({', '.join(parts)})" if parts else "OK"

    text = re.sub(r"^Ran (\d+) tests?", tests, text, flags=re.MULTILINE)
    return re.sub(r"^FAILED \((.*)\)$", outcome, text, flags=re.MULTILINE)


def _unittest_options(args: list[str]) -> tuple[dict[str, str], list[str]]:
    """The start directory and pattern options, and the positional arguments."""
    keys = {
        "-s": "start",
        "--start-directory": "start",
        "-p": "pattern",
        "--pattern": "pattern",
    }
    options: dict[str, str] = {}
    positional: list[str] = []
    at = 0
    while at < len(args):
        arg = args[at]
        flag, eq, value = arg.partition("=")
        if arg in _UNITTEST_VALUED and at + 1 < len(args):
            if arg in keys:
                options[keys[arg]] = args[at + 1]
            at += 2
            continue
        if eq and flag in keys:
            options[keys[flag]] = value
        elif not arg.startswith("-"):
            positional.append(arg)
        at += 1
    return options, positional


def _module_name(stem: str, pattern: str) -> str | None:
    """A module name for the canary that discovery with `pattern` picks up; never one
    pytest's default patterns (`test_*.py`, `*_test.py`) take, should pytest run beside."""
    for name in (
        f"test{stem}",
        f"{stem}test",
        f"{stem}_test",
        stem,
    ):
        if fnmatch.fnmatch(f"{name}.py", pattern):
            return name
    return None

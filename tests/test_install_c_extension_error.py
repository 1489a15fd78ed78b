"""An install whose build of the project's own C extension stops at a compiler error failed
on the code: FAILED, with the file and line.

Measured on a real project: MarkupSafe 2.1.5 with a syntax error in
src/markupsafe/_speedups.c. `pip install -e .` runs setuptools' build_ext, gcc stops at
`src/markupsafe/_speedups.c:174:36: error: expected ')'`; assay said INDETERMINATE,
"install step install-python did not succeed (... Could not build wheels for MarkupSafe)
... Check the lockfile and the network". The maintainers' `pip install` is red on it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.parsers.crash import c_compile_error_in
from tests.cli import installed_and_verified
from tests.repos import write

GCC_SAID = (
    "      building 'cext._speed' extension\n"
    "      src/cext/_speed.c: In function 'add':\n"
    "      src/cext/_speed.c:3:14: error: expected ';' before '}' token\n"
)


def test_the_first_error_in_a_source_of_the_tree_is_the_codes(tmp_path: Path) -> None:
    (tmp_path / "src" / "cext").mkdir(parents=True)
    (tmp_path / "src" / "cext" / "_speed.c").write_text("x\n")
    found = c_compile_error_in(GCC_SAID, str(tmp_path))
    assert found is not None
    assert (found.file, found.line, found.column) == ("src/cext/_speed.c", 3, 14)
    assert found.message == "expected ';' before '}' token"


def test_a_file_not_in_the_tree_is_a_dependencys(tmp_path: Path) -> None:
    # A dependency built from its sdist, in pip's own directory, names its own files.
    assert c_compile_error_in(GCC_SAID, str(tmp_path)) is None
    said = f"{tmp_path}/.venv/x/y.c:1:1: error: unknown type name 'z'\n"
    (tmp_path / ".venv" / "x").mkdir(parents=True)
    (tmp_path / ".venv" / "x" / "y.c").write_text("z\n")
    assert c_compile_error_in(said, str(tmp_path), (".venv",)) is None
    assert c_compile_error_in("../up.c:1:1: error: no\n", str(tmp_path)) is None


def test_a_header_this_machine_lacks_is_not_the_codes(tmp_path: Path) -> None:
    # libyaml's headers not installed: the extension's own file names the include.
    (tmp_path / "ext").mkdir()
    (tmp_path / "ext" / "_yaml.h").write_text("#include <yaml.h>\n")
    gcc = "      ext/_yaml.h:2:10: fatal error: yaml.h: No such file or directory\n"
    clang = "ext/_yaml.h:2:10: fatal error: 'yaml.h' file not found\n"
    assert c_compile_error_in(gcc, str(tmp_path)) is None
    assert c_compile_error_in(clang, str(tmp_path)) is None


SETUP_PY = """\
from setuptools import Extension, setup

setup(ext_modules=[Extension("cext._speed", ["src/cext/_speed.c"])])
"""
SPEED_C = """\
#include <Python.h>

static PyObject *add(PyObject *self, PyObject *args) {
    long a, b;
    if (!PyArg_ParseTuple(args, "ll", &a, &b)) return NULL;
    return PyLong_FromLong(a + b){SEMICOLON}
}

static PyMethodDef methods[] = {{"add", add, METH_VARARGS, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_speed", NULL, -1, methods};
PyMODINIT_FUNC PyInit__speed(void) { return PyModule_Create(&module); }
"""


@pytest.mark.slow
def test_an_install_whose_build_ext_stops_on_the_projects_c(tmp_path: Path) -> None:
    assert shutil.which("gcc") is not None, "gcc is not installed (.ci/run installs it)"
    files = {
        "pyproject.toml": (
            '[build-system]\nrequires = ["setuptools"]\n'
            'build-backend = "setuptools.build_meta"\n\n'
            '[project]\nname = "cext"\nversion = "1.0"\n\n'
            '[tool.setuptools]\npackage-dir = {"" = "src"}\npackages = ["cext"]\n'
        ),
        "setup.py": SETUP_PY,
        "src/cext/__init__.py": "",
        "src/cext/_speed.c": SPEED_C.replace("{SEMICOLON}", ""),
        "tests/test_add.py": "from cext._speed import add\n\n\ndef test_add():\n"
        "    assert add(2, 3) == 5\n",
    }
    report = installed_and_verified(write(tmp_path / "repo", files), tmp_path)
    assert report["status"] == "FAILED", report["note"]
    assert report["note"].startswith(
        "install step install-python failed on the project's own code: src/cext/_speed.c:6: "
    ), report["note"]

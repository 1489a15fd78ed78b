"""tox runs an environment's `commands_pre` before its `commands`: wcwidth 0.9.4 builds its C
extension in place there (`{envpython} setup.py build_ext --inplace`), and its conftest
fails every test where the extension is missing. Planned without it, the untouched tree
was FAILED; the build is now planned first, and the verdict is the code's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.plan import Stage, plan_repository
from assay.tools.tox_config import read_tox
from tests.cli import assay
from tests.repos import write

TOX_INI = """[tox]
envlist = py311
[testenv]
commands = python -m pytest tests
[testenv:py311]
commands_pre = {envpython} setup.py build_ext --inplace
"""
SETUP_PY = """from setuptools import Extension, setup

setup(
    name="calc",
    version="0",
    packages=["calc"],
    ext_modules=[Extension("calc._speed", ["calc/_speed.c"])],
)
"""
SPEED_C = """#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *twice(PyObject *self, PyObject *args) {
    long x;
    if (!PyArg_ParseTuple(args, "l", &x)) return NULL;
    return PyLong_FromLong(x * %s);
}

static PyMethodDef methods[] = {{"twice", twice, METH_VARARGS, ""}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_speed", NULL, -1, methods};
PyMODINIT_FUNC PyInit__speed(void) { return PyModule_Create(&module); }
"""
CONFTEST = """import pytest


@pytest.fixture(autouse=True)
def _extension_built():
    import calc._speed  # noqa: F401  (fails every test where the build was not done)
"""
TEST = "from calc._speed import twice\n\n\ndef test_twice():\n    assert twice(21) == 42\n"


def _project(root: Path, factor: str = "2") -> Path:
    write(
        root,
        {
            "tox.ini": TOX_INI,
            "setup.py": SETUP_PY,
            "calc/__init__.py": "",
            "calc/_speed.c": SPEED_C % factor,
            "tests/conftest.py": CONFTEST,
            "tests/test_calc.py": TEST,
        },
    )
    return root


@pytest.mark.parametrize(
    ("text", "path"),
    [
        (TOX_INI, "tox.ini"),
        (
            (
                '[env_run_base]\ncommands = [["pytest"]]\n'
                'commands_pre = [["{env_python}", "setup.py", "build_ext", "--inplace"]]\n'
            ),
            "tox.toml",
        ),
    ],
)
def test_commands_pre_are_read(text: str, path: str) -> None:
    config, error = read_tox(path, text)
    assert config is not None, error
    env = next(e for e in config.envs if e.commands_pre)
    assert [c.line for c in env.commands_pre] == ["python setup.py build_ext --inplace"]


def test_an_in_place_build_before_the_tests_is_planned_first(tmp_path: Path) -> None:
    plan = plan_repository(_project(tmp_path))
    (build,) = [c for c in plan.checks if c.tool == "build_ext"]
    assert build.argv[1:] == ("setup.py", "build_ext", "--inplace")
    assert plan.stage_of(build) is Stage.BUILD
    assert "commands_pre of tox env py311" in build.reason
    (test,) = [c for c in plan.checks if c.kind.value == "test"]
    assert plan.stage_of(test) is Stage.CHECK  # after the build


@pytest.mark.parametrize(
    "line",
    [
        "python setup.py build_ext",  # not in place: the tests would not see it
        "python -m pip install -e .",  # an install: `--install`'s to do
        "python setup.py build_ext --inplace && rm -rf build",  # more than the build
    ],
)
def test_other_commands_pre_are_not_planned(tmp_path: Path, line: str) -> None:
    write(tmp_path, {"tox.ini": TOX_INI.replace("{envpython} setup.py build_ext --inplace", line)})
    assert not [
        c
        for c in plan_repository(tmp_path).checks
        if c.kind.value == "build" and c.tool != "compileall"
    ]


@pytest.mark.slow
@pytest.mark.parametrize(("factor", "status"), [("2", "VERIFIED"), ("3", "FAILED")])
def test_the_built_extension_is_what_the_tests_judge(
    tmp_path: Path, factor: str, status: str
) -> None:
    """Real gcc, real setuptools, real pytest in the sandbox: the untouched extension is
    VERIFIED, a wrong value in its C is FAILED at the test that sees it."""
    done = assay("verify", "--json", "--no-cache", str(_project(tmp_path, factor)), timeout=300)
    report = json.loads(done.stdout)
    assert report["status"] == status, report["note"]
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["build_ext"]["verdict"] == "pass", checks["build_ext"]["note"]
    assert checks["pytest"]["verdict"] == ("pass" if status == "VERIFIED" else "fail")
    if status == "FAILED":
        assert "test_twice" in report["note"]

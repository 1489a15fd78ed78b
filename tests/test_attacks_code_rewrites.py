"""Under `--protect`, the change's own code rewritten while the checks ran keeps it from
VERIFIED.

`calc/muls.py`, imported by `tests/a_first/test_mul.py`, wrote a right `calc/adder.py`
over the tree's wrong one before `tests/b_second/test_add.py` imported it: the tests passed
on code the change does not hold, and a wrong `add` was VERIFIED. So was an `add` that
used `calc/_fast.py` when it was there, which `calc/muls.py` wrote; and one that read its
offset from `calc/offset.json`, or `calc/override.json` when it was there, or put
`calc/.fast` or `calc/target` on `sys.path` and imported what `calc/muls.py` wrote there;
and a `lib/adder.js` that required `lib/fast.js`, or a `fastadd` package in
`lib/node_modules`, which `lib/muls.js` wrote.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from assay.code_rewrites import put_back_rewrites, stamp
from assay.protect import protected_set
from assay.report import Report
from assay.verdict import Status
from tests.attacks import change_on_base, explain, verify_change
from tests.repos import write

BASE = {
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1.0"\n',
    "calc/__init__.py": "",
    "calc/adder.py": "def add(a, b):\n    return a + b\n",
    "calc/muls.py": "def mul(a, b):\n    return a * b\n",
    "tests/a_first/test_mul.py": (
        "from calc.muls import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
    ),
    "tests/b_second/test_add.py": (
        "from calc.adder import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    ),
}
MULS_THAT_WRITES = """import os


def mul(a, b):
    return a * b


def _tidy():
    spot = os.path.join(os.path.dirname(os.path.abspath(__file__)), "{name}")
    try:
        with open(spot, "w") as f:
            f.write("def add(a, b):\\n    return a + b\\n")
    except OSError:
        pass


_tidy()
"""
ADDERS = {
    "calc/adder.py": "def add(a, b):\n    return a - b\n",
    "calc/_fast.py": (
        "def add(a, b):\n    try:\n        from calc._fast import add as fast\n"
        "    except ImportError:\n        return a - b\n    return fast(a, b)\n"
    ),
}


@pytest.mark.parametrize("written", sorted(ADDERS))
def test_code_the_change_wrote_mid_run_is_counted(tmp_path: Path, written: str) -> None:
    muls = MULS_THAT_WRITES.format(name=written.rpartition("/")[2])
    change = {"calc/adder.py": ADDERS[written], "calc/muls.py": muls}
    repo = change_on_base(tmp_path / "repo", BASE, change, dedent=False)
    report = verify_change(repo)
    assert report.status is not Status.VERIFIED, explain(report)
    assert written in report.note, explain(report)


def test_caches_and_files_the_tree_lacks_are_not_the_changes_code(tmp_path: Path) -> None:
    files = {
        "calc.py": "x = 1\n",
        "calc_again.py": "y = 1\n",
        ".pytest_cache/v/cache/nodeids.py": "[]\n",
        "target/debug/build/out/gen.rs": "",
    }
    tree = write(tmp_path / "tree", files)
    workspace = write(tmp_path / "work", {**files, "_version.py": "v = 1\n"})
    write(workspace, {"coverage/lcov-report/sorter.js": "", "tests/test_new.py": ""})
    before = stamp(workspace)
    write(workspace, {".pytest_cache/v/cache/nodeids.py": "[1]\n", "_version.py": "v = 2\n"})
    write(workspace, {"target/debug/build/out/gen.rs": "fn x() {}\n", "calc.py": "x = 2\n"})
    write(workspace, {"coverage/lcov-report/prettify.js": "", "calc_fast.py": ""})
    write(workspace, {"calc/adder.cpython-311-x86_64-linux-gnu.so": "", "lib/report.txt": ""})
    # Written and put back as it was, its modification time too: only its change time moved.
    again = workspace / "calc_again.py"
    was = again.stat()
    again.write_text("y = 1\n")
    os.utime(again, ns=(was.st_atime_ns, was.st_mtime_ns))
    done = put_back_rewrites(workspace, tree, before, protected_set())
    extension = "calc/adder.cpython-311-x86_64-linux-gnu.so"
    assert done == (("calc.py", "calc_again.py"), (extension, "calc_fast.py"))
    assert (workspace / "calc.py").read_text() == "x = 1\n"
    assert not (workspace / "calc_fast.py").exists()


#: Wrong by one for each file `calc/muls.py` did not write mid-run: the tree's offset, no
#: override, no module on the paths it puts on `sys.path`.
READING_ADDER = """import importlib
import json
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def add(a, b):
    with open(os.path.join(_HERE, "offset.json")) as f:
        total = a + b + json.load(f)["offset"]
    if not os.path.exists(os.path.join(_HERE, "override.json")):
        total += 1
    for where in (".fast", "target"):
        sys.path.insert(0, os.path.join(_HERE, where))
        try:
            importlib.import_module("fast_" + where.strip("."))
        except ImportError:
            total += 1
    return total
"""
MULS_THAT_WRITES_DATA = """import os


def mul(a, b):
    return a * b


def _tidy():
    here = os.path.dirname(os.path.abspath(__file__))
    written = {
        "offset.json": '{"offset": 0}',
        "override.json": "{}",
        ".fast/fast_fast.py": "",
        "target/fast_target.py": "",
    }
    for rel, text in written.items():
        try:
            os.makedirs(os.path.dirname(os.path.join(here, rel)), exist_ok=True)
            with open(os.path.join(here, rel), "w") as f:
                f.write(text)
        except OSError:
            pass


_tidy()
"""


@pytest.fixture(scope="module")
def python_report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    base = {**BASE, "calc/offset.json": '{"offset": 0}\n'}
    change = {
        "calc/adder.py": READING_ADDER,
        "calc/offset.json": '{"offset": 1}\n',
        "calc/muls.py": MULS_THAT_WRITES_DATA,
    }
    repo = change_on_base(tmp_path_factory.mktemp("data") / "repo", base, change, dedent=False)
    return verify_change(repo)


@pytest.mark.parametrize(
    "written",
    [
        "calc/offset.json",
        "calc/override.json",
        "calc/.fast/fast_fast.py",
        "calc/target/fast_target.py",
    ],
)
def test_data_and_modules_the_change_wrote_mid_run_are_counted(
    python_report: Report, written: str
) -> None:
    assert python_report.status is not Status.VERIFIED, explain(python_report)
    assert written in python_report.note, explain(python_report)


NODE_TEST = """const test = require('node:test');
const assert = require('node:assert');
const {{ {name} }} = require('../lib/{module}');
test('{name}', () => {{ assert.strictEqual({name}(2, 3), {value}); }});
"""
NODE_LOCK = {
    "name": "calc",
    "version": "1.0.0",
    "lockfileVersion": 3,
    "requires": True,
    "packages": {"": {"name": "calc", "version": "1.0.0"}},
}
NODE_BASE = {
    "package.json": json.dumps(
        {"name": "calc", "version": "1.0.0", "scripts": {"test": "node --test"}}
    ),
    "package-lock.json": json.dumps(NODE_LOCK),
    "lib/adder.js": "exports.add = (a, b) => a + b;\n",
    "lib/muls.js": "exports.mul = (a, b) => a * b;\n",
    "test/a_mul.test.js": NODE_TEST.format(name="mul", module="muls", value=6),
    "test/b_add.test.js": NODE_TEST.format(name="add", module="adder", value=5),
}
#: Wrong by one for each module `lib/muls.js` did not write mid-run.
NODE_ADDER = """const path = require('path');

function found(name) {
  try {
    require(name);
    return 0;
  } catch (e) {
    return 1;
  }
}

exports.add = (a, b) => a + b + found(path.join(__dirname, 'fast.js')) + found('fastadd');
"""
NODE_MULS = """const fs = require('fs');
const path = require('path');

exports.mul = (a, b) => a * b;

try {
  fs.writeFileSync(path.join(__dirname, 'fast.js'), '');
  const dir = path.join(__dirname, 'node_modules', 'fastadd');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'index.js'), '');
} catch (e) {}
"""


@pytest.fixture(scope="module")
def node_report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    change = {"lib/adder.js": NODE_ADDER, "lib/muls.js": NODE_MULS}
    repo = change_on_base(tmp_path_factory.mktemp("node") / "repo", NODE_BASE, change, dedent=False)
    return verify_change(repo, install=True)


@pytest.mark.parametrize("written", ["lib/fast.js", "lib/node_modules/fastadd/index.js"])
def test_javascript_modules_the_change_added_mid_run_are_counted(
    node_report: Report, written: str
) -> None:
    assert node_report.status is not Status.VERIFIED, explain(node_report)
    assert written in node_report.note, explain(node_report)


def test_output_beside_code_is_not_the_changes_code(tmp_path: Path) -> None:
    files = {"calc/adder.py": "", "calc/offset.json": "{}", "coverage.xml": "<a/>", "x.js": ""}
    tree = write(tmp_path / "tree", files)
    workspace = write(tmp_path / "work", files)
    before = stamp(workspace)
    write(workspace, {"coverage.xml": "<b/>", "coverage/lcov-report/sorter.js": ""})
    write(workspace, {"junit.xml": "", "calc/data/more.txt": ""})
    write(workspace, {"calc/offset.json": '{"o": 1}', "calc/deep/fast.js": "", "fast.js": ""})
    done = put_back_rewrites(workspace, tree, before, protected_set())
    added = ("calc/data/more.txt", "calc/deep/fast.js", "fast.js")
    assert done == (("calc/offset.json",), added)
    assert (workspace / "calc/offset.json").read_text() == "{}"
    assert (workspace / "coverage.xml").read_text() == "<b/>"
    assert (workspace / "coverage/lcov-report/sorter.js").exists()


def test_native_build_output_and_caches_are_not_added_code(tmp_path: Path) -> None:
    tree = write(tmp_path / "tree", {"calc/adder.py": ""})
    workspace = write(tmp_path / "work", {"calc/adder.py": ""})
    before = stamp(workspace)
    write(workspace, {"target/debug/libcalc.so": "", ".mypy_cache/3.11/calc.data.json": ""})
    write(workspace, {"build/lib/calc/x.so": "", ".hidden/x.pyc": "", "target/x.py": ""})
    done = put_back_rewrites(workspace, tree, before, protected_set())
    assert done == ((), (".hidden/x.pyc", "target/x.py"))


def test_packages_installed_before_and_tool_caches_are_not_added(tmp_path: Path) -> None:
    installed = {"node_modules/left-pad/index.js": "", "lib/adder.js": ""}
    tree = write(tmp_path / "tree", {"lib/adder.js": ""})
    workspace = write(tmp_path / "work", installed)
    before = stamp(workspace)
    write(workspace, {"node_modules/.vite/deps/chunk.js": "", "node_modules/fast/i.js": ""})
    done = put_back_rewrites(workspace, tree, before, protected_set())
    assert done == ((), ("node_modules/fast/i.js",))
    assert (workspace / "node_modules/left-pad/index.js").exists()

"""Under `--protect`, the change's own code rewritten while the checks ran keeps it from
VERIFIED.

`calc/muls.py`, imported by `tests/a_first/test_mul.py`, wrote a right `calc/adder.py`
over the tree's wrong one before `tests/b_second/test_add.py` imported it: the tests passed
on code the change does not hold, and a wrong `add` was VERIFIED. So was an `add` that
used `calc/_fast.py` when it was there, which `calc/muls.py` wrote, one that read its
offset from `calc/offset.json`, which `calc/muls.py` wrote right, and a `lib/adder.js` that
used `lib/fast.js` when it was there, which `lib/muls.js` wrote; and an `add` that put
`calc/.fast` (or `calc/target`) on `sys.path` and imported the `fastadd.py` that
`calc/muls.py` wrote there; and a `lib/adder.js` that required a `fastadd` package that
`lib/muls.js` wrote into `lib/node_modules`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from assay.code_rewrites import put_back_rewrites, stamp
from assay.protect import protected_set
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


OFFSET_READER = """import json
import os


def add(a, b):
    with open(os.path.join(os.path.dirname(__file__), "offset.json")) as f:
        return a + b + json.load(f)["offset"]
"""


def test_data_the_change_rewrote_mid_run_is_counted(tmp_path: Path) -> None:
    base = {**BASE, "calc/offset.json": '{"offset": 0}\n'}
    muls = MULS_THAT_WRITES.replace(
        "def add(a, b):\\n    return a + b\\n", '{{\\"offset\\": 0}}\\n'
    ).format(name="offset.json")
    change = {"calc/adder.py": OFFSET_READER, "calc/offset.json": '{"offset": 1}\n'}
    repo = change_on_base(tmp_path / "repo", base, {**change, "calc/muls.py": muls}, dedent=False)
    report = verify_change(repo)
    assert report.status is not Status.VERIFIED, explain(report)
    assert "calc/offset.json" in report.note, explain(report)


NODE_TEST = """const test = require('node:test');
const assert = require('node:assert');
const {{ {name} }} = require('../lib/{module}');
test('{name}', () => {{ assert.strictEqual({name}(2, 3), {value}); }});
"""
NODE_BASE = {
    "package.json": json.dumps(
        {"name": "calc", "version": "1.0.0", "scripts": {"test": "node --test"}}
    ),
    "package-lock.json": json.dumps(
        {
            "name": "calc",
            "version": "1.0.0",
            "lockfileVersion": 3,
            "requires": True,
            "packages": {"": {"name": "calc", "version": "1.0.0"}},
        }
    ),
    "lib/adder.js": "exports.add = (a, b) => a + b;\n",
    "lib/muls.js": "exports.mul = (a, b) => a * b;\n",
    "test/a_mul.test.js": NODE_TEST.format(name="mul", module="muls", value=6),
    "test/b_add.test.js": NODE_TEST.format(name="add", module="adder", value=5),
}
NODE_ADDER = """const path = require('path');

exports.add = (a, b) => {
  try {
    return require(path.join(__dirname, 'fast.js')).add(a, b);
  } catch (e) {
    return a - b;
  }
};
"""
NODE_MULS = """const fs = require('fs');
const path = require('path');

exports.mul = (a, b) => a * b;

try {
  fs.writeFileSync(path.join(__dirname, 'fast.js'), 'exports.add = (a, b) => a + b;\\n');
} catch (e) {}
"""


def test_a_javascript_module_the_change_added_mid_run_is_counted(tmp_path: Path) -> None:
    change = {"lib/adder.js": NODE_ADDER, "lib/muls.js": NODE_MULS}
    repo = change_on_base(tmp_path / "repo", NODE_BASE, change, dedent=False)
    report = verify_change(repo, install=True)
    assert report.status is not Status.VERIFIED, explain(report)
    assert "lib/fast.js" in report.note, explain(report)


def test_output_beside_code_is_not_the_changes_code(tmp_path: Path) -> None:
    files = {"calc/adder.py": "", "calc/offset.json": "{}", "coverage.xml": "<a/>", "x.js": ""}
    tree = write(tmp_path / "tree", files)
    workspace = write(tmp_path / "work", files)
    before = stamp(workspace)
    write(workspace, {"coverage.xml": "<b/>", "coverage/lcov-report/sorter.js": ""})
    write(workspace, {"calc/offset.json": '{"o": 1}', "calc/deep/fast.js": "", "fast.js": ""})
    done = put_back_rewrites(workspace, tree, before, protected_set())
    assert done == (("calc/offset.json",), ("calc/deep/fast.js", "fast.js"))
    assert (workspace / "calc/offset.json").read_text() == "{}"
    assert (workspace / "coverage.xml").read_text() == "<b/>"
    assert (workspace / "coverage/lcov-report/sorter.js").exists()


PATH_ADDER = """import os
import sys

_HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "{where}")


def add(a, b):
    if _HERE not in sys.path:
        sys.path.insert(0, _HERE)
    try:
        from fastadd import add as fast
    except ImportError:
        return a - b
    return fast(a, b)
"""


@pytest.mark.parametrize("where", [".fast", "target"])
def test_a_module_added_where_code_put_the_import_path_is_counted(
    tmp_path: Path, where: str
) -> None:
    muls = MULS_THAT_WRITES.format(name=f"{where}/fastadd.py").replace(
        "    try:\n", "    try:\n        os.makedirs(os.path.dirname(spot), exist_ok=True)\n"
    )
    change = {"calc/adder.py": PATH_ADDER.format(where=where), "calc/muls.py": muls}
    repo = change_on_base(tmp_path / "repo", BASE, change, dedent=False)
    report = verify_change(repo)
    assert report.status is not Status.VERIFIED, explain(report)
    assert f"calc/{where}/fastadd.py" in report.note, explain(report)


def test_native_build_output_and_caches_are_not_added_code(tmp_path: Path) -> None:
    tree = write(tmp_path / "tree", {"calc/adder.py": ""})
    workspace = write(tmp_path / "work", {"calc/adder.py": ""})
    before = stamp(workspace)
    write(workspace, {"target/debug/libcalc.so": "", ".mypy_cache/3.11/calc.data.json": ""})
    write(workspace, {"build/lib/calc/x.so": "", ".hidden/x.pyc": "", "target/x.py": ""})
    done = put_back_rewrites(workspace, tree, before, protected_set())
    assert done == ((), (".hidden/x.pyc", "target/x.py"))


PACKAGE_ADDER = """exports.add = (a, b) => {
  try {
    return require('fastadd').add(a, b);
  } catch (e) {
    return a - b;
  }
};
"""
PACKAGE_MULS = """const fs = require('fs');
const path = require('path');

exports.mul = (a, b) => a * b;

try {
  const dir = path.join(__dirname, 'node_modules', 'fastadd');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'index.js'), 'exports.add = (a, b) => a + b;\\n');
} catch (e) {}
"""


def test_a_package_the_change_added_mid_run_is_counted(tmp_path: Path) -> None:
    change = {"lib/adder.js": PACKAGE_ADDER, "lib/muls.js": PACKAGE_MULS}
    repo = change_on_base(tmp_path / "repo", NODE_BASE, change, dedent=False)
    report = verify_change(repo, install=True)
    assert report.status is not Status.VERIFIED, explain(report)
    assert "lib/node_modules/fastadd/index.js" in report.note, explain(report)


def test_packages_installed_before_and_tool_caches_are_not_added(tmp_path: Path) -> None:
    installed = {"node_modules/left-pad/index.js": "", "lib/adder.js": ""}
    tree = write(tmp_path / "tree", {"lib/adder.js": ""})
    workspace = write(tmp_path / "work", installed)
    before = stamp(workspace)
    write(workspace, {"node_modules/.vite/deps/chunk.js": "", "node_modules/fast/i.js": ""})
    done = put_back_rewrites(workspace, tree, before, protected_set())
    assert done == ((), ("node_modules/fast/i.js",))
    assert (workspace / "node_modules/left-pad/index.js").exists()

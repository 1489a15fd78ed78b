"""assay's dataclasses take their generated methods from a table of compiled code
(`assay.dataclass_bytecode`): the methods must be exactly those `dataclasses` compiles,
the table must be used by the next process, and a bad table must cost nothing but time.

Each case runs in a process of its own with `PYTHONPYCACHEPREFIX` set, so the table is
written under the test's directory rather than beside the package's bytecode.
"""

from __future__ import annotations

import marshal
import subprocess
import sys
from pathlib import Path

from tests.pycache_prefix import json_printed, prefix_env

#: Prints, for every dataclass of the modules a verify loads, what each generated
#: method is: its bytecode, constants, names, annotations and defaults.
FINGERPRINT = """
import json, re, sys
if sys.argv[1] == "table":
    from assay import dataclass_bytecode
    dataclass_bytecode.install()
import assay.pipeline, assay.plan, assay.cache, assay.report, assay.discovery
import assay.sandbox.bwrap, assay.check_execution

def shown(value):
    return re.sub(r"0x[0-9a-f]+", "0x", repr(value))

methods = {}
for name, module in sorted(sys.modules.items()):
    if not name.startswith("assay."):
        continue
    for cls in vars(module).values():
        if not (isinstance(cls, type) and "__dataclass_fields__" in vars(cls)):
            continue
        if cls.__module__ != name:
            continue
        for method in ("__init__", "__repr__", "__eq__", "__setattr__", "__delattr__", "__hash__"):
            fn = vars(cls).get(method)
            code = getattr(fn, "__code__", None)
            if code is None:
                continue
            methods[f"{name}.{cls.__qualname__}.{method}"] = [
                code.co_code.hex(), shown(code.co_consts), list(code.co_names),
                list(code.co_varnames), shown(fn.__annotations__), shown(fn.__defaults__),
                fn.__qualname__,
            ]
if sys.argv[1] == "table":
    dataclass_bytecode.save()
print(json.dumps(methods))
"""


def fingerprint(prefix: Path, mode: str, **env: str) -> dict[str, list[object]]:
    methods: dict[str, list[object]] = json_printed(FINGERPRINT, prefix, mode, **env)
    return methods


def table_files(prefix: Path) -> list[Path]:
    return sorted(prefix.rglob("dataclass-methods.*.marshal"))


def test_the_tables_methods_are_those_dataclasses_compiles(tmp_path: Path) -> None:
    compiled = fingerprint(tmp_path, "plain")
    assert len(compiled) > 200  # the verify path's classes, several methods each
    first = fingerprint(tmp_path, "table")  # compiles, and writes the table
    [table] = table_files(tmp_path)
    written = table.stat().st_mtime_ns
    second = fingerprint(tmp_path, "table")  # takes every method from the table
    assert first == compiled
    assert second == compiled
    assert table.stat().st_mtime_ns == written, "the second process compiled something anew"


def test_a_table_that_cannot_be_read_is_compiled_afresh_and_replaced(tmp_path: Path) -> None:
    compiled = fingerprint(tmp_path, "plain")
    fingerprint(tmp_path, "table")
    [table] = table_files(tmp_path)
    for garbage in (b"not a marshal table", marshal.dumps({"def f(): pass": 1}), b""):
        table.write_bytes(garbage)
        assert fingerprint(tmp_path, "table") == compiled
        assert len(marshal.loads(table.read_bytes())) > 200


def test_only_assays_own_classes_are_kept(tmp_path: Path) -> None:
    script = (
        "from assay import dataclass_bytecode\n"
        "dataclass_bytecode.install()\n"
        "import dataclasses, assay.evidence\n"
        "@dataclasses.dataclass\n"
        "class Elsewhere:\n"
        "    a_field_of_a_class_not_of_assays: int\n"
        "assert Elsewhere(1) == Elsewhere(1)\n"
        "dataclass_bytecode.save()\n"
    )
    subprocess.run([sys.executable, "-c", script], env=prefix_env(tmp_path), check=True)
    [table] = table_files(tmp_path)
    texts = marshal.loads(table.read_bytes())
    assert any("exit_code" in text for text in texts)  # assay.evidence's were kept
    assert not any("a_field_of_a_class_not_of_assays" in text for text in texts)


def test_nothing_is_written_where_python_writes_no_bytecode(tmp_path: Path) -> None:
    compiled = fingerprint(tmp_path, "plain")
    assert fingerprint(tmp_path, "table", PYTHONDONTWRITEBYTECODE="1") == compiled
    assert table_files(tmp_path) == []

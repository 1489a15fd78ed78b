"""Modules' top-level regular expressions come from a table of compiled code
(`assay.pattern_code`): each must be exactly the pattern `re` compiles, the table must be
used by the next process, and a bad table must cost nothing but time.

Each case runs in a process of its own with `PYTHONPYCACHEPREFIX` set, so the table is
written under the test's directory rather than beside the package's bytecode.
"""

from __future__ import annotations

import marshal
import subprocess
import sys
from pathlib import Path

from tests.cli import assay, assay_env
from tests.pycache_prefix import json_printed, prefix_env
from tests.repos import PASSING_PYTEST, write

#: Prints, for every pattern a module of the verify path holds at its top level, whether
#: it is the pattern `re` compiles afresh (equal patterns have equal flags and code), and
#: what it matches.
FINGERPRINT = """
import json, re, sys
from re import _compiler
compile_anew = _compiler.compile
if sys.argv[1] == "table":
    from assay import pattern_code
    pattern_code.install()
import assay.pipeline, assay.plan, assay.cache, assay.report, assay.discovery, assay.parsers
import assay.sandbox.bwrap, assay.check_execution, tomllib

patterns = {}
for name, module in sorted(sys.modules.items()):
    for attr, value in list(vars(module).items()):
        if isinstance(value, re.Pattern):
            anew = compile_anew(value.pattern, value.flags)
            patterns[f"{name}.{attr}"] = [
                value == anew, value.groups, sorted(value.groupindex.items()),
                str(value.pattern), value.flags,
            ]
if sys.argv[1] == "table":
    pattern_code.save()
print(json.dumps(patterns))
"""


def fingerprint(prefix: Path, mode: str, **env: str) -> dict[str, list[object]]:
    patterns: dict[str, list[object]] = json_printed(FINGERPRINT, prefix, mode, **env)
    return patterns


def table_files(prefix: Path) -> list[Path]:
    return sorted(prefix.rglob("regex-code-*.marshal"))


def test_the_tables_patterns_are_those_re_compiles(tmp_path: Path) -> None:
    compiled = fingerprint(tmp_path, "plain")
    assert len(compiled) > 80  # the verify path's patterns its modules hold by name
    assert all(same for same, *_ in compiled.values())
    first = fingerprint(tmp_path, "table")  # compiles, and writes the table
    [table] = table_files(tmp_path)
    written = table.stat().st_mtime_ns
    second = fingerprint(tmp_path, "table")  # takes every pattern from the table
    assert first == compiled
    assert second == compiled
    assert table.stat().st_mtime_ns == written, "the second process compiled something anew"
    assert len(marshal.loads(table.read_bytes())) > 80


def test_a_table_that_cannot_be_read_is_compiled_afresh_and_replaced(tmp_path: Path) -> None:
    compiled = fingerprint(tmp_path, "plain")
    fingerprint(tmp_path, "table")
    [table] = table_files(tmp_path)
    entries = marshal.loads(table.read_bytes())
    # Code `_sre` refuses: each pattern's words replaced by opcodes that do not exist.
    refused = {key: (v[0], [999_999] * len(v[1]), *v[2:]) for key, v in entries.items()}
    unlike = {key: (1, 2, 3) for key in entries}
    for garbage in (b"not a marshal table", marshal.dumps(unlike), marshal.dumps(refused), b""):
        table.write_bytes(garbage)
        assert fingerprint(tmp_path, "table") == compiled
        kept = marshal.loads(table.read_bytes())
        assert kept.keys() == entries.keys() and kept != refused


def test_only_a_modules_top_level_and_class_body_patterns_are_kept(tmp_path: Path) -> None:
    script = (
        "from assay import pattern_code\n"
        "pattern_code.install()\n"
        "import re\n"
        "AT_THE_TOP = re.compile('kept[a-z]+at-the-top')\n"
        "class Body:\n"
        "    IN_A_CLASS = re.compile('kept[a-z]+in-a-class')\n"
        "def built():\n"
        "    return re.compile('built(?P<in>a function)')\n"
        "assert built().match('builta function')['in'] == 'a function'\n"
        "assert AT_THE_TOP.fullmatch('keptxat-the-top')\n"
        "pattern_code.save()\n"
    )
    subprocess.run([sys.executable, "-c", script], env=prefix_env(tmp_path), check=True)
    [table] = table_files(tmp_path)
    patterns = {pattern for pattern, _ in marshal.loads(table.read_bytes())}
    assert {"kept[a-z]+at-the-top", "kept[a-z]+in-a-class"} <= patterns
    assert not any(str(p).startswith("built") for p in patterns)


def test_nothing_is_written_where_python_writes_no_bytecode(tmp_path: Path) -> None:
    compiled = fingerprint(tmp_path, "plain")
    assert fingerprint(tmp_path, "table", PYTHONDONTWRITEBYTECODE="1") == compiled
    assert table_files(tmp_path) == []


def test_the_cli_keeps_both_tables_and_prints_the_same(tmp_path: Path) -> None:
    repo = write(tmp_path / "repo", PASSING_PYTEST)
    prefix = tmp_path / "bytecode"
    env = assay_env(PYTHONPYCACHEPREFIX=str(prefix), ASSAY_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    first = assay("verify", "--no-cache", "--sandbox", "none", str(repo), env=env)
    tables = [*table_files(prefix), *prefix.rglob("dataclass-methods.*.marshal")]
    assert len(tables) == 2, tables
    written = [t.stat().st_mtime_ns for t in tables]
    second = assay("verify", "--no-cache", "--sandbox", "none", str(repo), env=env)
    assert first.returncode == second.returncode == 0, first.stdout + first.stderr
    assert first.stdout.splitlines()[-1] == second.stdout.splitlines()[-1] == "VERIFIED"
    assert [t.stat().st_mtime_ns for t in tables] == written

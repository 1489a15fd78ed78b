"""Under `--protect` byte-code is kept under a prefix of the session's, which made Python
compile every module of the standard library a run imports afresh. The prefix is seeded
with links to the interpreter's own byte-code (`assay.stdlib_bytecode`); here a real
interpreter imports through a seeded prefix and compiles nothing of the standard library,
and a standard library inside the tree is never seeded from."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

from assay.stdlib_bytecode import seed_standard_libraries, standard_libraries

STDLIB = sysconfig.get_paths()["stdlib"]
#: Modules of the standard library a test run imports (json, email's parser, difflib).
IMPORTS = "import json, email.parser, difflib, argparse"


def _compiled_under(pycache: Path) -> list[Path]:
    """The byte-code files Python wrote itself under `pycache` for the standard library."""
    here = pycache / STDLIB.lstrip(os.sep)
    return [p for p in here.rglob("*.pyc") if not p.is_symlink()] if here.exists() else []


def _import_with(pycache: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    subprocess.run([sys.executable, "-s", "-c", IMPORTS], env=env, check=True)


def test_an_empty_prefix_compiles_the_standard_library_afresh(tmp_path: Path) -> None:
    # The cost the seed removes, shown for real.
    _import_with(tmp_path / "pycache")
    assert len(_compiled_under(tmp_path / "pycache")) >= 4


def test_a_seeded_prefix_reads_the_interpreters_own_byte_code(tmp_path: Path) -> None:
    pycache = tmp_path / "pycache"
    pycache.mkdir()
    linked = seed_standard_libraries(pycache, [sys.executable], [tmp_path / "tree"], None)
    assert linked > 50
    _import_with(pycache)
    assert _compiled_under(pycache) == []
    name = f"difflib.{sys.implementation.cache_tag}.pyc"
    target = os.readlink(pycache / STDLIB.lstrip(os.sep) / name)
    assert target == os.path.join(STDLIB, "__pycache__", name)


def test_a_standard_library_inside_the_tree_is_not_seeded_from(tmp_path: Path) -> None:
    # A tree that ships an interpreter's layout, its byte-code forged.
    tree = tmp_path / "tree"
    (tree / "bin").mkdir(parents=True)
    (tree / "bin" / "python3").symlink_to(sys.executable)  # where it leads is the host's
    fake = tree / "lib" / "python3.11"
    (fake / "__pycache__").mkdir(parents=True)
    (fake / "os.py").write_text("")
    (fake / "__pycache__" / "os.cpython-311.pyc").write_bytes(b"forged")
    beside = tree / "pyinterp" / "bin"
    beside.mkdir(parents=True)
    (beside / "python3").write_text("")  # not a link: its prefix is the tree's
    found = standard_libraries([str(tree / "bin" / "python3"), str(beside / "python3")], [tree])
    assert found == standard_libraries([sys.executable], [])
    assert str(fake) not in found
    assert standard_libraries([str(tree / "pyinterp" / "bin" / "python3")], [tree]) == []

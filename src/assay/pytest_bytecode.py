"""Test modules' byte-code as pytest's assertion rewriting makes it, for the byte-code
store (`assay.bytecode_store`).

pytest imports test modules and conftest files through its assertion rewriting, and
reads a rewritten module's byte-code from `__pycache__/NAME.<cache tag>-pytest-<version>.pyc`
when it finds one. Since 9.2 that file is a checked-hash `.pyc`: pytest compares the hash
it holds with the source's bytes as it loads it, and gives the code the source's path.
So where a pytest check runs the version of pytest that assay's own environment holds
(and assay's interpreter), assay rewrites each test module itself, with that version's
code and nothing of the project's (pytest's rewriting reads the configuration only for
the assertion pass hook, `enable_assertion_pass_hook`: a project that turns it on is left
to rewrite its own), and the file it places is read under that version's name only. A
rewrite that warns (an assertion on a tuple, always true) is not kept: pytest rewrites
that module itself and warns as it would.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from assay.bytecode_store import checked_pyc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import CodeType

    from assay.evidence import Check

__all__ = ["own_version", "pass_hook_configured", "rewritten", "rewritten_module", "tag"]

#: The first pytest whose rewritten byte-code is checked by the source's hash.
FIRST_HASHED = (9, 2)
#: A test module with more assertions than this is left to pytest to rewrite.
MAX_ASSERTS = 200
#: The configuration setting that changes how pytest rewrites assertions.
PASS_HOOK_SETTING = "enable_assertion_pass_hook"
_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.\d+)?")


def own_version() -> str | None:
    """The version of the pytest in assay's own environment, if it rewrites into
    checked-hash byte-code; None otherwise (or when there is none)."""
    from importlib.util import find_spec

    if find_spec("_pytest") is None:
        return None
    try:
        from _pytest._version import version
    except ImportError:
        return None
    release = _VERSION.fullmatch(str(version))
    if release is None or (int(release[1]), int(release[2])) < FIRST_HASHED:
        return None
    return str(version)


def tag(version: str) -> str:
    """pytest's name for its byte-code of this interpreter (`cpython-311-pytest-9.2.0`)."""
    return f"{sys.implementation.cache_tag}-pytest-{version}"


def rewritten_module(name: str) -> bool:
    """Whether pytest rewrites a module of this file name by default: test modules
    (`test_*.py`, `*_test.py`) and conftest files."""
    return name.endswith(".py") and (
        name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py")
    )


def rewritten(data: bytes, rel: str) -> bytes | None:
    """`data` rewritten and compiled as pytest does it (`_rewrite_test`), as the
    checked-hash `.pyc` pytest writes; None when that failed or warned, or when the module
    has more assertions than `MAX_ASSERTS` (pytest's rewriting takes time that grows
    faster than their number: 500 in one test took 0.9 s here, 20,000 took 100 s; on the
    host nothing else would bound it)."""
    if data.count(b"assert") > MAX_ASSERTS:
        return None
    import ast

    from _pytest.assertion.rewrite import rewrite_asserts

    def compiling() -> CodeType:
        tree = ast.parse(data, filename=rel)
        rewrite_asserts(tree, data, rel, None)
        return compile(tree, rel, "exec", dont_inherit=True)

    return checked_pyc(data, compiling)


#: The files pytest reads its configuration from.
_CONFIG_FILES = frozenset({"pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"})
_CONFIG_MAX_BYTES = 1024 * 1024


def pass_hook_configured(workspace: Path, files: Iterable[str], checks: Sequence[Check]) -> bool:
    """Whether the project may turn the assertion pass hook on: any configuration file
    pytest reads, or a check's arguments or variables, naming the setting (a file too large
    to read, or one that cannot be, counts as naming it)."""
    from assay.untrusted_files import read_untrusted

    setting = PASS_HOOK_SETTING.encode()
    for check in checks:
        words = (*check.argv, *check.env.values())
        if any(PASS_HOOK_SETTING in word for word in words):
            return True
    for rel in files:
        if rel.rpartition("/")[2] not in _CONFIG_FILES:
            continue
        data = read_untrusted(workspace, rel, limit=_CONFIG_MAX_BYTES, single_link=False)
        if not isinstance(data, bytes) or setting in data:
            return data is not None
    return False

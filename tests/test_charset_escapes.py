"""Character set designations (`ESC ( B`) are stripped with colour codes before parsing.

curses' sgr0 for xterm-like terminals is `ESC ( B ESC [ m`, and mypy colours its output
through curses where a CI sets FORCE_COLOR (hatch-vcs's workflow does): the `ESC ( B` that
stayed made `error:(B`, no diagnostic was read, and the note showed the escapes' remains in
place of the file and line mypy named."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.parsers._text import strip_ansi
from tests.cli import verified_json
from tests.repos import workflow, write

COLOURED = (
    "calc/__init__.py:2: \x1b[1m\x1b[31merror:\x1b(B\x1b[m Bad  \x1b(B\x1b[m\x1b[33m[x]\x1b(B\x1b[m"
)


def test_a_charset_designation_is_no_text() -> None:
    assert strip_ansi(COLOURED) == "calc/__init__.py:2: error: Bad  [x]"
    assert strip_ansi("\x1b)0line\x1b(B") == "line"


@pytest.mark.slow
def test_mypy_coloured_by_ci_is_read(tmp_path: Path) -> None:
    ci = workflow("mypy calc").replace("jobs:", "env:\n  FORCE_COLOR: 1\njobs:", 1)
    repo = write(
        tmp_path / "repo",
        {
            "pyproject.toml": "[project]\nname = 'calc'\nversion = '1'\n\n[tool.mypy]\nstrict = true\n",
            "calc/__init__.py": 'def double(x: int) -> int:\n    return "x"\n',
            ".github/workflows/ci.yml": ci,
        },
    )
    report = verified_json(repo, tmp_path / "state")
    assert report["status"] == "FAILED", report["note"]
    (mypy,) = [c for c in report["checks"] if c["name"] == "mypy"]
    assert [(d["file"], d["line"]) for d in mypy["diagnostics"]] == [("calc/__init__.py", 2)]
    assert "(B" not in report["note"], report["note"]

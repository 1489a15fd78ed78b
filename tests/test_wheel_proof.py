"""Installed files against the wheel they came from: where each member goes (site-packages,
`bin/` with the installer's `#!` line, the environment's data directory, headers nowhere
that runs), and the scripts installers write for entry points, compared as syntax."""

from __future__ import annotations

import zipfile
from pathlib import Path

from assay.install_records import Budget
from assay.wheel_proof import differences, entry_script_problem, layout

VENV = ".venv"
SITE = f"{VENV}/lib/python3.11/site-packages"
SCRIPT = "#!python\nimport sys\nprint(sys.argv)\n"
#: As pip writes it for `tool = pkg:main` (its quotes and comment are pip's, not the template's).
ENTRY_SCRIPT = """\
# -*- coding: utf-8 -*-
import re
import sys
from pkg import main
if __name__ == "__main__":
    sys.argv[0] = re.sub(r"(-script\\.pyw|\\.exe)?$", "", sys.argv[0])
    sys.exit(main())
"""


def wheel(tmp_path: Path) -> Path:
    path = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("pkg/__init__.py", "def main():\n    return 0\n")
        archive.writestr("pkg-1.0.data/data/share/pkg/config.txt", "setting = 1\n")
        archive.writestr("pkg-1.0.data/headers/pkg.h", "int x;\n")
        archive.writestr("pkg-1.0.data/scripts/helper", SCRIPT)
        archive.writestr(
            "pkg-1.0.dist-info/entry_points.txt", "[console_scripts]\ntool = pkg:main\n"
        )
        archive.writestr("pkg-1.0.dist-info/RECORD", "")
    return path


def installed(root: Path) -> Path:
    files = {
        f"{SITE}/pkg/__init__.py": "def main():\n    return 0\n",
        f"{SITE}/pkg-1.0.dist-info/entry_points.txt": "[console_scripts]\ntool = pkg:main\n",
        f"{VENV}/share/pkg/config.txt": "setting = 1\n",
        f"{VENV}/bin/helper": f"#!{root}/{VENV}/bin/python\n" + SCRIPT.partition("\n")[2],
        f"{VENV}/bin/tool": f"#!{root}/{VENV}/bin/python3\n" + ENTRY_SCRIPT,
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_what_an_installer_wrote_from_the_wheel_holds(tmp_path: Path) -> None:
    root = installed(tmp_path / "tree")
    built = wheel(tmp_path)
    assert list(differences(root, SITE, VENV, built, Budget())) == []
    expected = layout(built, SITE, VENV)
    assert f"{VENV}/share/pkg/config.txt" in expected.files
    assert expected.scripts == {f"{VENV}/bin/tool": "pkg:main"}
    assert entry_script_problem(root, f"{VENV}/bin/tool", "pkg:main", VENV) is None


def test_a_data_file_or_a_script_body_rewritten_is_named(tmp_path: Path) -> None:
    root = installed(tmp_path / "tree")
    (root / VENV / "share/pkg/config.txt").write_text("setting = 2\n")
    helper = root / VENV / "bin/helper"
    helper.write_text(helper.read_text() + "import os\n")
    found = list(differences(root, SITE, VENV, wheel(tmp_path), Budget()))
    assert found == [
        f"{VENV}/share/pkg/config.txt: its content is not the wheel's",
        f"{VENV}/bin/helper: its content is not the wheel's",
    ]


def test_an_entry_script_that_does_more_or_starts_elsewhere_is_named(tmp_path: Path) -> None:
    root = installed(tmp_path / "tree")
    tool = root / VENV / "bin/tool"
    tool.write_text(tool.read_text() + "import os\n")
    assert "not the script an installer writes" in (
        entry_script_problem(root, f"{VENV}/bin/tool", "pkg:main", VENV) or ""
    )
    tool.write_text("#!/bin/sh\n" + ENTRY_SCRIPT)
    assert "does not start the environment's Python" in (
        entry_script_problem(root, f"{VENV}/bin/tool", "pkg:main", VENV) or ""
    )
    # Deeper than the parser goes: named, not an error out of assay.
    tool.write_text(f"#!{root}/{VENV}/bin/python3\nx = " + "-" * 100_000 + "1\n")
    assert "not the script an installer writes" in (
        entry_script_problem(root, f"{VENV}/bin/tool", "pkg:main", VENV) or ""
    )

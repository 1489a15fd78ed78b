"""Installed files proven against the wheel the package index serves for them.

A distribution the project's own install steps installed (a tool at the version the
project pins, where assay's tools step had installed another) was written while the
project's build code could write the environment too: its install record proves
nothing, since whoever rewrote a file could rewrite the record's line for it. The wheel
of that name and version, fetched afresh from the index by assay's own pip on the host
(no cache the sandbox could write; no code of the project's runs), says what each of its
files must hold.
"""

from __future__ import annotations

import base64
import configparser
import hashlib
import posixpath
import sys
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from assay.install_records import Budget, Reported, file_hash
from assay.untrusted_files import read_untrusted

__all__ = [
    "FETCH_TIMEOUT_S",
    "WheelLayout",
    "differences",
    "entry_script_problem",
    "fetch_wheels",
    "layout",
]

#: How long fetching the wheels may take.
FETCH_TIMEOUT_S = 300.0
#: The largest `#!python` script read (real ones are a few hundred bytes).
SCRIPT_MAX_BYTES = 1024 * 1024
#: What a wheel's record is, and what installers rewrite: never compared.
_RECORDS = ("RECORD", "RECORD.jws", "RECORD.p7s")


def fetch_wheels(requirements: Sequence[str], python_version: str, dest: Path) -> str | None:
    """Download the wheels of `requirements` (`name==version`) for Python `python_version`
    (`3.12`) into `dest`; None when they came, else why not (a sentence)."""
    from assay.environment import EnvPolicy
    from assay.process import run_process

    # Isolated (`-I`), from the download directory: nothing of the directory assay was
    # started in (a project's `pip.py`) can stand in for pip.
    argv = [sys.executable, "-I", "-m", "pip", "download", "-q", "--no-deps"]
    argv += ["--only-binary=:all:", "--no-cache-dir", "--disable-pip-version-check"]
    argv += ["-d", str(dest)]
    if python_version != f"{sys.version_info.major}.{sys.version_info.minor}":
        argv += ["--python-version", python_version]
    result = run_process(
        [*argv, *requirements], cwd=dest, timeout=FETCH_TIMEOUT_S, env_policy=EnvPolicy.INHERIT
    )
    if result.exit_code == 0:
        return None
    said = (result.stderr.text or result.stdout.text or result.start_error or "").strip()
    last = said.splitlines()[-1] if said else f"pip exited {result.exit_code}"
    return f"their wheels could not be fetched from the package index ({last[:300]})"


def differences(root: Path, site: str, venv: str, wheel: Path, budget: Budget) -> Iterator[str]:
    """Each file of `wheel` installed under `root` (in `site`, scripts in `venv/bin`) that
    does not hold what the wheel holds, as a sentence."""
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.infolist():
            if member.is_dir() or member.filename.rsplit("/", 1)[-1] in _RECORDS:
                continue
            installed = _installed_path(member.filename, site, venv)
            if installed is None:
                continue
            data = archive.read(member)
            said = Reported()
            if installed.startswith(f"{venv}/bin/") and data.startswith(b"#!python"):
                # Installers write the environment's interpreter into a `#!python` line.
                data = data.partition(b"\n")[2]
                actual = _script_body_hash(root, installed, budget, said)
            else:
                actual = file_hash(root, installed, "sha256", said, budget)
            if actual != _hash(data):
                yield said[0] if said else f"{installed}: its content is not the wheel's"


@dataclass(frozen=True, slots=True)
class WheelLayout:
    """Where an installer puts what a wheel holds."""

    files: frozenset[str]
    """Each member's installed path (those `_installed_path` places)."""
    scripts: dict[str, str]
    """The scripts an installer writes for its entry points: `bin/NAME` -> `module:attr`."""


def layout(wheel: Path, site: str, venv: str) -> WheelLayout:
    """The installed paths of `wheel`'s members and of the scripts made for its entry points."""
    files: set[str] = set()
    scripts: dict[str, str] = {}
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if (installed := _installed_path(name, site, venv)) is not None:
                files.add(installed)
            top, _, rest = name.partition("/")
            if top.endswith(".dist-info") and rest == "entry_points.txt":
                parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
                parser.optionxform = str  # type: ignore[assignment,method-assign]
                parser.read_string(archive.read(name).decode("utf-8", "replace"))
                for group in ("console_scripts", "gui_scripts"):
                    if parser.has_section(group):
                        for key, value in parser.items(group):
                            scripts[f"{venv}/bin/{key}"] = value.strip()
    return WheelLayout(frozenset(files), scripts)


#: The script pip (distlib's) writes for a `module:attr` entry point, after its `#!` line.
_ENTRY_SCRIPT = """\
import re
import sys
from {module} import {name}
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit({call}())
"""


def entry_script_problem(root: Path, path: str, entry: str, venv: str) -> str | None:
    """Why the installed script at `path` is not the one an installer writes for the entry
    point `entry` (`module:attr`) of the environment `venv`; None when it is. Compared as
    syntax trees: installers differ in quotes and comments, never in what the script does."""
    import ast

    module, _, attr = entry.partition(":")
    attr = attr.split("[", 1)[0].strip()  # `module:attr [extra]`
    data = read_untrusted(root, path, limit=SCRIPT_MAX_BYTES, single_link=False)
    if not isinstance(data, bytes):
        return f"{path}: missing, a link, or unreadable"
    first, _, body = data.partition(b"\n")
    interpreter = first.removeprefix(b"#!").decode("utf-8", "replace").strip()
    if not first.startswith(b"#!") or not _venv_python(interpreter, venv):
        return f"{path}: its first line does not start the environment's Python"
    expected = _ENTRY_SCRIPT.format(module=module.strip(), name=attr.split(".")[0], call=attr)
    try:
        same = ast.dump(ast.parse(body)) == ast.dump(ast.parse(expected))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        same = False
    return None if same else f"{path}: not the script an installer writes for {entry}"


def _venv_python(interpreter: str, venv: str) -> bool:
    """Whether `interpreter` (a `#!` line's) is the environment's own `bin/python*`."""
    head, _, name = interpreter.rpartition("/")
    return head.endswith(f"/{venv}/bin") and name.startswith("python") and " " not in name


def _installed_path(name: str, site: str, venv: str) -> str | None:
    """Where an installer puts the wheel member `name`; None for a C header (under the
    environment's `include/`, which nothing runs)."""
    top, _, rest = name.partition("/")
    if not top.endswith(".data"):
        return f"{site}/{name}"
    scheme, _, path = rest.partition("/")
    if scheme in ("purelib", "platlib"):
        return f"{site}/{path}"
    if scheme == "scripts":
        return f"{venv}/bin/{path}"
    if scheme == "data":
        return posixpath.normpath(f"{venv}/{path}")
    return None


def _script_body_hash(root: Path, rel: str, budget: Budget, said: Reported) -> str | None:
    """The hash of an installed script after its `#!` line (the installer's own)."""
    data = read_untrusted(root, rel, limit=SCRIPT_MAX_BYTES, single_link=False)
    if not isinstance(data, bytes):
        said(rel, "missing, a link, or unreadable")
        return None
    if not data.startswith(b"#!"):
        said(rel, "it does not start with the interpreter line an installer writes")
        return None
    budget.hashed += len(data)
    return _hash(data.partition(b"\n")[2])


def _hash(data: bytes) -> str:
    """`data`'s sha256, as install records write it."""
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")

"""Which build of assay this is: the version and a digest of the code as installed.

Every key assay stores under (verdicts, remembered plans, probed versions) names the assay
that made it, so that a changed assay never answers from what an earlier one concluded.
The version alone does not do that: it is not bumped with every change, and a fix that
turns a forged VERIFIED into FAILED must not be undone by a verdict the code before it
cached (an evaluation scored again after an upgrade read the old verdicts).

- An installed package: its `.dist-info/RECORD` beside it, which lists every file
  installed with its SHA-256, names it in one read.
- Anything else (an editable install, a source checkout on the path): each module's
  path, size and modification time.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from assay._version import __version__

__all__ = ["assay_build", "build_of"]

_PACKAGE = Path(__file__).resolve().parent
_built: str | None = None


def assay_build() -> str:
    """This process's assay: `VERSION+DIGEST` (worked out once)."""
    global _built
    if _built is None:
        _built = build_of(_PACKAGE)
    return _built


def build_of(package: Path) -> str:
    """The build of the assay package in directory `package`."""
    record = _install_record(package)
    digest = hashlib.sha256(record if record is not None else _modules_stamp(package))
    return f"{__version__}+{digest.hexdigest()[:16]}"


def _install_record(package: Path) -> bytes | None:
    """The RECORD of the distribution that installed `package`, when one lists it."""
    site = package.parent
    try:
        names = [n for n in os.listdir(site) if n.startswith("assay-") and n.endswith(".dist-info")]
    except OSError:
        return None
    listed = f"{package.name}/__init__.py,".encode()
    for name in sorted(names):
        try:
            record = (site / name / "RECORD").read_bytes()
        except OSError:
            continue
        if listed in record:  # an editable install's record lists a `.pth`, not the modules
            return record
    return None


def _modules_stamp(package: Path) -> bytes:
    """Every module under `package` as it stands: its path, size and modification time."""
    stamp: list[str] = []
    stack = [str(package)]
    while stack:
        directory = stack.pop()
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name != "__pycache__":
                            stack.append(entry.path)
                    elif entry.name.endswith(".py"):
                        info = entry.stat(follow_symlinks=False)
                        stamp.append(f"{entry.path}\0{info.st_size}\0{info.st_mtime_ns}")
        except OSError as exc:
            stamp.append(f"{directory}\0{exc.errno}")
    return "\n".join(sorted(stamp)).encode()

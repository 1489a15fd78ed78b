"""Whether the tree holds the configuration a stated tox or nox run reads.

An sdist leaves out what its build backend does not package: sqlparse 0.5.1's Makefile
`test: tox` came without a tox.ini, so the `make test` it states cannot run its tests
anywhere, and it outranked the pytest run that could. Such a command is no check of this
tree. Files are read as untrusted (no links, bounded size).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from assay.tools.tox_config import TOX_FILES, tox_source
from assay.untrusted_files import read_untrusted

#: The largest configuration file read to learn whether it configures tox.
MAX_BYTES = 4 * 1024 * 1024
#: Options that name the configuration elsewhere: the tree's own files then say nothing.
_CONFIG_OPTIONS = {
    "tox": ("-c", "--conf", "--configfile", "--root"),
    "nox": ("-f", "--noxfile"),
}


def unconfigured_runner(commands: Iterable[Sequence[str]], root: Path) -> str | None:
    """Why one of `commands` (word lists, launchers stripped) cannot run in `root`: a tox
    with no tox configuration, a nox with no noxfile.py; None when each may."""
    for words in commands:
        head = os.path.basename(words[0]) if words else ""
        if head not in _CONFIG_OPTIONS:
            continue
        if any(w.partition("=")[0] in _CONFIG_OPTIONS[head] for w in words[1:]):
            continue
        if head == "tox" and not _configures_tox(root):
            return (
                "runs tox, and the tree has no tox configuration (tox.ini, [tox:tox], [tool.tox])"
            )
        if head == "nox" and not os.path.lexists(root / "noxfile.py"):
            return "runs nox, and the tree has no noxfile.py"
    return None


def _configures_tox(root: Path) -> bool:
    texts = {}
    for path in TOX_FILES:
        data = read_untrusted(root, path, limit=MAX_BYTES)
        if isinstance(data, bytes):
            texts[path] = data.decode("utf-8", errors="replace")
        elif data is not None:
            return True  # there, but refused (a link, too big): tox may read it; say nothing
    return tox_source(texts) is not None

"""Install steps for a fresh clone (`assay verify --install`): what each ecosystem runs to get
its dependencies, read from the repository's files, never guessed from the network.

Each ecosystem declares its own steps (`assay.tools`); they look at which files exist
and read a manifest as untrusted, and run nothing. The steps are `Check`s that
`verify` runs in the sandbox, with the network on for these steps only.
"""

from __future__ import annotations

from pathlib import Path

from assay.evidence import Check
from assay.tools import install_steps as _declared_steps
from assay.tools.python import (
    PYPROJECT_MAX_BYTES,
    PYTHON_REQUIREMENT_FILES,
    PYTHON_TEST_EXTRAS,
)
from assay.tools.spec import INSTALL_TIMEOUT_S

__all__ = [
    "INSTALL_TIMEOUT_S",
    "PYPROJECT_MAX_BYTES",
    "PYTHON_REQUIREMENT_FILES",
    "PYTHON_TEST_EXTRAS",
    "install_steps",
]


def install_steps(root: Path) -> list[Check]:
    """The install steps for the project at `root`, in order; empty when nothing is needed."""
    return _declared_steps(Path(root))

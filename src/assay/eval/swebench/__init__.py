"""SWE-bench's formats in and out: instances imported as task folders
(`importer.import_instances`), an evaluation reported as SWE-bench's harness reports a
run (`report.swebench_report`).

Names are loaded on first use: the verify stage imports `grading_ids` from here without
loading the importer or the store.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    "import_instances": "assay.eval.swebench.importer",
    **dict.fromkeys(
        ("ImportFailed", "Instance", "read_instances"), "assay.eval.swebench.instances"
    ),
    "swebench_report": "assay.eval.swebench.report",
}

__all__ = ["ImportFailed", "Instance", "import_instances", "read_instances", "swebench_report"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'assay.eval.swebench' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from assay.eval.swebench.importer import import_instances as import_instances
    from assay.eval.swebench.instances import ImportFailed as ImportFailed
    from assay.eval.swebench.instances import Instance as Instance
    from assay.eval.swebench.instances import read_instances as read_instances
    from assay.eval.swebench.report import swebench_report as swebench_report

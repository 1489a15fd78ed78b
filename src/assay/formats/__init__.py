"""Renderings of plans and reports for people and CI systems: plan text, tampering lines,
JUnit XML, SARIF.

Each is loaded on first use (PEP 562): a run that was not asked for JUnit or SARIF
never pays for their import.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing here would cost more than it saves
if TYPE_CHECKING:
    from typing import Any

    from assay.formats.junit import render_junit as render_junit
    from assay.formats.plan_text import render_plan as render_plan
    from assay.formats.report_text import base_line as base_line
    from assay.formats.report_text import tampering_lines as tampering_lines
    from assay.formats.sarif import render_sarif as render_sarif
    from assay.formats.sarif import to_sarif as to_sarif

#: Name -> the module that defines it.
_EXPORTS = {
    "render_junit": "assay.formats.junit",
    "render_plan": "assay.formats.plan_text",
    "base_line": "assay.formats.report_text",
    "tampering_lines": "assay.formats.report_text",
    "render_sarif": "assay.formats.sarif",
    "to_sarif": "assay.formats.sarif",
}

__all__ = [
    "base_line",
    "render_junit",
    "render_plan",
    "render_sarif",
    "tampering_lines",
    "to_sarif",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'assay.formats' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value

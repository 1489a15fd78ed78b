"""Renderings of plans and reports for people and CI systems: plan text, tampering lines,
JUnit XML, SARIF."""

from assay.formats.junit import render_junit as render_junit
from assay.formats.plan_text import render_plan as render_plan
from assay.formats.report_text import tampering_lines as tampering_lines
from assay.formats.sarif import render_sarif as render_sarif
from assay.formats.sarif import to_sarif as to_sarif

__all__ = ["render_junit", "render_plan", "render_sarif", "tampering_lines", "to_sarif"]

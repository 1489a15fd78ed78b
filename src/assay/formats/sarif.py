"""A report's diagnostics as SARIF 2.1.0, for code-scanning UIs: one run per tool."""

from __future__ import annotations

import json
from typing import Any

from assay._version import __version__
from assay.evidence import Diagnostic, Evidence
from assay.report import Report

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"

_LEVELS = {"error": "error", "warning": "warning", "note": "note", "info": "note"}


def to_sarif(report: Report) -> dict[str, Any]:
    """The SARIF log as a JSON-ready dict. Checks without diagnostics add no results."""
    runs: dict[str, dict[str, Any]] = {}
    rule_index: dict[str, dict[str, int]] = {}  # per tool: rule id -> its index in `rules`
    for evidence in report.checks:
        tool = _tool_name(evidence)
        run = runs.setdefault(tool, _new_run(tool, evidence))
        rules = rule_index.setdefault(tool, {})
        for diagnostic in evidence.diagnostics:
            run["results"].append(_result(diagnostic, evidence, run, rules))
        run["invocations"].append(_invocation(evidence))
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": list(runs.values())}


def render_sarif(report: Report) -> str:
    return json.dumps(to_sarif(report), indent=2) + "\n"


def _invocation(evidence: Evidence) -> dict[str, Any]:
    invocation: dict[str, Any] = {
        "executionSuccessful": evidence.verdict.passed,
        "commandLine": " ".join(evidence.check.argv),
        "properties": {
            "verdict": evidence.verdict.value,
            "cause": evidence.cause.value,
            "check": evidence.check.name,
        },
    }
    if evidence.result is not None and evidence.result.exit_code is not None:
        invocation["exitCode"] = evidence.result.exit_code
    return invocation


def _tool_name(evidence: Evidence) -> str:
    if evidence.checker is not None:
        return evidence.checker.tool
    return evidence.check.tool or evidence.check.name


def _new_run(tool: str, evidence: Evidence) -> dict[str, Any]:
    driver: dict[str, Any] = {
        "name": tool,
        "informationUri": "https://github.com/assay",
        "rules": [],
    }
    if evidence.checker is not None:
        driver["version"] = evidence.checker.version
    driver["properties"] = {"reportedBy": f"assay {__version__}"}
    return {"tool": {"driver": driver}, "results": [], "invocations": []}


def _result(
    diagnostic: Diagnostic, evidence: Evidence, run: dict[str, Any], rules: dict[str, int]
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "level": _LEVELS.get(diagnostic.severity, "warning"),
        "message": {"text": diagnostic.message or "(no message)"},
    }
    if diagnostic.code:
        if diagnostic.code not in rules:
            rules[diagnostic.code] = len(rules)
            run["tool"]["driver"]["rules"].append({"id": diagnostic.code})
        result["ruleId"] = diagnostic.code
        result["ruleIndex"] = rules[diagnostic.code]
    if diagnostic.file:
        region: dict[str, int] = {}
        if diagnostic.line and diagnostic.line > 0:
            region["startLine"] = diagnostic.line
            if diagnostic.column and diagnostic.column > 0:
                region["startColumn"] = diagnostic.column
        location: dict[str, Any] = {"artifactLocation": {"uri": _uri(diagnostic.file)}}
        if region:
            location["region"] = region
        result["locations"] = [{"physicalLocation": location}]
    result["properties"] = {"check": evidence.check.name, "kind": evidence.check.kind.value}
    return result


def _uri(path: str) -> str:
    """A relative URI with forward slashes (SARIF viewers resolve it against the repository)."""
    path = path.replace("\\", "/")
    return path.removeprefix("./")

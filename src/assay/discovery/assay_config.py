"""Detector 1: assay's own configuration, whose commands outrank everything discovered."""

from __future__ import annotations

from dataclasses import dataclass

from assay.config import AssayConfig, ConfigError, from_assay_toml, from_pyproject
from assay.discovery.command_lines import recognise
from assay.discovery.files import RepoFiles, UnreadableFile
from assay.discovery.model import (
    Candidate,
    DetectorReport,
    Ecosystem,
    Origin,
    Source,
    report,
)
from assay.tools import SHELL

NAME = "assay-config"


@dataclass(frozen=True, slots=True)
class ConfigResult:
    """The configuration found (if any), the detector's report, and a configuration error."""

    config: AssayConfig | None
    report: DetectorReport
    error: str | None
    """Set when assay's configuration exists but is malformed: a usage error, nothing runs."""


def detect(files: RepoFiles) -> ConfigResult:
    notes: list[str] = []
    try:
        assay_toml = files.read_text("assay.toml")
        config = from_assay_toml(assay_toml) if assay_toml is not None else None
        pyproject_config = _pyproject_config(files)
    except (ConfigError, UnreadableFile) as exc:
        message = str(exc)
        return ConfigResult(None, report(NAME, errors=[message]), message)
    if config is not None and pyproject_config is not None:
        notes.append("assay.toml takes precedence; [tool.assay] in pyproject.toml is ignored")
    config = config or pyproject_config
    if config is None:
        return ConfigResult(None, report(NAME), None)
    return ConfigResult(config, report(NAME, candidates(config), notes=notes), None)


def _pyproject_config(files: RepoFiles) -> AssayConfig | None:
    text = files.read_text("pyproject.toml")
    if text is None or "assay" not in text:
        return None  # cheap skip; a pyproject without the word cannot hold [tool.assay]
    try:
        return from_pyproject(text)
    except ConfigError:
        if "[tool.assay" in text:
            raise
        return None  # malformed pyproject without assay config: the Python detector reports it


def candidates(config: AssayConfig) -> list[Candidate]:
    """Explicit commands as candidates; the tool is recognised from the command when not given."""
    found = []
    for command in config.commands:
        recognised = recognise(command.argv)
        tool = command.tool or (recognised.tool if recognised else SHELL)
        name = None
        if recognised is not None and tool in (recognised.tool, recognised.name):
            # A check name (`tool = "go-test"`) names the tool it is a check of.
            tool, name = recognised.tool, recognised.name
        found.append(
            Candidate(
                kind=command.kind,
                argv=command.argv,
                tool=tool,
                ecosystem=recognised.ecosystem if recognised else Ecosystem.GENERIC,
                origin=Origin.ASSAY_CONFIG,
                source=Source(config.source, command.line),
                reason=f"configured in {config.source}",
                cwd=command.cwd,
                env=command.env,
                timeout_s=command.timeout_s,
                cost=0,
                name=name if name != tool else None,
            )
        )
    return found

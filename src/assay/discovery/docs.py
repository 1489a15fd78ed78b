"""Detector 7: commands in README / CONTRIBUTING fenced code blocks, as a last resort."""

from __future__ import annotations

import re

from assay.discovery.command_lines import candidate_from, recognise_line
from assay.discovery.files import RepoFiles
from assay.discovery.model import (
    Candidate,
    DetectorReport,
    Origin,
    ProjectEnv,
    Source,
    report,
)

NAME = "docs"

DOC_FILES = (
    "CONTRIBUTING.md",
    ".github/CONTRIBUTING.md",
    "docs/CONTRIBUTING.md",
    "README.md",
    "README.rst",
    "README",
    "DEVELOPMENT.md",
    "HACKING.md",
)

_FENCE = re.compile(r"^\s*(```|~~~)\s*([\w+-]*)")
_SHELL_LANGS = frozenset({"", "sh", "bash", "shell", "console", "shell-session", "zsh", "text"})
_PROMPT = re.compile(r"^\s*(\$|>|%|#)\s+")


def code_lines(text: str) -> list[tuple[int, str]]:
    """Numbered lines inside shell-like fenced blocks and rst literal blocks. Pure."""
    lines: list[tuple[int, str]] = []
    fence: str | None = None
    shell = False
    rst_block = False
    for number, line in enumerate(text.splitlines(), start=1):
        match = _FENCE.match(line)
        if match:
            if fence is None:
                fence, shell = match.group(1), match.group(2).lower() in _SHELL_LANGS
            elif match.group(1) == fence:
                fence = None
            continue
        if fence is not None:
            if shell:
                lines.append((number, _PROMPT.sub("", line).strip()))
            continue
        if line.rstrip().endswith("::") or line.lstrip().startswith(".. code"):
            rst_block = True
            continue
        if rst_block:
            if line.startswith(("    ", "\t")):
                lines.append((number, _PROMPT.sub("", line).strip()))
            elif line.strip():
                rst_block = False
    return lines


def doc_candidates(text: str, path: str, env: ProjectEnv) -> list[Candidate]:
    """Check commands written in the document's code blocks. Pure."""
    return [
        candidate_from(hit, env, Origin.DOCS, Source(path, number), f"{path} says to run: {line}")
        for number, line in code_lines(text)
        for hit in recognise_line(line)
    ]


def detect(files: RepoFiles, env: ProjectEnv) -> DetectorReport:
    texts, errors = files.read_texts(DOC_FILES)
    found = [c for path, text in texts.items() for c in doc_candidates(text, path, env)]
    return report(NAME, found, errors=errors)

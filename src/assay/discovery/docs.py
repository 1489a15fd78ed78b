"""Detector 7: commands in README / CONTRIBUTING fenced code blocks, as a last resort."""

from __future__ import annotations

import re

from assay.discovery.command_lines import candidate_from, recognise_line
from assay.discovery.files import RepoFiles
from assay.discovery.model import (
    Candidate,
    DetectorReport,
    Dropped,
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
        for hit in recognise_line(line, shell=True)
    ]


def detect(files: RepoFiles, env: ProjectEnv) -> DetectorReport:
    texts, errors = files.read_texts(DOC_FILES)
    found: list[Candidate] = []
    dropped: list[Dropped] = []
    for candidate in (c for path, text in texts.items() for c in doc_candidates(text, path, env)):
        missing = _absent_targets(candidate, files)
        if missing is None:
            found.append(candidate)
        else:
            why = (
                f"it names {missing}, which this tree lacks: an example of the tool's use "
                "on someone's code, not the project's own check"
            )
            dropped.append(Dropped(" ".join(candidate.argv), candidate.source, why))
    return report(NAME, found, dropped=dropped, errors=errors)


#: Python tools whose words after their options are paths to check (ruff's first is its
#: subcommand).
_PATH_TAKING = frozenset({"pytest", "mypy", "flake8", "pylint", "pyright", "ruff", "black"})


def _absent_targets(candidate: Candidate, files: RepoFiles) -> str | None:
    """The path a documented command names when every path it names is absent from the
    tree (mccabe's README: `flake8 --max-complexity 10 coolproject`); None otherwise. A
    word after an option is taken as the option's value, not as a path."""
    words = candidate.stated[0] if candidate.stated else ()
    at = next((i for i, w in enumerate(words) if w.rsplit("/", 1)[-1] in _PATH_TAKING), None)
    if at is None:
        return None
    args = words[at + 1 :]
    if words[at].endswith("ruff") and args and not args[0].startswith("-"):
        args = args[1:]
    paths = [
        a
        for i, a in enumerate(args)
        if not a.startswith("-")
        and not (i > 0 and args[i - 1].startswith("-") and "=" not in args[i - 1])
        and not a.isdigit()
        and not any(c in a for c in "*?[{$")
    ]
    absent = [p for p in paths if not files.has(p.split("::")[0].rstrip("/") or ".")]
    return absent[0] if paths and len(absent) == len(paths) else None
